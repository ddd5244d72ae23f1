"""Routes 7–9: a run, its events (JSON or SSE with replay, live tail and resume), cancel."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse
from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.types import Receive, Scope, Send

from server_stub.db.engine import Database
from server_stub.db.models import EventRow, RunRow
from server_stub.domain.feeds import StreamLimitReached
from server_stub.domain.history import (
    TERMINAL_STATUSES,
    event_view,
    owned_run,
    request_cancel,
    run_view,
)
from server_stub.edge import schemas
from server_stub.edge.auth import Principal
from server_stub.edge.errors import bad_request, not_found, unavailable
from server_stub.routes.common import sequence_after
from server_stub.state import AppState, get_state

router = APIRouter(tags=["runs"])
StateDep = Annotated[AppState, Depends(get_state)]

RUN_NOT_FOUND = "run not found"
KEEPALIVE_SECONDS = 15.0


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


def read_after(db: Database, run_id: str, after: int) -> tuple[list[dict[str, Any]], bool]:
    """The run's events after `after` and whether the run is terminal (one snapshot)."""
    with db.read() as s:
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
        items, _ = await st.run(lambda: read_after(st.db, run_id, 0))
        return JSONResponse({"items": items})

    keepalive = min(st.settings.sse_keepalive, KEEPALIVE_SECONDS)
    try:
        st.feeds.reserve(who.tenant, who.principal)
    except StreamLimitReached as exc:
        st.repeat_log.warning(
            f"stream-cap-{exc.scope}",
            "event stream refused (503): the %s cap of %d streams is reached",
            exc.scope,
            exc.limit,
        )
        if exc.scope == "process":
            raise unavailable(
                "the server holds as many event streams as it can; retry later",
                {"reason": "server_busy", "limit": exc.limit},
            ) from exc
        raise unavailable(
            "too many concurrent event streams for this principal; retry later",
            {"reason": "too_many_streams", "limit": exc.limit},
        ) from exc

    async def stream() -> AsyncIterator[bytes]:
        # aclosing: a client that leaves unsubscribes from the run's feed at once, not when
        # the garbage collector finalizes the generator.
        async with contextlib.aclosing(st.feeds.follow(run_id, after, keepalive)) as items:
            async for item in items:
                yield b": keep-alive\n\n" if item is None else _frame(item)

    return _CountedStream(
        stream(),
        release=lambda: st.feeds.unreserve(who.tenant, who.principal),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


class _CountedStream(StreamingResponse):
    """A stream that gives its slot of the per-principal cap back however it ends (also when
    the client left before the first byte, when the body generator never ran)."""

    def __init__(self, content: AsyncIterator[bytes], release: Callable[[], None], **kw: Any):
        super().__init__(content, **kw)
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._release()


@router.post(
    "/runs/{run_id}/cancel",
    status_code=202,
    response_model=schemas.RunView,
    responses=schemas.errors(401, 403, 404, 429),
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
