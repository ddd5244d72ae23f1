"""Route 6: a session's events, a page at a time by sequence.

Apart from the session routes because it is read far more often than they are (every device
reads the events of each conversation that moved) and so takes the short path: plain rows,
no ORM objects, and `server_stub.edge.indexpath` serves it without FastAPI's router
(`events_of`), as it does the index.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse
from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from server_stub.db.models import EventRow, SessionRow
from server_stub.edge import schemas
from server_stub.routes.common import parse_int, parse_limit, sequence_after
from server_stub.routes.sessions import plain_404
from server_stub.state import AppState, get_state

router = APIRouter(tags=["sessions"])
StateDep = Annotated[AppState, Depends(get_state)]


@router.get(
    "/sessions/{session_id}/events",
    response_model=schemas.EventPage,
    responses=schemas.errors(400, 401, 403, 404),
    openapi_extra=schemas.parameters(schemas.AFTER, schemas.limit(200, 1000)),
    summary="Page through a session's events by sequence",
)
async def list_events(session_id: str, request: Request, st: StateDep) -> Response:
    who = st.tokens.require(request, "run.read")
    after = parse_int(request, "after", 0, 0, 2**62)
    limit = parse_limit(request, 200, 1000)

    def work(s: Session) -> dict[str, Any]:
        # Plain rows (the ORM's `get` of the session and its event objects would be most
        # of this route's time), read by `st.read`: on SQLite on the loop, where each
        # statement is its own snapshot. So the page is read with the ownership in the
        # same statement (events of a session the caller owns at that instant); only an
        # empty page asks whether the session is the caller's, and a foreign id and a
        # missing one run the same two statements (their time cannot tell them apart).
        conn = s.connection()
        params = {
            "sid": session_id,
            "tenant": who.tenant,
            "principal": who.principal,
            "after": sequence_after(after or 0),
            "limit": limit,
        }
        rows = conn.execute(_OWNED_EVENTS_PAGE, params).all()
        if not rows:
            owner = conn.execute(_SESSION_OWNER, {"sid": session_id}).first()
            if owner is None or (owner[0], owner[1]) != (who.tenant, who.principal):
                raise plain_404()
        items = [
            {
                "session_id": sid,
                "run_id": run_id,
                "sequence": sequence,
                "type": type_,
                "created_at": created_at,
                "data": data,
            }
            for sid, run_id, sequence, type_, created_at, data in rows
        ]
        next_after = rows[-1][2] if len(rows) == limit else None
        return {"items": items, "next_after": next_after}

    return JSONResponse(await st.read(work))


async def events_of(session_id: str, request: Request) -> Response:
    """`list_events` for `server_stub.edge.indexpath`, which serves it without the router."""
    return await list_events(session_id, request, get_state(request))


# The events route's two statements, built once (the shape of `history.event_view`).
_SESSION_OWNER = select(SessionRow.tenant, SessionRow.principal).where(
    SessionRow.id == bindparam("sid")
)
_OWNED_EVENTS_PAGE = (
    select(
        EventRow.session_id,
        EventRow.run_id,
        EventRow.sequence,
        EventRow.type,
        EventRow.created_at,
        EventRow.data,
    )
    .join(SessionRow, SessionRow.id == EventRow.session_id)
    .where(
        EventRow.session_id == bindparam("sid"),
        SessionRow.tenant == bindparam("tenant"),
        SessionRow.principal == bindparam("principal"),
        EventRow.sequence > bindparam("after"),
    )
    .order_by(EventRow.sequence)
    .limit(bindparam("limit"))
)
