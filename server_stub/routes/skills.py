"""Route 16: one skill with its revisions (authoring runs detached after a session delete)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse
from sqlalchemy import select

from server_stub.db.models import SkillRevisionRow, SkillRow
from server_stub.edge import schemas
from server_stub.edge.errors import not_found
from server_stub.state import AppState, get_state

router = APIRouter(tags=["skills"])
StateDep = Annotated[AppState, Depends(get_state)]

SKILL_NOT_FOUND = "skill not found"


@router.get(
    "/skills/{skill_id}",
    response_model=schemas.Skill,
    responses=schemas.errors(401, 403, 404),
    summary="One skill and its published revisions",
)
async def get_skill(skill_id: str, request: Request, st: StateDep) -> Response:
    who = st.tokens.require(request, "skill.read")

    def work() -> dict[str, Any]:
        with st.db.read() as s:
            skill = s.get(SkillRow, skill_id)
            if skill is None or (skill.tenant, skill.principal) != (who.tenant, who.principal):
                raise not_found(SKILL_NOT_FOUND)
            revisions = s.scalars(
                select(SkillRevisionRow)
                .where(SkillRevisionRow.skill_id == skill_id)
                .order_by(SkillRevisionRow.revision)
            )
            return {
                "id": skill.id,
                "name": skill.name,
                "revisions": [
                    {
                        "id": r.id,
                        "revision": r.revision,
                        "authoring_run_id": r.authoring_run_id,
                        "published_at": r.published_at,
                    }
                    for r in revisions
                ],
            }

    return JSONResponse(await st.run(work))
