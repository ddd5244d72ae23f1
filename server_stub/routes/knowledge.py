"""Route 15: the caller's knowledge documents, newest first."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse

from server_stub.db.models import KnowledgeDocumentRow as K
from server_stub.edge import schemas
from server_stub.routes.common import parse_limit
from server_stub.routes.keyset import cursor_position, newest_first_page
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
    after = cursor_position(request, st.cursors, "knowledge", who)

    def work() -> dict[str, Any]:
        with st.db.read() as s:
            rows, next_cursor = newest_first_page(s, K, who, after, limit, st.cursors, "knowledge")
            return {"items": [kdoc_view(r) for r in rows], "next_cursor": next_cursor}

    return JSONResponse(await st.run(work))
