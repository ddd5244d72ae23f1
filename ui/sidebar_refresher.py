"""Keeps the sidebar model equal to the mirror: by deltas, and by a full read when needed.

A mirror write reaches the window as `sync.IndexChanged`, which carries the written rows'
values, the removed ids, the write's `seq` and `after` (the seq of the mirror's previous
row-changing write). The refresher applies each delta in place (`ui.sidebar_delta`): a
pass that changes one row costs the UI thread a few bisections and one row signal. It
reads the mirror whole (and diffs, `SessionListModel.update`) only at start, when the
filter or the day changes, after the window's own writes (create, delete), and when a
delta's `after` is not the last seq it applied: it missed a write, and the full read is
the resync.

One loop does both, one step at a time, so a delta is never applied halfway through a
sliced diff; events arriving meanwhile queue up and the loop runs again (the coalescing).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from datetime import datetime
from typing import Any

from sync import IndexChanged, SessionRow, full_collections_deferred
from ui.grouping import group_rows
from ui.relative_time import server_now
from ui.session_model import SessionListModel, SidebarRow
from ui.sidebar_delta import NeedsResync, apply_delta

log = logging.getLogger(__name__)

type RowSource = Callable[[str], Awaitable[list[SessionRow]]]
type Spawn = Callable[[Coroutine[Any, Any, Any], str], object]

#: A delta larger than this (a cold pass, a mass change) goes the full-read way: the sliced
#: diff plans it as moves and a layout change, while row-by-row signals would cost a view
#: of 100,000 rows a relayout each.
DELTA_LIMIT = 2_000
#: Rows of a delta applied between two looks at the clock, and the UI-thread budget of one
#: slice (the rest waits for the next event-loop iteration).
DELTA_CHUNK = 4
SLICE_SECONDS = 0.005


class SidebarRefresher:
    """The one place that changes the sidebar model's rows."""

    def __init__(
        self,
        model: SessionListModel,
        *,
        spawn: Spawn,
        on_applied: Callable[[], None],
        group_by_date: bool = True,
    ) -> None:
        self.model = model
        self.group_by_date = group_by_date
        self.filter_text = ""
        self.searching = False  # search results shown: a write re-reads them (ui.sidebar_search)
        #: The filter text of the rows the model shows; None while a full read's rows are
        #: being applied (or were superseded). Set when the model says `updated`.
        self.shown_filter: str | None = None
        self._bringing: str | None = None
        self._waiter: tuple[str, Callable[[], None]] | None = None  # `when_shown`
        model.updated.connect(self._model_updated)
        self._spawn = spawn
        self._on_applied = on_applied
        self._source: RowSource | None = None
        self._change_seq: Callable[[], int] | None = None
        self._seen: int | None = None  # the mirror's change seq the model shows; None: unknown
        self._grouped_at: datetime | None = None  # the `now` of the shown date sections
        self._deltas: list[IndexChanged] = []
        self._full = True
        self._running = False
        self._again = False
        self._epoch = 0  # bumped by set_source: a delta sliced across it is abandoned

    def set_source(
        self, source: RowSource | None, change_seq: Callable[[], int] | None = None
    ) -> None:
        """Where rows come from; `change_seq` (`SyncEngine.last_change_seq`) when deltas
        follow. The next step is a full read."""
        self._epoch += 1
        self._source = source
        self._change_seq = change_seq
        self._seen = None
        self._deltas.clear()
        self._full = True

    def set_filter(self, text: str) -> None:
        self.filter_text = text.strip()
        self.request_full()

    def shows(self, text: str) -> bool:
        """Whether the model shows the rows for filter `text` (all of them, not a read in
        flight or a diff half applied); with no source there is nothing to wait for."""
        return self._source is None or (
            self.shown_filter == text.strip() and text.strip() == self.filter_text
        )

    def when_shown(self, text: str, then: Callable[[], None]) -> bool:
        """True when the model shows the rows for `text`; else `then` is called once it
        does (a later call replaces the earlier one's `then`)."""
        if self.shows(text):
            self._waiter = None
            return True
        self._waiter = (text, then)
        return False

    def _model_updated(self) -> None:
        if self._bringing is not None:
            self.shown_filter, self._bringing = self._bringing, None
        waiter = self._waiter
        if waiter is not None and self.shows(waiter[0]):
            self._waiter = None
            waiter[1]()

    def request_full(self) -> None:
        """Re-read the mirror and diff (coalesced: one read at a time)."""
        self._full = True
        self._kick()

    def index_changed(self, event: IndexChanged) -> None:
        """A mirror write: apply its delta (or resync when one was missed)."""
        if self.searching or len(event.rows) + len(event.removed) > DELTA_LIMIT:
            # Applied by a full read, which starts after this write committed. The event is
            # not kept: holding it until the next delta made that delta's step free its
            # rows (a cold pass's 100,000 walked views: 12 ms of the UI thread).
            self.request_full()
            return
        self._deltas.append(event)
        self._kick()

    async def refresh_now(self) -> None:
        """A full read, and wait until the sidebar shows the mirror (tests, start-up)."""
        self._full = True
        if self._running:
            self._again = True
            while self._running:
                await asyncio.sleep(0.01)
            return
        await self._loop()

    def _kick(self) -> None:
        if self._running:
            self._again = True
            return
        self._spawn(self._loop(), "update the list")

    async def _loop(self) -> None:
        if self._source is None:
            return
        self._running = True
        # A full read holds a fresh copy of every row (100,000 objects) while it runs: no
        # full collection over them meanwhile (50 ms, in whichever thread allocates; see
        # sync.gc_pause).
        try:
            with full_collections_deferred():
                while True:
                    self._again = False
                    if self._full or self._seen is None:
                        await self._read_whole()
                    else:
                        await self._apply_deltas()
                    if not (self._again or self._full) or self._source is None:
                        break
        finally:
            self._running = False

    async def _read_whole(self) -> None:
        source = self._source
        if source is None:
            return
        self._full = False
        # Before the read: a write committed after this value is in a later delta (applied
        # again if the read already had it, which changes nothing).
        seen = self._change_seq() if self._change_seq is not None else None
        epoch = self._epoch
        text = self.filter_text
        rows = await source(text)
        if self._full or epoch != self._epoch:  # the filter or the source changed: again
            self._full = True
            return
        self._grouped_at = server_now().astimezone() if self.group_by_date else None
        shown: Sequence[SidebarRow] = rows
        if self._grouped_at is not None:
            shown = group_rows(rows, self._grouped_at)
            await asyncio.sleep(0)  # 2.5 ms for 100,000 rows: the diff's first slice waits
            if self._full or epoch != self._epoch:
                self._full = True
                return
        self.shown_filter, self._bringing = None, text
        if await self.model.update(shown):
            self._seen = seen
            self._on_applied()
        else:
            self._seen = None
            self._bringing = None

    async def _apply_deltas(self) -> None:
        applied = False
        deadline = time.perf_counter() + SLICE_SECONDS
        while self._deltas and not self._full:
            event = self._deltas.pop(0)
            seen = self._seen
            if seen is None:
                break
            if event.seq <= seen:
                continue  # the last full read already had it
            if event.after != seen:
                log.info("sidebar missed a mirror write (after %d, saw %d)", event.after, seen)
                self._full = True
                break
            try:
                for start in range(0, max(len(event.rows), len(event.removed)), DELTA_CHUNK):
                    apply_delta(
                        self.model,
                        event.rows[start : start + DELTA_CHUNK],
                        event.removed[start : start + DELTA_CHUNK],
                        filter_text=self.filter_text,
                        grouped_at=self._grouped_at,
                    )
                    if time.perf_counter() >= deadline:
                        epoch = self._epoch
                        await asyncio.sleep(0)
                        if epoch != self._epoch:
                            return
                        deadline = time.perf_counter() + SLICE_SECONDS
            except NeedsResync as exc:
                log.info("sidebar delta not applicable (%s): re-reading", exc)
                self._full = True
                break
            self._seen = event.seq
            applied = True
        if applied:
            self._on_applied()
