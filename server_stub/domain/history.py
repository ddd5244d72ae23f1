"""Data functions over the conversation graph; they take a Session and never commit.

Appending an event is the only way history grows: it assigns the next per-session sequence,
dates the event by the one clock (`server_stub.domain.clock`: never going back), advances the
session's `updated_at` (ADR-0050 §2) and bumps the owner's index version, which is the
source of the session list's ETag.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any

from sqlalchemy import Insert, bindparam, delete, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from server_stub.db.engine import CHANGED_INDEXES
from server_stub.db.models import (
    DeletionOutboxRow,
    DeletionTombstoneRow,
    EventRow,
    ObjectIntentRow,
    PrincipalVersion,
    RunLeaseRow,
    RunRow,
    SessionRow,
)
from server_stub.domain import clock, indexlease, timestamps
from server_stub.domain.bus import ORIGIN_KEY, announce_index, announce_run
from server_stub.domain.legacytitles import DerivedTitles, Missing
from server_stub.domain.titles import title_from_message

ACTIVE_STATUSES = frozenset({"queued", "running", "waiting_for_approval"})
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
TERMINAL_EVENTS = {
    "completed": "run.completed",
    "failed": "run.failed",
    "cancelled": "run.cancelled",
}


def bump_version(s: Session, tenant: str, principal: str) -> None:
    """Advance the principal's index version (an upsert, safe under concurrency).

    Its watches (CONTRACT §9.1) are woken once the transaction commits. Called last in a
    transaction, so on PostgreSQL the version row lock is always taken after
    the session row lock (one lock order, no deadlock).
    """
    s.flush()  # the statement below runs on the connection: no autoflush does it
    dialect = s.get_bind().dialect.name
    if dialect == "postgresql":  # no other process may trust an older version after commit
        indexlease.guard(s, str(s.info.get(ORIGIN_KEY, "")))
    s.connection().execute(bump_statement(dialect), {"tenant": tenant, "principal": principal})
    announce_index(s, tenant, principal)
    # Held index watches of the principal wake after the commit (`Database.index_listener`).
    s.info.setdefault(CHANGED_INDEXES, set()).add((tenant, principal))


@functools.cache
def bump_statement(dialect: str) -> Insert:
    """The version upsert, built once per dialect: every event append runs it, and building
    it each time cost more than SQLite took to execute it."""
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    stmt = insert(PrincipalVersion).values(
        tenant=bindparam("tenant"), principal=bindparam("principal"), version=1
    )
    return stmt.on_conflict_do_update(
        index_elements=["tenant", "principal"],
        set_={"version": PrincipalVersion.version + 1},
    )


def index_version(s: Session, tenant: str, principal: str) -> int:
    """The principal's current index version (0 before any change)."""
    value = s.connection().execute(VERSION_OF, {"tenant": tenant, "principal": principal}).scalar()
    return int(value or 0)


# Built once: the first page of every list request reads it (on PostgreSQL compiled for
# the loop reader, `routes.sessions`).
VERSION_OF = select(PrincipalVersion.version).where(
    PrincipalVersion.tenant == bindparam("tenant"),
    PrincipalVersion.principal == bindparam("principal"),
)


def etag_for(epoch: str, tenant: str, principal: str, version: int) -> str:
    """The first page's ETag: a function of the principal's version only (not of `limit`)."""
    digest = hashlib.sha256(f"{epoch}\0{tenant}\0{principal}\0{version}".encode()).hexdigest()
    return f'"{digest[:32]}"'


def lock_session(s: Session, session_id: str) -> SessionRow | None:
    """The session row, locked for update on PostgreSQL (SQLite already holds the writer)."""
    stmt = select(SessionRow).where(SessionRow.id == session_id)
    if s.get_bind().dialect.name == "postgresql":
        stmt = stmt.with_for_update()
    # A row loaded earlier in this transaction must not shadow what the lock read.
    return s.scalars(stmt.execution_options(populate_existing=True)).one_or_none()


def owned(row: SessionRow | None, tenant: str, principal: str) -> bool:
    """Whether the caller owns `row`."""
    return row is not None and row.tenant == tenant and row.principal == principal


def tombstone_of(s: Session, session_id: str) -> DeletionTombstoneRow | None:
    """The deletion tombstone of `session_id`, if it was deleted."""
    return s.get(DeletionTombstoneRow, session_id)


def append_event(
    s: Session,
    session: SessionRow,
    run_id: str | None,
    type_: str,
    data: dict[str, Any],
    at: str | None = None,
) -> EventRow:
    """Append one event to a locked session and advance its activity.

    Without `at`, the event is dated by the one clock (`clock.activity_time`): after every
    activity of the owner, so the session comes to the top of the index. An explicit `at`
    (the control plane's scripted history) is kept, moved up to the session's last event
    when it is earlier."""
    if at is None:
        created = clock.activity_time(s, session.tenant, session.principal, session.last_event_at)
    else:
        created = at
        if session.last_event_at is not None and created < session.last_event_at:
            created = session.last_event_at
    row = add_event(s, session, run_id, type_, data, created)
    s.flush()
    if run_id is not None:
        announce_run(s, run_id)
    bump_version(s, session.tenant, session.principal)
    return row


