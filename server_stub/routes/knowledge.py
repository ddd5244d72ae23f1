"""Route 15: the caller's knowledge documents, newest first."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse
from sqlalchemy import or_, select

from server_stub import schemas
from server_stub.cursors import Position
from server_stub.db.models import KnowledgeDocumentRow as K
from server_stub.routes.common import parse_cursor, parse_limit
from server_stub.state import AppState, get_state

router = APIRouter(tags=["knowledge"])
StateDep = Annotated[AppState, Depends(get_state)]


def kdoc_view(row: K) -> dict[str, Any]:
    """KnowledgeDocument JSON."""
    return {
        "id": row.id,
        "title": row.title,
        "source_artifact_id": row.source_artifact_id,
        "source_session_id": row.source_session_id,
        "created_at": row.created_at,
    }


@router.get(
    "/knowledge/documents",
    response_model=schemas.KnowledgePage,
    responses=schemas.errors(400, 401, 403),
    openapi_extra=schemas.parameters(schemas.limit(50, 200), schemas.CURSOR),
    summary="List the caller's knowledge documents, newest first",
)
async def list_documents(request: Request, st: StateDep) -> Response:
    who = st.tokens.require(request, "knowledge.read")
    limit = parse_limit(request, 50, 200)
    cursor = parse_cursor(request)
    after = st.cursors.decode(cursor, "knowledge", who.tenant, who.principal) if cursor else None

    def work() -> dict[str, Any]:
        with st.db.read() as s:
            stmt = select(K).where(K.tenant == who.tenant, K.principal == who.principal)
            if after is not None:
                # `created_at <= ts` lets SQLite seek the index (see the session list).
                stmt = stmt.where(
                    K.created_at <= after.timestamp,
                    or_(K.created_at < after.timestamp, K.id < after.item_id),
                )
            rows = list(s.scalars(stmt.order_by(K.created_at.desc(), K.id.desc()).limit(limit + 1)))
            more = len(rows) > limit
            rows = rows[:limit]
            next_cursor = None
            if more:
                last = rows[-1]
                next_cursor = st.cursors.encode(
                    "knowledge", who.tenant, who.principal, Position(last.created_at, last.id)
                )
            return {"items": [kdoc_view(r) for r in rows], "next_cursor": next_cursor}

    return JSONResponse(await st.run(work))
