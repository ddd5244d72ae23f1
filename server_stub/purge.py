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

from sqlalchemy import delete, or_, select, update
from sqlalchemy.orm import Session

from server_stub import timestamps
from server_stub.auth import Principal
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
    ProjectionRow,
    RecallTraceItemRow,
    RecallTraceRow,
    RunRow,
    SkillRevisionRow,
    ToolInvocationRow,
)
from server_stub.history import ACTIVE_STATUSES, bump_version, lock_session, owned, tombstone_of
from server_stub.objectstore import ObjectStore, ObjectStoreUnavailable

log = logging.getLogger(__name__)


@dataclass
class DeleteOutcome:
    """`deleted` (now or before), `not_found`, or `active` (with the run id)."""

    kind: str
    active_run_id: str | None = None
    locators: list[str] = field(default_factory=list)


def delete_session(db: Database, who: Principal, session_id: str) -> DeleteOutcome:
    """The whole transactional part of a delete."""
    with db.write() as s:
        row = lock_session(s, session_id)
        if row is None:
            tomb = tombstone_of(s, session_id)
            if tomb is not None and (tomb.tenant, tomb.principal) == (who.tenant, who.principal):
                return DeleteOutcome("deleted")
            return DeleteOutcome("not_found")
        if not owned(row, who.tenant, who.principal):
            return DeleteOutcome("not_found")
        active = row.active_run_id or s.scalar(
            select(RunRow.id)
            .where(RunRow.session_id == session_id, RunRow.status.in_(ACTIVE_STATUSES))
            .limit(1)
        )
        if active is not None:
            return DeleteOutcome("active", active_run_id=active)

        locators = list(
            s.scalars(select(ArtifactRow.locator).where(ArtifactRow.session_id == session_id))
        )
        purge_graph(s, session_id)
        now = timestamps.now()
        for locator in locators:
            s.add(DeletionOutboxRow(session_id=session_id, locator=locator, enqueued_at=now))
        s.delete(row)
        s.flush()
        s.add(
            DeletionTombstoneRow(
                session_id=session_id, tenant=row.tenant, principal=row.principal, deleted_at=now
            )
        )
        s.flush()
        bump_version(s, row.tenant, row.principal)
        return DeleteOutcome("deleted", locators=locators)


def purge_graph(s: Session, session_id: str) -> None:
    """Remove every row that refers to the session, children before parents."""
    sid = session_id
    memory_ids = select(MemoryRow.id).where(MemoryRow.source_session_id == sid)
    trace_ids = list(
        s.scalars(
            select(RecallTraceRow.id)
            .where(RecallTraceRow.session_id == sid)
            .union(
                select(RecallTraceItemRow.trace_id).where(
                    RecallTraceItemRow.memory_session_id == sid
                )
            )
        )
    )
    if trace_ids:
        s.execute(delete(RecallTraceItemRow).where(RecallTraceItemRow.trace_id.in_(trace_ids)))
        s.execute(delete(RecallTraceRow).where(RecallTraceRow.id.in_(trace_ids)))
    s.execute(
        delete(MemoryRejectionRow).where(
            or_(MemoryRejectionRow.session_id == sid, MemoryRejectionRow.memory_session_id == sid)
        )
    )
    s.execute(delete(ConsolidationRecordRow).where(ConsolidationRecordRow.source_session_id == sid))
    s.execute(delete(KnowledgeDocumentRow).where(KnowledgeDocumentRow.source_session_id == sid))
    s.execute(
        update(SkillRevisionRow)
        .where(SkillRevisionRow.authoring_session_id == sid)
        .values(authoring_run_id=None, authoring_session_id=None)
    )
    s.execute(delete(ToolInvocationRow).where(ToolInvocationRow.session_id == sid))
    s.execute(delete(ApprovalRow).where(ApprovalRow.session_id == sid))
    s.execute(delete(CheckpointRow).where(CheckpointRow.session_id == sid))
    s.execute(delete(ProjectionRow).where(ProjectionRow.session_id == sid))
    s.execute(delete(MemoryRow).where(MemoryRow.id.in_(memory_ids)))
    s.execute(delete(EventRow).where(EventRow.session_id == sid))
    s.execute(delete(ArtifactRow).where(ArtifactRow.session_id == sid))
    s.execute(delete(RunRow).where(RunRow.session_id == sid))


def flush_outbox(db: Database, store: ObjectStore, session_id: str | None = None) -> int:
    """Try every queued byte delete (of one session, or all); return how many remain queued."""
    with db.read() as s:
        stmt = select(DeletionOutboxRow.id, DeletionOutboxRow.locator).order_by(
            DeletionOutboxRow.id
        )
        if session_id is not None:
            stmt = stmt.where(DeletionOutboxRow.session_id == session_id)
        queued = [(row.id, row.locator) for row in s.execute(stmt)]
    failed: list[int] = []
    done: list[int] = []
    for row_id, locator in queued:
        try:
            store.delete(locator)
        except (ObjectStoreUnavailable, OSError, ValueError) as exc:
            log.warning("byte delete of %s failed, stays queued: %s", locator, exc)
            failed.append(row_id)
        else:
            done.append(row_id)
    if done or failed:
        with db.write() as s:
            if done:
                s.execute(delete(DeletionOutboxRow).where(DeletionOutboxRow.id.in_(done)))
            if failed:
                s.execute(
                    update(DeletionOutboxRow)
                    .where(DeletionOutboxRow.id.in_(failed))
                    .values(attempts=DeletionOutboxRow.attempts + 1)
                )
    with db.read() as s:
        count_stmt = select(DeletionOutboxRow.id)
        if session_id is not None:
            count_stmt = count_stmt.where(DeletionOutboxRow.session_id == session_id)
        return len(list(s.scalars(count_stmt)))
