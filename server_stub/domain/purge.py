"""DELETE /v1/sessions/{id}: ADR-0050 §3–§7 in one transaction, then the byte deletes.

The active-run check and the purge share one write transaction in which the session row is
locked (SQLite: `BEGIN IMMEDIATE`; PostgreSQL: `SELECT … FOR UPDATE`, also taken by run
start), so a run cannot start between them; a run start that loses the race finds no row and
answers the plain 404. Artifact locators are copied into the outbox in the same transaction;
byte deletes happen after the commit (a rollback must never leave metadata pointing at
missing bytes), and each success removes its outbox row.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from sqlalchemy import bindparam, delete, func, insert, or_, select, update
from sqlalchemy.orm import Session
from sqlalchemy.sql.dml import Delete, Update
from sqlalchemy.sql.elements import BindParameter
from sqlalchemy.sql.expression import TableClause

from server_stub.db.engine import Database
from server_stub.db.models import (
    ApprovalRow,
    ArtifactRow,
    CheckpointRow,
    ConsolidationRecordRow,
    DeletionOutboxRow,
    DeletionTombstoneRow,
    EventRow,
    KnowledgeDocumentRow,
    MemoryRejectionRow,
    MemoryRow,
    MemoryWordRow,
    ObjectIntentRow,
    ProjectionRow,
    RecallTraceItemRow,
    RecallTraceRow,
    RunRow,
    SessionRow,
    SkillRevisionRow,
    ToolInvocationRow,
)
from server_stub.domain import timestamps
from server_stub.domain.history import (
    ACTIVE_STATUSES,
    bump_version,
    lock_session,
    owned,
    release_intents,
    tombstone_of,
)
from server_stub.edge.auth import Principal
from server_stub.storage.objectstore import ObjectStore, ObjectStoreUnavailable

log = logging.getLogger(__name__)


@dataclass
class DeleteOutcome:
    """`deleted` (now or before), `not_found`, or `active` (with the run id)."""

    kind: str
    active_run_id: str | None = None
    locators: list[str] = field(default_factory=list)
    queued: int = 0  # outbox rows this delete added (artifacts and released intents)
    purged: bool = False  # this call removed the graph (not a repeat answered by the tombstone)


def delete_session(db: Database, who: Principal, session_id: str) -> DeleteOutcome:
    """The whole transactional part of a delete."""
    with db.write() as s:
        row = lock_session(s, session_id)
        if not owned(row, who.tenant, who.principal):
            # Read for a foreign live session too: both 404s execute the same statements.
            tomb = tombstone_of(s, session_id)
            mine = tomb is not None and (tomb.tenant, tomb.principal) == (who.tenant, who.principal)
            return DeleteOutcome("deleted" if row is None and mine else "not_found")
        assert row is not None
        conn = s.connection()
        sid = {"sid": session_id}
        active = row.active_run_id or conn.execute(_ACTIVE_RUN, sid).scalar()
        if active is not None:
            return DeleteOutcome("active", active_run_id=active)

        locators = list(conn.execute(_LOCATORS, sid).scalars())
        # Bytes a crashed or cancelled run may have written without an artifact row: their
        # intents go to the outbox beside the artifacts' locators.
        released = release_intents(s, session_id)
        purge_graph(s, session_id)
        now = timestamps.now()
        if locators:
            conn.execute(
                _OUTBOX,
                [
                    {"session_id": session_id, "locator": loc, "enqueued_at": now}
                    for loc in locators
                ],
            )
        conn.execute(_SESSION, sid)
        conn.execute(
            _TOMBSTONE,
            {
                "session_id": session_id,
                "tenant": row.tenant,
                "principal": row.principal,
                "deleted_at": now,
            },
        )
        bump_version(s, row.tenant, row.principal)
        return DeleteOutcome(
            "deleted", locators=locators, queued=len(locators) + released, purged=True
        )


# The purge's statements are built once: constructing a score of Core statements per request
# costs several times what SQLite needs to run them. They run on the session's connection,
# as plain Core.
_SID: BindParameter[str] = bindparam("sid")
_ACTIVE_RUN = (
    select(RunRow.id)
    .where(RunRow.session_id == _SID, RunRow.status.in_(sorted(ACTIVE_STATUSES)))
    .limit(1)
)
_LOCATORS = select(ArtifactRow.locator).where(ArtifactRow.session_id == _SID)
_LOCK_MEMORIES = (  # in id order, like the agent's recall: the two cannot deadlock
    select(MemoryRow.id)
    .where(MemoryRow.source_session_id == _SID)
    .order_by(MemoryRow.id)
    .with_for_update()
)
_TRACE_IDS = (
    select(RecallTraceRow.id)
    .where(RecallTraceRow.session_id == _SID)
    .union(select(RecallTraceItemRow.trace_id).where(RecallTraceItemRow.memory_session_id == _SID))
)
_TRACE_ITEMS_BY_TRACE = delete(RecallTraceItemRow).where(
    RecallTraceItemRow.trace_id.in_(bindparam("trace_ids", expanding=True))
)
_TRACES_BY_ID = delete(RecallTraceRow).where(
    RecallTraceRow.id.in_(bindparam("trace_ids", expanding=True))
)
_DETACH_SKILLS = (
    update(SkillRevisionRow)
    .where(SkillRevisionRow.authoring_session_id == _SID)
    .values(authoring_run_id=None, authoring_session_id=None)
)
# Children before parents (foreign keys are enforced on SQLite).
_DELETES = (
    delete(MemoryRejectionRow).where(
        or_(MemoryRejectionRow.session_id == _SID, MemoryRejectionRow.memory_session_id == _SID)
    ),
    delete(ConsolidationRecordRow).where(ConsolidationRecordRow.source_session_id == _SID),
    delete(KnowledgeDocumentRow).where(KnowledgeDocumentRow.source_session_id == _SID),
    _DETACH_SKILLS,
    delete(ToolInvocationRow).where(ToolInvocationRow.session_id == _SID),
    delete(ApprovalRow).where(ApprovalRow.session_id == _SID),
    delete(CheckpointRow).where(CheckpointRow.session_id == _SID),
    delete(ProjectionRow).where(ProjectionRow.session_id == _SID),
    delete(MemoryWordRow).where(MemoryWordRow.memory_session_id == _SID),
    delete(MemoryRow).where(MemoryRow.source_session_id == _SID),
    delete(EventRow).where(EventRow.session_id == _SID),
    delete(ArtifactRow).where(ArtifactRow.session_id == _SID),
    delete(RunRow).where(RunRow.session_id == _SID),
)
_OUTBOX = insert(DeletionOutboxRow)
_SESSION = delete(SessionRow).where(SessionRow.id == _SID)
_TOMBSTONE = insert(DeletionTombstoneRow)


#: Every table a purge deletes from or rewrites, read off the purge's own statements (so the
#: list cannot drift from them), plus the intents and the outbox, whose rows leave with the
#: byte deletes. The background scrub vacuums these on PostgreSQL; the residue audit
#: (`server_stub.edge.control`) must count rows in each of them.
def _table_of(stmt: Delete | Update) -> str:
    table = stmt.table
    assert isinstance(table, TableClause)
    return table.name


PURGED_TABLES: tuple[str, ...] = tuple(
    sorted(
        {_table_of(s) for s in (*_DELETES, _TRACE_ITEMS_BY_TRACE, _TRACES_BY_ID, _SESSION)}
        | {ObjectIntentRow.__tablename__, DeletionOutboxRow.__tablename__}
    )
)


def purge_graph(s: Session, session_id: str) -> None:
    """Remove every row that refers to the session, children before parents."""
    conn = s.connection()
    sid = {"sid": session_id}
    if s.get_bind().dialect.name == "postgresql":
        # Lock the memories being removed before looking for what points at them: a run of
        # another session recalling one of them (a recall-trace item) could otherwise commit
        # between that look and the memory delete, and the delete failed on the foreign key
        # (a 500, found by the SIGKILL crash test). Writers that reference a memory take a
        # key-share lock on it first (server_stub.domain.agent), so one side waits for the other.
        conn.execute(_LOCK_MEMORIES, sid)
    trace_ids = list(conn.execute(_TRACE_IDS, sid).scalars())
    if trace_ids:
        conn.execute(_TRACE_ITEMS_BY_TRACE, {"trace_ids": trace_ids})
        conn.execute(_TRACES_BY_ID, {"trace_ids": trace_ids})
    for stmt in _DELETES:
        conn.execute(stmt, sid)


#: A queued byte delete this old, or failed this often, is logged as a warning (not info)
#: at every attempt: the outbox window must stay finite in practice (CONTRACT §9.2).
OUTBOX_WARN_AGE_SECONDS = 3600.0
OUTBOX_WARN_ATTEMPTS = 5


def flush_outbox(db: Database, store: ObjectStore, session_id: str | None = None) -> int:
    """Try every queued byte delete (of one session, or all); return how many remain queued.

    A failure stays queued with its attempt count, last error and time, for the control
    plane's `GET /_stub/outbox` and for the log, which warns once an entry is old or has
    failed often.
    """
    with db.read() as s:
        stmt = select(
            DeletionOutboxRow.id,
            DeletionOutboxRow.locator,
            DeletionOutboxRow.attempts,
            DeletionOutboxRow.enqueued_at,
        ).order_by(DeletionOutboxRow.id)
        if session_id is not None:
            stmt = stmt.where(DeletionOutboxRow.session_id == session_id)
        queued = list(s.execute(stmt))
    failed: dict[int, str] = {}
    done: list[int] = []
    for row_id, locator, attempts, enqueued_at in queued:
        try:
            store.delete(locator)
        except (ObjectStoreUnavailable, OSError, ValueError) as exc:
            error = f"{type(exc).__name__}: {exc}"[:300]
            failed[row_id] = error
            age = timestamps.age_seconds(enqueued_at)
            stuck = attempts + 1 >= OUTBOX_WARN_ATTEMPTS or age >= OUTBOX_WARN_AGE_SECONDS
            log.log(
                logging.WARNING if stuck else logging.INFO,
                "byte delete of %s failed (attempt %d, queued %.0f s ago), stays queued: %s",
                locator,
                attempts + 1,
                age,
                error,
            )
        else:
            done.append(row_id)
    if done or failed:
        now = timestamps.now()
        with db.write() as s:
            if done:
                s.execute(delete(DeletionOutboxRow).where(DeletionOutboxRow.id.in_(done)))
            for row_id, error in failed.items():
                s.execute(
                    update(DeletionOutboxRow)
                    .where(DeletionOutboxRow.id == row_id)
                    .values(
                        attempts=DeletionOutboxRow.attempts + 1,
                        last_error=error,
                        last_attempt_at=now,
                    )
                )
    with db.read() as s:
        count_stmt = select(func.count()).select_from(DeletionOutboxRow)
        if session_id is not None:
            count_stmt = count_stmt.where(DeletionOutboxRow.session_id == session_id)
        return int(s.scalar(count_stmt) or 0)


@dataclass(frozen=True)
class OutboxEntry:
    """One queued byte delete, as the control plane shows it (ids and errors, no content)."""

    session_id: str
    locator: str
    attempts: int
    enqueued_at: str
    age_seconds: float
    last_error: str | None
    last_attempt_at: str | None


def outbox_entries(db: Database) -> list[OutboxEntry]:
    """Every queued byte delete, oldest first."""
    with db.read() as s:
        rows = s.scalars(select(DeletionOutboxRow).order_by(DeletionOutboxRow.id))
        return [
            OutboxEntry(
                session_id=row.session_id,
                locator=row.locator,
                attempts=row.attempts,
                enqueued_at=row.enqueued_at,
                age_seconds=round(timestamps.age_seconds(row.enqueued_at), 3),
                last_error=row.last_error,
                last_attempt_at=row.last_attempt_at,
            )
            for row in rows
        ]
