"""DELETE /v1/sessions/{id}: ADR-0050 §3–§7 in one transaction, then the byte deletes.

The active-run check and the purge share one write transaction in which the session row is
locked (SQLite: `BEGIN IMMEDIATE`; PostgreSQL: `SELECT … FOR UPDATE`, also taken by run
start), so a run cannot start between them; a run start that loses the race finds no row and
answers the plain 404. Artifact locators are copied into the outbox in the same transaction;
byte deletes happen after the commit (a rollback must never leave metadata pointing at
missing bytes), and each success removes its outbox row.

The purge is set-based and runs as few statements as each backend needs (decision 0196):
one `DELETE … WHERE <column> = :sid` per table, built once below and compiled once per
dialect. On SQLite they run one after another on the driver's cursor (an in-process call
each; SQLAlchemy's execution machinery around each cost more than SQLite's work). On
PostgreSQL, where every statement is a round trip, they are the sub-statements of one
statement (data-modifying CTEs: one snapshot, foreign keys checked at its end), preceded by
the row lock and, in a statement of its own, the lock on the memories being removed.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    ClauseElement,
    bindparam,
    delete,
    exists,
    func,
    insert,
    literal,
    literal_column,
    or_,
    select,
    update,
)
from sqlalchemy import exc as sa_exc
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session
from sqlalchemy.sql.dml import Delete, Update
from sqlalchemy.sql.elements import BindParameter
from sqlalchemy.sql.expression import TableClause

from server_stub.db.engine import CHANGED_INDEXES, Database, LockedNow
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
    ServerMeta,
    SessionRow,
    SkillRevisionRow,
    ToolInvocationRow,
)
from server_stub.domain import indexlease, timestamps
from server_stub.domain.bus import CHANNEL, ORIGIN_KEY, index_payload
from server_stub.domain.history import ACTIVE_STATUSES, bump_statement
from server_stub.edge.auth import Principal
from server_stub.storage.objectstore import ObjectStore, ObjectStoreUnavailable

log = logging.getLogger(__name__)


@dataclass
class DeleteOutcome:
    """`deleted` (now or before), `not_found`, or `active` (with the run id)."""

    kind: str
    active_run_id: str | None = None
    queued: int = 0  # outbox rows this delete added (artifacts and released intents)
    purged: bool = False  # this call removed the graph (not a repeat answered by the tombstone)


def delete_session(db: Database, who: Principal, session_id: str) -> DeleteOutcome:
    """The whole transactional part of a delete."""
    with db.write() as s:
        conn = s.connection()
        params = {"sid": session_id}
        if db.is_sqlite:
            found = _delete_on_sqlite(conn, who, params)
            assert found is not None
            outcome = found
        else:
            outcome = _delete_on_postgresql(s, conn, who, params)
        if outcome.purged:  # held index watches wake after the commit (`Database.write`)
            s.info.setdefault(CHANGED_INDEXES, set()).add((who.tenant, who.principal))
        return outcome


#: A session with at most this many events is purged on the event loop when no other writer
#: is there (`delete_now`): its whole transaction costs less than the hop to a worker thread.
SMALL_ON_LOOP = 64


def delete_now(db: Database, who: Principal, session_id: str) -> DeleteOutcome | None:
    """SQLite: `delete_session` on the calling thread (the loop's), for a session of at most
    `SMALL_ON_LOOP` events, when the writers' locks are free at once; None when it belongs
    on a worker thread (a writer is there, or the session is bigger)."""
    try:
        with db.write_now() as conn:
            outcome = _delete_on_sqlite(conn, who, {"sid": session_id}, SMALL_ON_LOOP)
    except LockedNow:
        return None
    if outcome is not None and outcome.purged:  # committed: held index watches wake now
        db.index_changed(who.tenant, who.principal)
    return outcome


def _not_owned(
    who: Principal, row: tuple[Any, ...] | None, tomb: tuple[Any, ...] | None
) -> DeleteOutcome | None:
    """The answer when the caller does not own a live session `row` (tenant, principal):
    a repeat of its own delete (the tombstone is its), or the plain 404; None when it does.
    A foreign live session and a missing one read the same statements (the same time)."""
    if row is not None and (row[0], row[1]) == (who.tenant, who.principal):
        return None
    mine = tomb is not None and (tomb[0], tomb[1]) == (who.tenant, who.principal)
    return DeleteOutcome("deleted" if row is None and mine else "not_found")


def _delete_on_sqlite(
    conn: Connection, who: Principal, params: dict[str, Any], most_events: int | None = None
) -> DeleteOutcome | None:
    """SQLite holds the only writer (`BEGIN IMMEDIATE`), so one snapshot holds throughout:
    the owner, the active run and the tombstone in one statement (through the Connection,
    where engine events see it, as they see every 404's), then the purge on the driver's
    cursor. None, having written nothing, for a session of more than `most_events` events."""
    sql, defaults = _SQLITE_LOOKUP
    found = conn.exec_driver_sql(sql, defaults | params).one()
    row = None if found[0] is None else found[0:2]
    refused = _not_owned(who, row, None if found[3] is None else found[3:5])
    if refused is not None:
        return refused
    if found[2] is not None:
        return DeleteOutcome("active", active_run_id=found[2])
    if most_events is not None and found[5] > most_events:
        return None
    values = _SQLITE_DEFAULTS | params
    values |= {"now": timestamps.now(), "tenant": who.tenant, "principal": who.principal}
    sql = _SQLITE_OUTBOX
    try:
        cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
        queued = cursor.execute(sql, values).rowcount
        sql = _SQLITE_TRACE_IDS
        trace_ids = [found_id for (found_id,) in cursor.execute(sql, values)]
        if trace_ids:  # read first: the items that name them go before them
            marks = ", ".join(f":t{i}" for i in range(len(trace_ids)))
            values |= {f"t{i}": trace_id for i, trace_id in enumerate(trace_ids)}
            for table, column in (("recall_trace_items", "trace_id"), ("recall_traces", "id")):
                sql = f"DELETE FROM {table} WHERE {column} IN ({marks})"
                cursor.execute(sql, values)
        for sql in _SQLITE_PURGE:
            cursor.execute(sql, values)
        cursor.close()
    except sqlite3.Error as error:  # answered as an engine error (503 for an outage)
        raise sa_exc.DBAPIError.instance(sql, values, error, sqlite3.Error) from error
    return DeleteOutcome("deleted", queued=queued, purged=True)


def _delete_on_postgresql(
    s: Session, conn: Connection, who: Principal, params: dict[str, Any]
) -> DeleteOutcome:
    """Three statements: lock the session row; then, in a new snapshot, look for an active
    run, lock the memories being removed and take the index-cache lease's shared lock;
    then the purge, which reads the lease row in a snapshot newer than that lock."""
    sql, defaults = _PG_LOCK
    row = conn.exec_driver_sql(sql, defaults | params).first()
    if row is None or (row[0], row[1]) != (who.tenant, who.principal):
        # Read after the lock (a new snapshot): a delete that held it just committed its
        # tombstone, and the retry it raced must see it.
        sql, defaults = _PG_TOMBSTONE
        refused = _not_owned(who, row, conn.exec_driver_sql(sql, defaults | params).first())
        assert refused is not None
        return refused
    if row[2] is not None:
        return DeleteOutcome("active", active_run_id=row[2])
    # Lock the memories being removed before anything looks for what points at them: a run
    # of another session recalling one of them (a recall-trace item) could otherwise commit
    # between that look and the memory delete, and the delete failed on the foreign key
    # (a 500, found by the SIGKILL crash test). Writers that reference a memory take a
    # key-share lock on it first (server_stub.domain.agent), so one side waits for the other.
    sql, defaults = _PG_PREPARE
    active = conn.exec_driver_sql(sql, defaults | params).scalar()
    if active is not None:
        return DeleteOutcome("active", active_run_id=active)
    origin = str(s.info.get(ORIGIN_KEY, ""))
    params |= {
        "now": timestamps.now(),
        "tenant": who.tenant,
        "principal": who.principal,
        "payload": index_payload(who.tenant, who.principal, origin),
    }
    sql, defaults = _PG_PURGE
    queued, lease, db_now, _notified = conn.exec_driver_sql(sql, defaults | params).one()
    # The version bump above commits only once no other process trusts an older version.
    indexlease.guard(s, origin, read=(lease, float(db_now)))
    return DeleteOutcome("deleted", queued=int(queued), purged=True)


# The purge, built once as Core statements. Every one names the session as `:sid`.
_SID: BindParameter[str] = bindparam("sid")
_NOW: BindParameter[str] = bindparam("now")
_ACTIVE_RUN = (
    select(RunRow.id)
    .where(
        RunRow.session_id == _SID,
        # Constants in the text, so that it compiles once (no expanding parameter).
        RunRow.status.in_([literal_column(f"'{status}'") for status in sorted(ACTIVE_STATUSES)]),
    )
    .limit(1)
)
#: Recall traces to remove: the session's, and any other session's that recalled one of the
#: session's memories (a trace is removed whole).
_TRACE_IDS = (
    select(RecallTraceRow.id)
    .where(RecallTraceRow.session_id == _SID)
    .union(select(RecallTraceItemRow.trace_id).where(RecallTraceItemRow.memory_session_id == _SID))
)
#: The byte-delete outbox: the locators of the bytes a crashed or cancelled run may have
#: written without an artifact row (its intents, released below), and the artifacts'.
_OUTBOX = insert(DeletionOutboxRow).from_select(
    ["session_id", "locator", "enqueued_at", "attempts"],
    select(_SID, ObjectIntentRow.locator, _NOW, literal_column("0"))
    .where(ObjectIntentRow.session_id == _SID)
    .union_all(
        select(_SID, ArtifactRow.locator, _NOW, literal_column("0")).where(
            ArtifactRow.session_id == _SID
        )
    ),
)
# Children before parents (foreign keys are enforced on SQLite).
_DELETES: tuple[Delete | Update, ...] = (
    delete(ObjectIntentRow).where(ObjectIntentRow.session_id == _SID),
    delete(MemoryRejectionRow).where(
        or_(MemoryRejectionRow.session_id == _SID, MemoryRejectionRow.memory_session_id == _SID)
    ),
    delete(ConsolidationRecordRow).where(ConsolidationRecordRow.source_session_id == _SID),
    delete(KnowledgeDocumentRow).where(KnowledgeDocumentRow.source_session_id == _SID),
    update(SkillRevisionRow)  # a published skill stays; its authoring run is detached
    .where(SkillRevisionRow.authoring_session_id == _SID)
    .values(authoring_run_id=None, authoring_session_id=None),
    delete(ToolInvocationRow).where(ToolInvocationRow.session_id == _SID),
    delete(ApprovalRow).where(ApprovalRow.session_id == _SID),
    delete(CheckpointRow).where(CheckpointRow.session_id == _SID),
    delete(ProjectionRow).where(ProjectionRow.session_id == _SID),
    delete(MemoryWordRow).where(MemoryWordRow.memory_session_id == _SID),
    delete(MemoryRow).where(MemoryRow.source_session_id == _SID),
    delete(EventRow).where(EventRow.session_id == _SID),
    delete(ArtifactRow).where(ArtifactRow.session_id == _SID),
    delete(RunRow).where(RunRow.session_id == _SID),
    delete(SessionRow).where(SessionRow.id == _SID),
)
_TRACE_ITEMS = delete(RecallTraceItemRow).where(RecallTraceItemRow.trace_id.in_(_TRACE_IDS))
_TRACES = delete(RecallTraceRow).where(RecallTraceRow.id.in_(_TRACE_IDS))
_TOMBSTONE = insert(DeletionTombstoneRow).values(
    session_id=_SID, tenant=bindparam("tenant"), principal=bindparam("principal"), deleted_at=_NOW
)

_Sql = tuple[str, dict[str, Any]]


def _sql(stmt: ClauseElement, dialect: str) -> _Sql:
    """A statement's text for `dialect` (SQLite `:name`, psycopg `%(name)s` parameters) and
    the values of the parameters it adds itself (a LIMIT's, a NULL's); the caller's values
    go over them."""
    if dialect == "sqlite":
        compiled = stmt.compile(dialect=sqlite.dialect(paramstyle="named"))
    else:
        compiled = stmt.compile(dialect=postgresql.psycopg.dialect())  # type: ignore[no-untyped-call]
    return str(compiled), dict(compiled.params)


_ONE = select(_SID.label("id")).subquery("q")
_SQLITE_LOOKUP = _sql(
    select(
        SessionRow.tenant,
        SessionRow.principal,
        func.coalesce(SessionRow.active_run_id, _ACTIVE_RUN.scalar_subquery()),
        DeletionTombstoneRow.tenant,
        DeletionTombstoneRow.principal,
        SessionRow.last_sequence,
    ).select_from(
        _ONE.outerjoin(SessionRow, SessionRow.id == _ONE.c.id).outerjoin(
            DeletionTombstoneRow, DeletionTombstoneRow.session_id == _ONE.c.id
        )
    ),
    "sqlite",
)


def _sqlite_texts(stmts: tuple[ClauseElement, ...]) -> tuple[list[str], dict[str, Any]]:
    """The statements' SQLite texts and the values of the parameters they add themselves,
    as one mapping (so one dict serves every statement: a name must mean one value)."""
    texts: list[str] = []
    defaults: dict[str, Any] = {}
    for stmt in stmts:
        text, own = _sql(stmt, "sqlite")
        for name, value in own.items():
            if defaults.setdefault(name, value) != value:
                raise AssertionError(f"parameter {name} has two values in the purge")
        texts.append(text)
    return texts, defaults


_SQLITE_TEXTS, _SQLITE_DEFAULTS = _sqlite_texts(
    (_OUTBOX, _TRACE_IDS, *_DELETES, _TOMBSTONE, bump_statement("sqlite"))
)
_SQLITE_OUTBOX, _SQLITE_TRACE_IDS, *_SQLITE_PURGE = _SQLITE_TEXTS

_PG_LOCK = _sql(
    select(SessionRow.tenant, SessionRow.principal, SessionRow.active_run_id)
    .where(SessionRow.id == _SID)
    .with_for_update(),
    "postgresql",
)
_PG_TOMBSTONE = _sql(
    select(DeletionTombstoneRow.tenant, DeletionTombstoneRow.principal).where(
        DeletionTombstoneRow.session_id == _SID
    ),
    "postgresql",
)
_ACTIVE = _ACTIVE_RUN.cte("active")
# In id order, like the agent's recall: the two cannot deadlock. Only when no run is active
# (a refused delete must not wait for its own agent's locks).
_LOCKED = (
    select(MemoryRow.id)
    .where(MemoryRow.source_session_id == _SID, ~exists(_ACTIVE.select()))
    .order_by(MemoryRow.id)
    .with_for_update()
    .cte("locked")
)
_PG_PREPARE = _sql(
    select(
        select(_ACTIVE.c.id).scalar_subquery(),
        select(func.count()).select_from(_LOCKED).scalar_subquery(),
        func.pg_advisory_xact_lock_shared(literal(indexlease.LEASE_SPACE), literal(0)),
    ),
    "postgresql",
)
_OUTBOX_ROWS = _OUTBOX.returning(literal_column("1")).cte("outbox")
# One statement: every sub-statement sees the graph as it was when it began (so the trace
# items and their traces are found by the same subquery), and the foreign keys are checked
# once all of them ran. It adds the outbox rows (their count is returned), the tombstone and
# the version bump, queues the index message for the commit (`server_stub.domain.bus`), and
# reads the index-cache lease for `indexlease.guard`.
_PG_PURGE = _sql(
    select(
        select(func.count()).select_from(_OUTBOX_ROWS).scalar_subquery(),
        select(ServerMeta.value).where(ServerMeta.key == indexlease.LEASE_KEY).scalar_subquery(),
        literal_column("extract(epoch FROM clock_timestamp())::float8"),
        func.pg_notify(literal(CHANNEL), bindparam("payload")),
    ).add_cte(
        *(
            stmt.cte(f"d{i}")
            for i, stmt in enumerate(
                (_TRACE_ITEMS, _TRACES, *_DELETES, _TOMBSTONE, bump_statement("postgresql"))
            )
        )
    ),
    "postgresql",
)


#: Every table a purge deletes from or rewrites, read off the purge's own statements (so the
#: list cannot drift from them), plus the outbox, whose rows leave with the byte deletes. The
#: background scrub vacuums these on PostgreSQL; the residue audit
#: (`server_stub.edge.control`) must count rows in each of them.
def _table_of(stmt: Delete | Update) -> str:
    table = stmt.table
    assert isinstance(table, TableClause)
    return table.name


PURGED_TABLES: tuple[str, ...] = tuple(
    sorted(
        {_table_of(s) for s in (*_DELETES, _TRACE_ITEMS, _TRACES)}
        | {DeletionOutboxRow.__tablename__}
    )
)


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
