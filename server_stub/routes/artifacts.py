"""Routes 11–12: artifact metadata and bytes (404 as soon as the session is deleted)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse

from server_stub.db.models import ArtifactRow
from server_stub.edge import schemas
from server_stub.edge.errors import ApiError, not_found
from server_stub.state import AppState, get_state

router = APIRouter(tags=["artifacts"])
StateDep = Annotated[AppState, Depends(get_state)]

ARTIFACT_NOT_FOUND = "artifact not found"


def artifact_view(row: ArtifactRow) -> dict[str, Any]:
    """Artifact JSON."""
    return {
        "id": row.id,
        "session_id": row.session_id,
        "run_id": row.run_id,
        "name": row.name,
        "media_type": row.media_type,
        "size": row.size,
        "sha256": row.sha256,
        "created_at": row.created_at,
    }


def _owned_artifact(st: AppState, artifact_id: str, tenant: str, principal: str) -> ArtifactRow:
    with st.db.read() as s:
        row = s.get(ArtifactRow, artifact_id)
        if row is None or (row.tenant, row.principal) != (tenant, principal):
            raise not_found(ARTIFACT_NOT_FOUND)
        return row


@router.get(
    "/artifacts/{artifact_id}",
    response_model=schemas.Artifact,
    responses=schemas.errors(401, 403, 404),
    summary="Artifact metadata",
)
async def get_artifact(artifact_id: str, request: Request, st: StateDep) -> Response:
    who = st.tokens.require(request, "artifact.read")
    row = await st.run(lambda: _owned_artifact(st, artifact_id, who.tenant, who.principal))
    return JSONResponse(artifact_view(row))


@router.get(
    "/artifacts/{artifact_id}/content",
    response_class=Response,
    responses={
        200: {"description": "The artifact's bytes", "content": {"*/*": {}}},
        304: {"description": "Not modified (`If-None-Match` names the current `ETag`)"},
        **schemas.errors(401, 403, 404, 503),
    },
    openapi_extra=schemas.parameters(schemas.IF_NONE_MATCH),
    summary="Artifact bytes",
)
async def get_content(artifact_id: str, request: Request, st: StateDep) -> Response:
    who = st.tokens.require(request, "artifact.read")
    row = await st.run(lambda: _owned_artifact(st, artifact_id, who.tenant, who.principal))
    etag = f'"{row.sha256}"'
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers={"ETag": etag})
    try:
        data = await st.run(lambda: st.store.get(row.locator))
    except (OSError, ValueError) as exc:
        raise ApiError(503, "artifact bytes are unavailable") from exc
    return Response(data, media_type=row.media_type, headers={"ETag": etag})
