"""The engine's own pass triggers: a TIMER pass every so often, and the index watch.

Both only ask the engine's one `Coalescer` for passes; neither writes the mirror nor the
status line (the passes they trigger do). The window's triggers (connect, foreground,
manual) go through `SyncEngine.trigger` directly; these two run as tasks of their own
until stopped, so they live here, beside the façade that starts and stops them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from sync.api.client import ApiClient
from sync.events import TriggerReason
from sync.mirror.state import ETAG_KEY
from sync.mirror.store import Mirror
from sync.reconcile.reconciler import Coalescer, ReconcileReport
from sync.reconcile.watch import DEFAULT_WAIT, IndexWatch, WatchState

DEFAULT_TIMER_INTERVAL = 30.0


class PassTimer:
    """`trigger(TIMER)` every `interval` seconds between `start` and `stop`."""

    def __init__(
        self, trigger: Callable[[TriggerReason], None], interval: float = DEFAULT_TIMER_INTERVAL
    ) -> None:
        self.interval = interval
        self._trigger = trigger
        self._task: asyncio.Task[None] | None = None

    def start(self, interval: float | None = None) -> None:
        """(Re)start ticking, at `interval` when given; needs a running loop."""
        if interval is not None:
            self.interval = interval
        self.stop()
        self._task = asyncio.get_running_loop().create_task(self._tick())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            self._trigger(TriggerReason.TIMER)


class EngineWatch:
    """One `IndexWatch` (CONTRACT §9.1) wired to the engine: its ETag is the mirror's, a
    change it sees is a coalesced WATCH pass, and it ends when `closed()` says so."""

    def __init__(
        self,
        api: ApiClient,
        mirror: Mirror,
        coalescer: Coalescer,
        closed: Callable[[], bool],
        page_limit: int = 1,
    ) -> None:
        """`page_limit`: the walk's page size, asked by the watch so that its 200 is the
        pass's first page (`sync.reconcile.primed`)."""
        self._api = api
        self._page_limit = page_limit
        self._mirror = mirror
        self._coalescer = coalescer
        self._closed = closed
        self._watch: IndexWatch | None = None
        #: The ETag the pass the watch just asked for concluded with: the next watch asks
        #: with it instead of reading the mirror (taken once; None: read the mirror).
        self._concluded_etag: str | None = None

    def start(self, wait: int = DEFAULT_WAIT) -> None:
        """Open the watch (built on first use) unless the server showed it holds none."""
        if self._watch is None:
            self._watch = IndexWatch(
                self._api,
                current_etag=self._stored_etag,
                changed=self._saw_change,
                settled=self._needs_etag,
                limit=self._page_limit,
            )
        self._watch.wait = wait
        if self._watch.state is not WatchState.UNSUPPORTED:
            self._watch.start()

    async def stop(self) -> None:
        """Cancel the open watch (its request is closed) and wait until it has ended."""
        if self._watch is not None:
            await self._watch.stop()

    def cancel(self) -> None:
        """`stop` for synchronous callers: cancelled, not awaited."""
        if self._watch is not None:
            self._watch.cancel()

    def kick(self) -> None:
        """A conclusive pass: a watch backing off after an error may try again at once."""
        if self._watch is not None:
            self._watch.kick()

    @property
    def state(self) -> WatchState:
        return WatchState.OFF if self._watch is None else self._watch.state

    @property
    def watch(self) -> IndexWatch | None:
        return self._watch

    async def _stored_etag(self) -> str | None:
        etag, self._concluded_etag = self._concluded_etag, None
        if etag is not None and not self._coalescer.busy:  # no later pass stored another
            return etag
        return await asyncio.to_thread(self._mirror.get_state, ETAG_KEY)

    def _concluded(self, report: ReconcileReport) -> bool:
        self._concluded_etag = report.etag if report.ok else None
        return report.ok

    async def _needs_etag(self) -> bool:
        """A conclusive pass for the watch's first ETag: the connect pass usually runs
        already, and joining it saves a second pass."""
        if self._closed():
            return False
        report = await asyncio.shield(self._coalescer.running_or_request(TriggerReason.WATCH))
        return self._concluded(report)

    async def _saw_change(self) -> bool:
        if self._closed():
            return False
        return self._concluded(await asyncio.shield(self._coalescer.request(TriggerReason.WATCH)))
