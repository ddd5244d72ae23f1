"""Route 10: deciding an approval (ADR-0028 semantics for repeats and cancelled ones)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse
from sqlalchemy import select

from server_stub.db.models import ApprovalRow, RunRow
from server_stub.domain import timestamps
from server_stub.domain.history import append_event, lock_session, set_run_status
from server_stub.edge import schemas
from server_stub.edge.errors import bad_request, invalid_state, not_found
from server_stub.routes.common import read_json_object
from server_stub.state import AppState, get_state

router = APIRouter(tags=["approvals"])
StateDep = Annotated[AppState, Depends(get_state)]

APPROVAL_NOT_FOUND = "approval not found"
_DECISIONS = {"approve": "approved", "deny": "denied"}


def approval_view(row: ApprovalRow) -> dict[str, Any]:
    """The approval JSON of route 10."""
    return {"id": row.id, "run_id": row.run_id, "tool": row.tool, "status": row.status}


@router.post(
    "/approvals/{approval_id}/decision",
    response_model=schemas.Approval,
    responses=schemas.errors(400, 401, 403, 404, 409, 413, 429),
    openapi_extra=schemas.body(schemas.DecisionRequest),
    summary="Approve or deny a pending tool approval",
)
async def decide(approval_id: str, request: Request, st: StateDep) -> Response:
    who = st.tokens.require(request, "approval.write")
    doc = await read_json_object(request)
    decision = doc.get("decision")
    if not isinstance(decision, str) or decision not in _DECISIONS:
        raise bad_request('decision must be "approve" or "deny"', field="decision")
    target = _DECISIONS[decision]

    def work() -> dict[str, Any]:
        with st.db.write() as s:
            found = s.get(ApprovalRow, approval_id)
            if found is None or (found.tenant, found.principal) != (who.tenant, who.principal):
                raise not_found(APPROVAL_NOT_FOUND)
            session = lock_session(s, found.session_id)
            stmt = select(ApprovalRow).where(ApprovalRow.id == approval_id)
            if s.get_bind().dialect.name == "postgresql":
                stmt = stmt.with_for_update()
            # populate_existing: the row read before the lock may be stale (a concurrent
            # cancel may have committed `cancelled` meanwhile); the locked read must win.
            row = s.scalars(stmt.execution_options(populate_existing=True)).one_or_none()
            if row is None or session is None:
                raise not_found(APPROVAL_NOT_FOUND)
            if row.status == target:
                return approval_view(row)
            if row.status != "pending":
                raise invalid_state(
                    f"approval is already {row.status}", reason=f"approval_{row.status}"
                )
            row.status = target
            row.decided_at = timestamps.now()
            run = s.get(RunRow, row.run_id)
            append_event(
                s,
                session,
                row.run_id,
                "approval.resolved",
                {"approval_id": row.id, "decision": target},
            )
            if run is not None and run.status == "waiting_for_approval":
                set_run_status(s, run, "running")
            return approval_view(row)

    view = await st.run(work)
    st.notifier.notify(view["run_id"])
    return JSONResponse(view)
