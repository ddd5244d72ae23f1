"""Keeps the sidebar model equal to the mirror: it pulls what changed since what it shows.

The model shows the mirror at a change sequence (`shown_seq`, decision 0209). A mirror
write reaches the window as `sync.IndexChanged`, which says "changed up to N": when N is
larger than what the model shows, the refresher asks the engine what changed since
(`SyncEngine.changes_since`, read off the UI thread) and applies it in place
(`ui.sidebar.delta`): a pass that changes one row costs the UI thread a few bisections and
one row signal. Events that come late, out of order or not at all cannot leave the list
wrong: the next pull brings whatever the mirror numbered since, whoever wrote it (another
window, `converge sync` in a terminal). It reads the mirror whole (and diffs,
`SessionListModel.update`) at start, when the filter or the day changes, after the
window's own writes, while search results are shown, and when the mirror answers that the
shown number is too old or that more changed than `DELTA_LIMIT`.

One loop does both, one step at a time, so a delta is never applied halfway through a
sliced diff; events arriving meanwhile fold into one more pull (the coalescing).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sync import IndexChanged, SessionView, full_collections_deferred

if TYPE_CHECKING:
    from sync import MirrorChanges
from ui.sidebar.delta import NeedsResync, apply_delta
from ui.sidebar.grouping import group_rows
from ui.sidebar.model import SessionListModel
from ui.sidebar.relative_time import server_now
from ui.sidebar.row import SidebarRow

log = logging.getLogger(__name__)

type RowSource = Callable[[str], Awaitable[list[SessionView]]]
#: `SyncEngine.changes_since(since, filter_text, limit)`.
type ChangeSource = Callable[[int | None, str, int], Awaitable[MirrorChanges]]
type Spawn = Callable[[Coroutine[Any, Any, Any], str], object]

#: A change larger than this (a cold pass, a mass change) goes the full-read way: the sliced
#: diff plans it as moves and a layout change, while row-by-row signals would cost a long
#: view a relayout each (the mirror answers it with the whole rows).
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
        self.searching = False  # search results shown: a write re-reads them (ui.sidebar.search)
        #: The filter text of the rows the model shows; None while a full read's rows are
        #: being applied (or were superseded). Set when the model says `updated`.
        self.shown_filter: str | None = None
        self._bringing: str | None = None
        self._waiter: tuple[str, Callable[[], None]] | None = None  # `when_shown`
        model.updated.connect(self._model_updated)
        self._spawn = spawn
        self._on_applied = on_applied
        self._source: RowSource | None = None
        self._changes: ChangeSource | None = None
        #: The mirror's change sequence the model shows; None: unknown (read whole).
        self.shown_seq: int | None = None
        self._grouped_at: datetime | None = None  # the `now` of the shown date sections
        self._heard = 0  # the largest IndexChanged.seq heard
        self._full = True
        self._running = False
        self._again = False
        self._epoch = 0  # bumped by set_source: a delta sliced across it is abandoned

    def set_source(
        self,
        source: RowSource | None,
        changes: ChangeSource | None = None,
        *,
        keep_seq: bool = False,
    ) -> None:
        """Where rows come from (a search's merged rows, for a filter text), and where the
        changes since a number come from (`SyncEngine.changes_since`) when the model follows
        the mirror's writes. The next step is a full read; with `keep_seq` (the new source
        reads the same mirror file as the one whose rows are shown, unfiltered and complete)
        it is a pull of what changed since the shown number: start-up's hand-over from the
        first paint's reader to the engine, which would otherwise read and diff every row
        again."""
        keep = (
            keep_seq
            and changes is not None
            and self.shown_seq is not None
            and not self._running
            and not self.searching
            and self.filter_text == ""
            and self.shown_filter == ""
        )
        self._epoch += 1
        self._source = source
        self._changes = changes
        if keep:
            self._full = False
            self._kick()  # whatever another process wrote between the two readers
            return
        self.shown_seq = None
        self._heard = 0
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
        """The mirror changed up to `event.seq`: pull what changed since what is shown,
        unless the model already shows that much."""
        if self.searching or self._changes is None:
            self.request_full()  # search results: read again whole (`ui.sidebar.search`)
            return
        self._heard = max(self._heard, event.seq)
        if self.shown_seq is None or event.seq > self.shown_seq or not event.seq:
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
        # A full read holds a fresh copy of every row while it runs: no full collection over
        # them meanwhile (a visible stall in whichever thread allocates; see
        # sync.reconcile.gc_pause).
        try:
            with full_collections_deferred():
                while True:
                    self._again = False
                    if self._full or self.shown_seq is None:
                        await self._read_whole()
                    else:
                        await self._pull()
                    if self.shown_seq is not None and self._heard <= self.shown_seq:
                        self._again = False  # what was heard meanwhile is shown already
                    if not (self._again or self._full) or self._source is None:
                        break
        finally:
            self._running = False

    async def _read_whole(self) -> None:
        source = self._source
        if source is None:
            return
        self._full = False
        epoch = self._epoch
        text = self.filter_text
        if self._changes is not None and not self.searching:
            # The rows and the number they are at, in one read of the mirror.
            whole = await self._changes(None, text, DELTA_LIMIT)
            seq: int | None = whole.seq
            rows = whole.rows
        else:
            seq, rows = None, await source(text)
        if self._full or epoch != self._epoch:  # the filter or the source changed: again
            self._full = True
            return
        await self._show_whole(rows, seq, text, epoch)

    async def _show_whole(
        self, rows: list[SessionView], seq: int | None, text: str, epoch: int
    ) -> None:
        """Diff the model to `rows` (the mirror at `seq`), in slices."""
        self._grouped_at = server_now().astimezone() if self.group_by_date else None
        shown: Sequence[SidebarRow] = rows
        if self._grouped_at is not None:
            shown = group_rows(rows, self._grouped_at)
            await asyncio.sleep(0)  # grouping is a step of its own: the diff's first slice waits
            if self._full or epoch != self._epoch:
                self._full = True
                return
        self.shown_filter, self._bringing = None, text
        if await self.model.update(shown):
            self.shown_seq = seq
            self._on_applied()
        else:
            self.shown_seq = None
            self._bringing = None

    async def _pull(self) -> None:
        """Apply what changed since `shown_seq` (or, when the mirror says so, the whole)."""
        changes, since = self._changes, self.shown_seq
        if changes is None or since is None:
            self._full = True
            return
        epoch, text = self._epoch, self.filter_text
        got = await changes(since, text, DELTA_LIMIT)
        if self._full or epoch != self._epoch or since != self.shown_seq:
            return  # a full read was asked for meanwhile, or the source changed
        if got.whole:
            await self._show_whole(got.rows, got.seq, text, epoch)
            return
        deadline = time.perf_counter() + SLICE_SECONDS
        try:
            for start in range(0, max(len(got.rows), len(got.removed)), DELTA_CHUNK):
                apply_delta(
                    self.model,
                    got.rows[start : start + DELTA_CHUNK],
                    got.removed[start : start + DELTA_CHUNK],
                    filter_text=text,
                    grouped_at=self._grouped_at,
                )
                if time.perf_counter() >= deadline:
                    await asyncio.sleep(0)
                    if epoch != self._epoch or self._full:
                        self.shown_seq = None  # half applied: the next step reads whole
                        return
                    deadline = time.perf_counter() + SLICE_SECONDS
        except NeedsResync as exc:
            log.info("sidebar delta not applicable (%s): re-reading", exc)
            self._full = True
            return
        self.shown_seq = got.seq
        if got.rows or got.removed:
            self._on_applied()
