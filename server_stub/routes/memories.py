"""Routes 13–14: the caller's memories (rejected ones included) and rejecting one."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse
from sqlalchemy import select

from server_stub.db.models import MemoryRejectionRow, MemoryRow, SessionRow
from server_stub.domain import ids, timestamps
from server_stub.domain.history import owned
from server_stub.edge import schemas
from server_stub.edge.errors import bad_request, not_found
from server_stub.routes.common import parse_limit, read_json_object
from server_stub.routes.keyset import cursor_position, newest_first_page
from server_stub.state import AppState, get_state

router = APIRouter(tags=["memories"])
StateDep = Annotated[AppState, Depends(get_state)]

MEMORY_NOT_FOUND = "memory not found"


def memory_view(row: MemoryRow, rejected: bool) -> dict[str, Any]:
    """Memory JSON."""
    return {
        "id": row.id,
        "text": row.text,
        "source_session_id": row.source_session_id,
        "source_run_id": row.source_run_id,
        "reinforcement_count": row.reinforcement_count,
        "rejected": rejected,
        "created_at": row.created_at,
    }


@router.get(
    "/memories",
    response_model=schemas.MemoryPage,
    responses=schemas.errors(400, 401, 403),
    openapi_extra=schemas.parameters(schemas.limit(50, 200), schemas.CURSOR),
    summary="List the caller's memories, newest first",
)
async def list_memories(request: Request, st: StateDep) -> Response:
    who = st.tokens.require(request, "memory.read")
    limit = parse_limit(request, 50, 200)
    after = cursor_position(request, st.cursors, "memories", who)

    def work() -> dict[str, Any]:
        with st.db.read() as s:
            rows, next_cursor = newest_first_page(
                s, MemoryRow, who, after, limit, st.cursors, "memories"
            )
            rejected = set(
                s.scalars(
                    select(MemoryRejectionRow.memory_id).where(
                        MemoryRejectionRow.memory_id.in_([r.id for r in rows])
                    )
                )
            )
            return {
                "items": [memory_view(r, r.id in rejected) for r in rows],
                "next_cursor": next_cursor,
            }

    return JSONResponse(await st.run(work))


@router.post(
    "/memories/{memory_id}/rejection",
    status_code=201,
    response_model=schemas.Rejection,
    responses=schemas.errors(400, 401, 403, 404, 413, 429),
    openapi_extra=schemas.body(schemas.RejectionRequest),
    summary="Reject a memory, optionally in the context of a session",
)
async def reject_memory(memory_id: str, request: Request, st: StateDep) -> Response:
    who = st.tokens.require(request, "memory.write")
    doc = await read_json_object(request, allow_empty=True)
    session_id = doc.get("session_id")
    reason = doc.get("reason")
    if session_id is not None and not isinstance(session_id, str):
        raise bad_request("session_id must be a string", field="session_id")
    if reason is not None and not isinstance(reason, str):
        raise bad_request("reason must be a string", field="reason")
    if reason is not None and len(reason) > schemas.MAX_REASON_CHARACTERS:
        raise bad_request(
            f"reason is longer than {schemas.MAX_REASON_CHARACTERS:,} characters",
            field="reason",
            max_characters=schemas.MAX_REASON_CHARACTERS,
        )

    def work() -> dict[str, Any]:
        with st.db.write() as s:
            memory = s.get(MemoryRow, memory_id)
            if memory is None or (memory.tenant, memory.principal) != (
                who.tenant,
                who.principal,
            ):
                raise not_found(MEMORY_NOT_FOUND)
            if session_id is not None and not owned(
                s.get(SessionRow, session_id), who.tenant, who.principal
            ):
                raise not_found(MEMORY_NOT_FOUND)
            row = MemoryRejectionRow(
                id=ids.new_id("mrj"),
                memory_id=memory.id,
                memory_session_id=memory.source_session_id,
                session_id=session_id,
                tenant=who.tenant,
                principal=who.principal,
                reason=reason,
                created_at=timestamps.now(),
            )
            s.add(row)
            return {"id": row.id, "memory_id": memory.id, "session_id": session_id}

    return JSONResponse(await st.run(work), status_code=201)