def add_event(
    s: Session, session: SessionRow, run_id: str | None, type_: str, data: dict[str, Any], at: str
) -> EventRow:
    """The next event of the session, at `at` (the caller keeps events in time order), and
    the session's activity advanced to it. No flush and no version bump: `append_event` adds
    both; the demo seed, writing a whole history in one transaction, bumps once at the end."""
    session.last_sequence += 1
    row = EventRow(
        session_id=session.id,
        sequence=session.last_sequence,
        run_id=run_id,
        type=type_,
        created_at=at,
        data=data,
    )
    s.add(row)
    session.last_event_at = at
    if at > session.updated_at:
        session.updated_at = at
    return row


def first_user_message(s: Session, session_id: str) -> dict[str, Any] | None:
    """The data of the session's first `message.user` event, if any."""
    data = s.scalar(
        select(EventRow.data)
        .where(EventRow.session_id == session_id, EventRow.type == "message.user")
        .order_by(EventRow.sequence)
        .limit(1)
    )
    return data if isinstance(data, dict) else None


def derived_title(s: Session, session_id: str, titles: DerivedTitles | None = None) -> str | None:
    """A legacy session's title, derived from its immutable first user message (the title
    rule); remembered in `titles` once that message exists (`server_stub.domain.legacytitles`)."""
    if titles is not None:
        known = titles.get(session_id)
        if not isinstance(known, Missing):
            return known
        titles.derivations += 1
    message = first_user_message(s, session_id)
    title = title_from_message(message) if message else None
    if titles is not None and message is not None:
        titles.put(session_id, title)
    return title


def derived_titles(
    s: Session, sessions: list[SessionRow], titles: DerivedTitles | None = None
) -> dict[str, str | None]:
    """Titles for legacy sessions, derived from their immutable first user message."""
    return {
        row.id: derived_title(s, row.id, titles) for row in sessions if row.title_state == "legacy"
    }


def session_view(row: SessionRow, title: str | None = None) -> dict[str, Any]:
    """SessionView JSON."""
    return {
        "id": row.id,
        "title": row.title if row.title_state != "legacy" else title,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
        "active_run_id": row.active_run_id,
        "last_run_id": row.last_run_id,
    }


def session_views(
    s: Session, rows: list[SessionRow], titles: DerivedTitles | None = None
) -> list[dict[str, Any]]:
    """SessionViews of several rows, deriving legacy titles."""
    derived = derived_titles(s, rows, titles)
    return [session_view(r, derived.get(r.id)) for r in rows]


def run_view(row: RunRow) -> dict[str, Any]:
    """RunView JSON."""
    return {
        "id": row.id,
        "session_id": row.session_id,
        "status": row.status,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
        "completed_at": row.completed_at,
        "cancel_requested": row.cancel_requested,
    }


def event_view(row: EventRow) -> dict[str, Any]:
    """Event JSON."""
    return {
        "session_id": row.session_id,
        "run_id": row.run_id,
        "sequence": row.sequence,
        "type": row.type,
        "created_at": row.created_at,
        "data": row.data,
    }


def owned_run(s: Session, run_id: str, tenant: str, principal: str) -> RunRow | None:
    """The caller's run (live sessions only: runs vanish with their session)."""
    row = s.get(RunRow, run_id)
    if row is None or row.tenant != tenant or row.principal != principal:
        return None
    return row


def finish_run(
    s: Session,
    session: SessionRow,
    run: RunRow,
    status: str,
    data: dict[str, Any] | None = None,
) -> EventRow:
    """Commit-together step: terminal status, terminal event, session pointers, version."""
    event = append_event(s, session, run.id, TERMINAL_EVENTS[status], data or {})
    run.status = status
    run.updated_at = event.created_at
    run.completed_at = event.created_at
    if session.active_run_id == run.id:
        session.active_run_id = None
    if session.last_run_started_at is None or run.created_at >= session.last_run_started_at:
        session.last_run_id = run.id
        session.last_run_started_at = run.created_at
    s.execute(_RELEASE_LEASE, {"run_id": run.id})  # the run's process no longer owns it
    bump_version(s, session.tenant, session.principal)
    release_intents(s, run.session_id, run_id=run.id)
    return event


def release_intents(s: Session, session_id: str, *, run_id: str | None = None) -> int:
    """Hand the unclaimed byte-write intents of a run (or of a whole session) to the deletion
    outbox, in the caller's transaction; returns how many.

    An intent still here when its run ends (or its session is purged) names bytes that were,
    or may have been, written without an artifact row to own them (a cancel or a crash
    between the write and the row): they must go, by the same retried path as a purge's.
    """
    query = select(ObjectIntentRow.locator).where(ObjectIntentRow.session_id == session_id)
    if run_id is not None:
        query = query.where(ObjectIntentRow.run_id == run_id)
    locators = list(s.scalars(query))
    if not locators:
        return 0
    now = timestamps.now()
    s.add_all(
        DeletionOutboxRow(session_id=session_id, locator=loc, enqueued_at=now, attempts=0)
        for loc in locators
    )
    s.execute(delete(ObjectIntentRow).where(ObjectIntentRow.locator.in_(locators)))
    return len(locators)


_RELEASE_LEASE = delete(RunLeaseRow).where(RunLeaseRow.run_id == bindparam("run_id"))


def set_run_status(s: Session, run: RunRow, status: str) -> None:
    """A non-terminal status change (its time never before the run's last change)."""
    run.status = status
    run.updated_at = max(clock.database_now(s), run.updated_at)


def request_cancel(s: Session, run_id: str) -> None:
    """Set `cancel_requested` on a run."""
    s.execute(update(RunRow).where(RunRow.id == run_id).values(cancel_requested=True))
    announce_run(s, run_id)  # the process executing it may be another one
