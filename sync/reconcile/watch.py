"""One open watch on the session index (CONTRACT §9.1): a change on the server is a reconcile
trigger at once, instead of at the next 30 s tick.

The loop asks `GET /v1/sessions` with the ETag of the last conclusive pass, `If-None-Match`
and `Prefer: wait=N`. A 200 means the index moved: the engine runs a (coalesced) pass, whose
new ETag the next watch carries. A 304 with `Preference-Applied` means N quiet seconds: ask
again. A 304 *without* it means the server does not hold watches: the loop ends and the
engine keeps its other triggers (connect, foreground, 30 s), which never stopped. A 200
without it says nothing about support (a stale ETag answers at once on any server), unless
it carries the very ETag that was sent (a server that ignores `If-None-Match`: also the end).

Errors (network, 5xx, 401…) back off exponentially with jitter, so that a fleet of clients
does not come back in step after an outage; a conclusive pass (e.g. the reconnect trigger)
cuts the pause short. The watch never touches the mirror or the status line itself: the
passes it triggers do.

A dead connection (decision 0100): a held watch that hears nothing `margin` seconds past
its `wait` has lost its connection (a middlebox that stopped forwarding; a vanished peer
ends sooner, through TCP keepalive, `sync.api.keepalive`). And a conclusive pass re-arms the
watch at once (`kick`): out of a backoff pause, and out of a held request that the pass
proved deaf, because the index moved past the ETag it holds for (the server answers a
change within 100 ms), or because it has been held longer than `wait + margin` (timers
that did not run while the host was suspended).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import Enum

from sync.api.client import WATCH_READ_MARGIN, ApiClient, WatchAnswer
from sync.errors import SyncError

log = logging.getLogger(__name__)

#: Below the server's 60 s cap and common proxy idle timeouts, and short enough that a
#: connection a middlebox stopped forwarding is noticed within `DEFAULT_WAIT +
#: WATCH_READ_MARGIN` seconds, for a modest number of held requests an hour (decision 0100).
DEFAULT_WAIT = 20
#: A pass that finds the index past the held watch's ETag gives the watch this long to
#: answer (the server's answer is due within 100 ms of the commit) before calling it deaf.
DEAF_GRACE = 1.0


def _elapsed_clock() -> float:
    """Seconds on a clock that keeps counting while the host is suspended (Linux's
    CLOCK_BOOTTIME; `time.monotonic` elsewhere), so a watch held across a suspend is seen
    as held too long."""
    boottime = getattr(time, "CLOCK_BOOTTIME", None)
    if boottime is not None:
        return time.clock_gettime(boottime)
    return time.monotonic()


class WatchState(Enum):
    OFF = "off"  # not started, or stopped
    WATCHING = "watching"  # a watch is open (or about to be)
    BACKOFF = "backoff"  # the last attempt failed; waiting before the next
    UNSUPPORTED = "unsupported"  # the server does not hold watches: triggers alone


@dataclass
class Backoff:
    """Exponential backoff with "equal jitter": attempt n waits a random time between half
    and all of `min(maximum, initial * factor**n)`, so retries spread out but still grow.

    The gentle factor keeps the gap after a short outage (a server restart) under a second,
    where doubling would leave several seconds; a long outage still reaches the `maximum`
    after about a dozen attempts."""

    initial: float = 0.25
    factor: float = 1.5
    maximum: float = 30.0
    rng: random.Random = field(default_factory=random.Random)
    attempt: int = 0

    def next_delay(self) -> float:
        ceiling: float = min(self.maximum, self.initial * self.factor ** min(self.attempt, 64))
        self.attempt += 1
        return ceiling / 2 + self.rng.uniform(0, ceiling / 2)

    def reset(self) -> None:
        self.attempt = 0


class IndexWatch:
    """The watch loop of one engine. `start()` on the loop, `await stop()` to end it."""

    def __init__(
        self,
        api: ApiClient,
        *,
        current_etag: Callable[[], Awaitable[str | None]],
        changed: Callable[[], Awaitable[bool]],
        settled: Callable[[], Awaitable[bool]] | None = None,
        wait: int = DEFAULT_WAIT,
        margin: float = WATCH_READ_MARGIN,
        backoff: Backoff | None = None,
        clock: Callable[[], float] = _elapsed_clock,
        limit: int = 1,
    ) -> None:
        """`current_etag`: the ETag of the last conclusive pass (None: none yet).
        `changed`: run a pass (coalesced with the other triggers); True when it concluded.
        `settled`: like `changed`, but joining a pass already running (for a first ETag);
        default `changed`. `margin`: silence past `wait` that is a dead connection.
        `limit`: the page size asked (the walk's: its 200 is the pass's first page)."""
        self.api = api
        self.limit = limit
        self.wait = wait
        self.margin = margin
        self._clock = clock
        self._held_etag: str | None = None
        self._held_since = 0.0
        self.backoff = backoff or Backoff()
        self._current_etag = current_etag
        self._changed = changed
        self._settled = settled or changed
        self._task: asyncio.Task[None] | None = None
        self._kick = asyncio.Event()
        self.state = WatchState.OFF
        self.answers = 0  # watch responses received (tests and the QA harness read it)
        self.failures = 0  # attempts that ended in an error (a dead connection included)
        self.rearms = 0  # held requests a conclusive pass proved deaf and replaced

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done() and not self._task.cancelling()

    def start(self) -> None:
        if self.running:
            return
        self.state = WatchState.WATCHING
        self._task = asyncio.get_running_loop().create_task(self._run(), name="index-watch")

    async def stop(self) -> None:
        """Cancel the open watch (its HTTP request is closed) and wait for the loop to end."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.state is not WatchState.UNSUPPORTED:
            self.state = WatchState.OFF

    def cancel(self) -> None:
        """`stop()` without waiting (from synchronous code; the task ends on the loop, and a
        later `stop()` still waits for that end)."""
        if self._task is not None:
            self._task.cancel()
        if self.state is not WatchState.UNSUPPORTED:
            self.state = WatchState.OFF

    def kick(self) -> None:
        """A pass concluded: end a backoff pause now (the server is reachable again), and
        let a held request be checked for deafness (`_deaf`)."""
        self._kick.set()

    async def _deaf(self, request: asyncio.Future[WatchAnswer]) -> bool:
        """After a conclusive pass: is the held request one that will never answer?"""
        if self._clock() - self._held_since > self.wait + self.margin:
            return True
        if await self._current_etag() == self._held_etag:
            return False  # nothing it should have told yet
        await asyncio.wait({request}, timeout=DEAF_GRACE)
        return not request.done()

    async def _hold(self, etag: str) -> WatchAnswer | None:
        """One held watch; None when a conclusive pass proved it deaf (it was cancelled)."""
        request = asyncio.ensure_future(
            self.api.watch_sessions(etag, self.wait, self.margin, limit=self.limit)
        )
        self._held_etag, self._held_since = etag, self._clock()
        try:
            while True:
                self._kick.clear()
                kicked = asyncio.ensure_future(self._kick.wait())
                try:
                    await asyncio.wait({request, kicked}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    kicked.cancel()
                if request.done():
                    return request.result()
                if await self._deaf(request):
                    log.info("index watch: a pass proved the held watch deaf; re-arming")
                    self.rearms += 1
                    return None
        finally:
            if not request.done():
                request.cancel()
                with contextlib.suppress(asyncio.CancelledError, SyncError):
                    await request
            elif not request.cancelled():
                request.exception()  # one that failed as the watch stopped: nobody's to hear

    async def _pause(self) -> None:
        self.state = WatchState.BACKOFF
        delay = self.backoff.next_delay()
        self._kick.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._kick.wait(), delay)
        self.state = WatchState.WATCHING

    async def _run(self) -> None:
        while True:
            try:
                if await self._step():
                    return
            except Exception:
                # Not a network or server condition (those are SyncErrors, handled in the
                # step): a bug or a local fault, e.g. reading the mirror's ETag. Ending the
                # task here left `state` at WATCHING with nothing open; pause and go on.
                log.exception("index watch: unexpected error; backing off")
                await self._pause()

    async def _step(self) -> bool:
        """One watch (and the pass its answer calls for); True when the loop should end."""
        etag = await self._current_etag()
        if etag is None:
            # No conclusive pass yet (or the mirror's ETag was cleared): make one.
            if not await self._settled():
                await self._pause()
                return False
            etag = await self._current_etag()
            if etag is None:
                log.info("index watch: the server gives no ETag; triggers alone")
                self.state = WatchState.UNSUPPORTED
                return True
        try:
            answer = await self._hold(etag)
        except SyncError as exc:
            log.info("index watch failed (%s); backing off", exc.message)
            self.failures += 1
            await self._pause()
            return False
        if answer is None:  # re-armed: the server is reachable, ask again at once
            self.backoff.reset()
            return False
        self.answers += 1
        if not answer.changed:
            if not answer.applied:
                log.info("index watch: the server does not hold watches; triggers alone")
                self.state = WatchState.UNSUPPORTED
                return True
            self.backoff.reset()
            return False
        if not answer.applied and answer.etag == etag:
            # 200 for the very ETag we sent: the server ignores If-None-Match, so every
            # watch would answer at once (a busy loop of passes). Triggers alone.
            log.info("index watch: the server ignores If-None-Match; triggers alone")
            self.state = WatchState.UNSUPPORTED
            return True
        # A 200 without Preference-Applied is a stale ETag (the index moved on during
        # the last pass, e.g. a run streaming events): a real change, not a fault.
        if await self._changed():
            self.backoff.reset()
        else:
            await self._pause()
        return False
