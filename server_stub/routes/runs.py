"""Routes 7–9: a run, its events (JSON or SSE with replay, live tail and resume), cancel."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse
from sqlalchemy import select
from sqlalchemy.orm import Session

from server_stub import schemas
from server_stub.auth import Principal
from server_stub.db.models import EventRow, RunRow
from server_stub.errors import bad_request, not_found
from server_stub.history import TERMINAL_STATUSES, event_view, owned_run, request_cancel, run_view
from server_stub.notifier import wait_for
from server_stub.routes.common import sequence_after
from server_stub.state import AppState, get_state

router = APIRouter(tags=["runs"])
StateDep = Annotated[AppState, Depends(get_state)]

RUN_NOT_FOUND = "run not found"
KEEPALIVE_SECONDS = 15.0
POLL_SECONDS = 1.0


def _require_run(s: Session, run_id: str, who: Principal) -> RunRow:
    """The caller's run, else 404 (someone else's run is indistinguishable from none)."""
    run = owned_run(s, run_id, who.tenant, who.principal)
    if run is None:
        raise not_found(RUN_NOT_FOUND)
    return run


@router.get(
    "/runs/{run_id}",
    response_model=schemas.RunView,
    responses=schemas.errors(401, 403, 404),
    summary="Read one run",
)
async def get_run(run_id: str, request: Request, st: StateDep) -> Response:
    who = st.tokens.require(request, "run.read")

    def work() -> dict[str, Any]:
        with st.db.read() as s:
            run = _require_run(s, run_id, who)
            return run_view(run)

    return JSONResponse(await st.run(work))


def _read_after(st: AppState, run_id: str, after: int) -> tuple[list[dict[str, Any]], bool]:
    """The run's events after `after` and whether the run is terminal (one snapshot)."""
    with st.db.read() as s:
        run = s.get(RunRow, run_id)
        if run is None:
            return [], True
        rows = list(
            s.scalars(
                select(EventRow)
                .where(EventRow.run_id == run_id, EventRow.sequence > after)
                .order_by(EventRow.sequence)
            )
        )
        return [event_view(e) for e in rows], run.status in TERMINAL_STATUSES


def _frame(event: dict[str, Any]) -> bytes:
    data = json.dumps(event, separators=(",", ":"), ensure_ascii=False)
    return f"id: {event['sequence']}\nevent: {event['type']}\ndata: {data}\n\n".encode()


@router.get(
    "/runs/{run_id}/events",
    response_model=schemas.RunEvents,
    responses={
        200: {
            "description": "The run's events: JSON, or an SSE stream with "
            "`Accept: text/event-stream` (frames `id: <sequence>`, `event: <type>`, "
            "`data: <Event JSON>`; honours `Last-Event-ID`; closes after the terminal event)",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        },
        **schemas.errors(400, 401, 403, 404),
    },
    openapi_extra=schemas.parameters(schemas.LAST_EVENT_ID),
    summary="The run's events, as JSON or as a live SSE stream",
)
async def run_events(run_id: str, request: Request, st: StateDep) -> Response:
    who = st.tokens.require(request, "run.read")
    wants_sse = "text/event-stream" in request.headers.get("accept", "")
    after = 0
    last_id = request.headers.get("last-event-id")
    if wants_sse and last_id is not None and last_id.strip() != "":
        text = last_id.strip()
        if not text.isascii() or not text.isdigit():
            raise bad_request("Last-Event-ID must be an event sequence")
        after = sequence_after(int(text) if len(text.lstrip("0")) <= 18 else 2**62)

    def check() -> None:
        with st.db.read() as s:
            _require_run(s, run_id, who)

    await st.run(check)
    if not wants_sse:
        items, _ = await st.run(lambda: _read_after(st, run_id, 0))
        return JSONResponse({"items": items})

    keepalive = min(st.settings.sse_keepalive, KEEPALIVE_SECONDS)

    async def stream() -> AsyncIterator[bytes]:
        cursor = after
        last_write = time.monotonic()
        while True:
            wake = st.notifier.waiter(run_id)
            items, terminal = await st.run(partial(_read_after, st, run_id, cursor))
            for item in items:
                cursor = item["sequence"]
                yield _frame(item)
                last_write = time.monotonic()
            if terminal:
                st.notifier.release(run_id, wake)
                return
            remaining = keepalive - (time.monotonic() - last_write)
            if remaining <= 0:
                yield b": keep-alive\n\n"
                last_write = time.monotonic()
                continue
            await wait_for(wake, min(POLL_SECONDS, remaining))

    return StreamingResponse(
        stream(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@router.post(
    "/runs/{run_id}/cancel",
    status_code=202,
    response_model=schemas.RunView,
    responses=schemas.errors(401, 403, 404),
    summary="Ask a run to stop at its next step",
)
async def cancel_run(run_id: str, request: Request, st: StateDep) -> Response:
    who = st.tokens.require(request, "run.cancel")

    def work() -> dict[str, Any]:
        with st.db.write() as s:
            run = _require_run(s, run_id, who)
            if run.status not in TERMINAL_STATUSES and not run.cancel_requested:
                request_cancel(s, run_id)
                s.refresh(run)
            return run_view(run)

    view = await st.run(work)
    st.notifier.notify(run_id)
    return JSONResponse(view, status_code=202)
