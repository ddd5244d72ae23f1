"""Opening a conversation: the whole event log, and following a live run over SSE.

`follow_run` survives a dropped connection: it reconnects with `Last-Event-ID` set to the
last sequence it delivered, so the server replays only what was missed, and it drops any
frame it has already delivered; after a 503 it waits the server's `Retry-After` (when short
enough, else it ends with the error). A stream past its bounds (`sync.api.sse`) is not
reconnected to: it ends with `ResponseTooLarge` or `ResponseTooSlow`. It ends after the
run's terminal event. Consumers that want to stop early should cancel the consuming task
rather than `break` (PITFALLS §2).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

from sync.api.bounds import WalkGuard
from sync.api.client import ApiClient
from sync.errors import NetworkError, ResponseTooSlow, ServerError, Unavailable, loggable
from sync.wire.models import Event

log = logging.getLogger(__name__)


async def transcript(api: ApiClient, session_id: str, *, page_limit: int = 1000) -> list[Event]:
    """Every event of the session, all pages, in sequence order.

    Bounded (`sync.api.bounds`): `next_after` must strictly increase, and the pages, events and
    bytes in all have caps; past one, `WalkOutOfBounds` (export and the pane show it)."""
    bounds = api.bounds
    guard = WalkGuard(
        "conversation log",
        bounds.transcript_pages,
        bounds.transcript_events,
        bounds.transcript_bytes,
        consequence="the conversation could not be read whole",
    )
    events: list[Event] = []
    after: int | None = None
    while True:
        page = await api.session_events(session_id, after=after, limit=page_limit)
        guard.page(len(page.items), page.nbytes)
        events.extend(page.items)
        if page.next_after is None or not page.items:
            return events
        guard.after(page.next_after)
        after = page.next_after


async def follow_run(
    api: ApiClient,
    run_id: str,
    *,
    after: int | None = None,
    max_reconnects: int = 20,
    reconnect_delay: float = 0.25,
) -> AsyncIterator[Event]:
    """The run's events from `after` (exclusive) to its terminal event, resuming on drops."""
    last = after
    failures = 0
    while True:
        try:
            async for event in api.stream_run_events(run_id, last_event_id=last):
                if last is not None and event.sequence <= last:
                    continue  # already delivered before the reconnect
                last = event.sequence
                failures = 0
                yield event
                if event.is_terminal:
                    return
        except (NetworkError, ServerError) as exc:
            failures += 1
            if failures > max_reconnects or isinstance(exc, ResponseTooSlow):
                raise  # a trickled event (`sync.api.sse`) would be trickled again
            delay = min(reconnect_delay * failures, 2.0)
            if isinstance(exc, Unavailable) and exc.retry_after is not None:
                # A 503 (the server's stream cap, its database): come back when it asked,
                # or, past the longest wait we take, end with its sentence.
                if exc.retry_after > api.bounds.retry_after_seconds:
                    raise
                delay = exc.retry_after
            log.info("run %s stream dropped (%s); resuming after %s", run_id, loggable(exc), last)
            await asyncio.sleep(delay)
            continue
        # The server closed the stream without a terminal event: the run may have ended
        # between frames, or the stream was cut cleanly. Ask before reconnecting.
        run = await api.get_run(run_id)
        if run.is_terminal:
            for event in await api.run_events(run_id):
                if last is None or event.sequence > last:
                    last = event.sequence
                    yield event
            return
        failures += 1
        if failures > max_reconnects:
            raise NetworkError(f"The event stream of run {run_id} keeps closing early.")
        await asyncio.sleep(min(reconnect_delay * failures, 2.0))
