"""The QA control plane (`--control` only; hidden from the OpenAPI schema; no auth).

No authentication, so two guards (CONTRACT §10.2): only a loopback peer (the connection's
address, never a header) reaches it, others get the unknown-route 404 a server without
`--control` gives; and a POST or PUT must say `Content-Type: application/json`, which no
web page can send cross-origin without a CORS preflight this server never grants (a
`text/plain` or body-less POST is a "simple request" a page can fire at 127.0.0.1).

Scenario set-up (`POST /_stub/sessions`), fault injection (`PUT /_stub/faults`), an explicit
maintenance pass, the queued byte deletes (`GET /_stub/outbox`), and the purge audit
(`GET /_stub/sessions/{id}/residue`), which counts,
table by table, every row that still refers to a session, directly or through its runs,
artifacts and memories.

Loopback is not a user: every account on the machine reaches these routes. The audit routes
answer about any tenant's ids (the outbox lists them), and the fault switch stops every
tenant's byte deletes, so `--control` is for QA and tests on a machine whose local users are
trusted, never for a server people share. The audits ask no bearer token on purpose: they
must count what a purge left behind even when nothing ties the id to an owner any more (no
session row, no tombstone), which is exactly the failure they exist to find (decision 0194).
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse
from sqlalchemy import func, inspect, or_, select
from sqlalchemy.orm import Session

from server_stub.db.models import (
    ApprovalRow,
    ArtifactRow,
    Base,
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
from server_stub.domain import maintenance, purge, timestamps
from server_stub.domain.history import append_event, bump_version, session_views
from server_stub.domain.titles import title_from_message
from server_stub.edge.errors import UNKNOWN_ROUTE, ApiError, bad_request
from server_stub.edge.hosts import is_loopback_name
from server_stub.routes.common import read_json_object, validate_message
from server_stub.routes.sessions import create_session_row
from server_stub.state import AppState, get_state


def _guard(request: Request) -> None:
    """404 for a peer that is not on loopback; 400 for a write that is not JSON."""
    peer = request.client.host if request.client is not None else ""
    if not is_loopback_name(peer):
        raise ApiError(404, UNKNOWN_ROUTE)
    if request.method in ("POST", "PUT"):
        types = request.headers.getlist("content-type")
        media = types[0].partition(";")[0].strip().lower() if len(types) == 1 else ""
        if media != "application/json":
            raise bad_request(
                "the control plane accepts only Content-Type: application/json",
                field="content-type",
            )


router = APIRouter(prefix="/_stub", include_in_schema=False, dependencies=[Depends(_guard)])
StateDep = Annotated[AppState, Depends(get_state)]


@router.post("/sessions", status_code=201)
async def create_history(request: Request, st: StateDep) -> Response:
    doc = await read_json_object(request)
    token = doc.get("token")
    who = st.tokens.lookup(token) if isinstance(token, str) else None
    if who is None:
        raise bad_request("token must be one of the server's tokens", field="token")
    raw_messages = doc.get("messages", [])
    if not isinstance(raw_messages, list):
        raise bad_request("messages must be a list", field="messages")
    messages = [validate_message(m) for m in raw_messages]
    updated_at = doc.get("updated_at")
    if updated_at is not None and (
        not isinstance(updated_at, str) or not timestamps.is_valid(updated_at)
    ):
        raise bad_request("updated_at must be YYYY-MM-DDTHH:MM:SS.ffffffZ", field="updated_at")
    legacy = doc.get("legacy", False)
    if not isinstance(legacy, bool):
        raise bad_request("legacy must be a boolean", field="legacy")

    def work() -> dict[str, Any]:
        now = timestamps.now()
        base = updated_at or now
        created = min(base, now)
        with st.db.write() as s:
            row = create_session_row(s, who, at=created)
            for message in messages:
                append_event(s, row, None, "message.user", message, at=created)
            if messages:
                if legacy:
                    row.title_state = "legacy"
                else:
                    row.title = title_from_message(messages[0])
                    row.title_state = "stored"
            row.updated_at = base
            bump_version(s, who.tenant, who.principal)
            return session_views(s, [row], st.titles)[0]

    return JSONResponse(await st.run(work), status_code=201)


@router.put("/faults", status_code=204)
async def set_faults(request: Request, st: StateDep) -> Response:
    doc = await read_json_object(request)
    state = doc.get("object_store")
    if state not in ("up", "down"):
        raise bad_request('object_store must be "up" or "down"', field="object_store")
    st.store.available = state == "up"
    return Response(status_code=204)


@router.post("/maintenance")
async def run_maintenance(st: StateDep) -> Response:
    pending = await st.run(lambda: maintenance.run_pass(st.db, st.store))
    return JSONResponse({"outbox_pending": pending})


@router.get("/outbox")
async def outbox(st: StateDep) -> Response:
    """The queued byte deletes with their attempts, last error and age (ids, no content)."""
    entries = await st.run(lambda: purge.outbox_entries(st.db))
    return JSONResponse(
        {
            "pending": len(entries),
            "oldest_age_seconds": max((e.age_seconds for e in entries), default=0.0),
            "items": [dataclasses.asdict(e) for e in entries],
        }
    )


def residue_rows(s: Session, sid: str) -> dict[str, int]:
    """For every table but the tombstones and the outbox, rows still referring to `sid`."""

    def count(stmt: Any) -> int:
        return int(s.scalar(select(func.count()).select_from(stmt.subquery())) or 0)

    run_ids = select(RunRow.id).where(RunRow.session_id == sid)
    artifact_ids = select(ArtifactRow.id).where(ArtifactRow.session_id == sid)
    memory_ids = select(MemoryRow.id).where(MemoryRow.source_session_id == sid)
    trace_ids = select(RecallTraceRow.id).where(
        or_(RecallTraceRow.session_id == sid, RecallTraceRow.run_id.in_(run_ids))
    )
    rows = {
        "sessions": count(select(SessionRow.id).where(SessionRow.id == sid)),
        "runs": count(run_ids),
        "events": count(
            select(EventRow.sequence).where(
                or_(EventRow.session_id == sid, EventRow.run_id.in_(run_ids))
            )
        ),
        "checkpoints": count(
            select(CheckpointRow.id).where(
                or_(CheckpointRow.session_id == sid, CheckpointRow.run_id.in_(run_ids))
            )
        ),
        "projections": count(
            select(ProjectionRow.id).where(
                or_(ProjectionRow.session_id == sid, ProjectionRow.run_id.in_(run_ids))
            )
        ),
        "approvals": count(
            select(ApprovalRow.id).where(
                or_(ApprovalRow.session_id == sid, ApprovalRow.run_id.in_(run_ids))
            )
        ),
        "tool_invocations": count(
            select(ToolInvocationRow.id).where(
                or_(ToolInvocationRow.session_id == sid, ToolInvocationRow.run_id.in_(run_ids))
            )
        ),
        "artifacts": count(artifact_ids),
        "recall_traces": count(
            select(RecallTraceRow.id).where(
                or_(
                    RecallTraceRow.id.in_(trace_ids),
                    RecallTraceRow.id.in_(
                        select(RecallTraceItemRow.trace_id).where(
                            or_(
                                RecallTraceItemRow.memory_session_id == sid,
                                RecallTraceItemRow.memory_id.in_(memory_ids),
                            )
                        )
                    ),
                )
            )
        ),
        "recall_trace_items": count(
            select(RecallTraceItemRow.trace_id).where(
                or_(
                    RecallTraceItemRow.trace_id.in_(trace_ids),
                    RecallTraceItemRow.memory_session_id == sid,
                    RecallTraceItemRow.memory_id.in_(memory_ids),
                )
            )
        ),
        "memories": count(
            select(MemoryRow.id).where(
                or_(MemoryRow.source_session_id == sid, MemoryRow.source_run_id.in_(run_ids))
            )
        ),
        "memory_words": count(
            select(MemoryWordRow.memory_id).where(
                or_(
                    MemoryWordRow.memory_session_id == sid,
                    MemoryWordRow.memory_id.in_(memory_ids),
                )
            )
        ),
        "memory_rejections": count(
            select(MemoryRejectionRow.id).where(
                or_(
                    MemoryRejectionRow.session_id == sid,
                    MemoryRejectionRow.memory_session_id == sid,
                    MemoryRejectionRow.memory_id.in_(memory_ids),
                )
            )
        ),
        "consolidation_records": count(
            select(ConsolidationRecordRow.id).where(ConsolidationRecordRow.source_session_id == sid)
        ),
        "knowledge_documents": count(
            select(KnowledgeDocumentRow.id).where(
                or_(
                    KnowledgeDocumentRow.source_session_id == sid,
                    KnowledgeDocumentRow.source_artifact_id.in_(artifact_ids),
                )
            )
        ),
        "object_intents": count(
            select(ObjectIntentRow.locator).where(
                or_(ObjectIntentRow.session_id == sid, ObjectIntentRow.run_id.in_(run_ids))
            )
        ),
        "skill_revisions": count(
            select(SkillRevisionRow.id).where(
                or_(
                    SkillRevisionRow.authoring_session_id == sid,
                    SkillRevisionRow.authoring_run_id.in_(run_ids),
                )
            )
        ),
    }
    # Every table the purge works on has its own count above (one list: purge.PURGED_TABLES).
    uncounted = set(purge.PURGED_TABLES) - set(rows) - _NOT_AUDITED
    if uncounted:
        raise RuntimeError(f"the residue audit does not count {sorted(uncounted)}")
    # Tables that can never refer to a session still appear, so the audit names every table.
    for table in Base.metadata.sorted_tables:
        if table.name not in rows and table.name not in _NOT_AUDITED:
            rows[table.name] = 0
    return rows


_NOT_AUDITED = {DeletionTombstoneRow.__tablename__, DeletionOutboxRow.__tablename__}


@router.get("/sessions/{session_id}/residue")
async def residue(session_id: str, st: StateDep) -> Response:
    def work() -> dict[str, Any]:
        with st.db.read() as s:
            rows = residue_rows(s, session_id)
            tomb = s.get(DeletionTombstoneRow, session_id)
            columns = (
                [c.key for c in inspect(DeletionTombstoneRow).columns] if tomb is not None else []
            )
            outbox = int(
                s.scalar(select(func.count()).where(DeletionOutboxRow.session_id == session_id))
                or 0
            )
            try:
                objects = st.store.count(session_id)  # a bucket's listing may be down
            except OSError as exc:
                raise ApiError(503, "the object store cannot be listed") from exc
            return {
                "rows": rows,
                "objects": objects,
                "tombstone": tomb is not None,
                "tombstone_columns": columns,
                "outbox": outbox,
            }

    return JSONResponse(await st.run(work))
