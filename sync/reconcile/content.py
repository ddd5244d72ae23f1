"""The pass's content phase: mirror the transcripts the index walk showed to have moved
(CONTRACT §11).

After a pass has committed its rows (rows first: the sidebar never waits for content), the
engine kicks this phase in the background. It asks the mirror for the conversations whose
row's `updated_at` differs from the one their transcript was fetched at, newest first, and
fetches for each only the events after its mirrored sequence (`GET
/v1/sessions/{id}/events?after=N`, `next_after` followed while the server gives one). An
unchanged conversation costs no request; a conversation with one new message costs one.
While the engine watches the index, every change on the server is a pass, and a run moves
its row at every step: phases then start at most every `WATCHING_PACE` seconds, so one
fetch takes what several passes showed (`pace`; without a watch, as in `converge sync`,
a phase starts at once).

Conversations are fetched `CONCURRENCY` at a time, by a few workers that take them in turn
(newest first): every request waits out the link's round trip, so on a slow link the
requests in flight, not the server, decide how much a phase (or `converge sync`, which has
one deadline for its pass and its phase: `deadline`) fetches. Each page is stored in its
own transaction (`Mirror.store_events`), so an interrupted phase (a network error, the
engine closing, its time budget) keeps what it stored and the next one goes on from there.
A transcript is bounded as `sync.api.conversation.transcript` bounds it
(pages, events, bytes: `Bounds.transcript_*`); one past its bounds keeps what fitted and is
not asked again until its row moves. After each conversation whose store found more held
than the size budget (`Profile.content_budget`; read in the store's own transaction), the
budget is enforced: the least recently active transcripts, with their
cached artifact files, are evicted (rows stay), and once the conversation just fetched is
itself the one evicted, the phase stops (every older one would be evicted too). An eviction
can take a conversation another worker is fetching (an older one, partly stored): its
fetch stops before its next page, which would no longer follow what the mirror holds, so
this object's stores and evictions take turns (`_writes`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sync.api.bounds import WalkGuard, operation_deadline
from sync.errors import MirrorError, NotFound, SyncError, WalkOutOfBounds, loggable
from sync.files.cache import remove_cached_files
from sync.mirror.store import Mirror
from sync.mirror.transcripts import TranscriptState
from sync.reconcile.ports import TranscriptApi

log = logging.getLogger(__name__)

#: Stale conversations read from the mirror at a time.
BATCH = 100
#: Events asked per page (the route's maximum).
EVENTS_PAGE = 1000
#: Conversations fetched at once, as many as the pass's point reads: each request waits out
#: the link's round trip, so the link's latency, not the server, set the pace of one at a
#: time; a bound keeps one device's share of the server's work small.
CONCURRENCY = 8
#: One phase's time budget; the next pass's phase goes on where it stopped.
PHASE_SECONDS = 300.0
#: Seconds between the starts of two phases while the engine watches the index: a watching
#: device passes at every change, and fetching after each pass would cost it a request per
#: conversation per pass; the pace cuts the event requests and the fleet's latency
#: (`python -m bench scale`). Transcripts trail their rows by at most this much.
WATCHING_PACE = 1.0


@dataclass
class ContentReport:
    """What one phase did: conversations fetched, requests made, transcripts evicted."""

    fetched: list[str] = field(default_factory=list)
    evicted: list[str] = field(default_factory=list)
    requests: int = 0
    error: SyncError | None = None
    duration: float = 0.0
    #: The phase fetched every stale conversation it found (no error, not cut short, none
    #: evicted under its fetch): only a pass that writes rows makes another one stale.
    drained: bool = False


class ContentSync:
    """Runs content phases for one engine, one at a time; `kick()` after each pass."""

    def __init__(
        self,
        api: TranscriptApi,
        mirror: Mirror,
        cache_dir: Path | None,
        budget: int,
        on_changed: Callable[[tuple[str, ...]], None],
        *,
        page_limit: int = EVENTS_PAGE,
        phase_seconds: float = PHASE_SECONDS,
        concurrency: int = CONCURRENCY,
    ) -> None:
        self.api = api
        self.mirror = mirror
        self.cache_dir = cache_dir
        self.budget = budget
        self.page_limit = page_limit
        self.phase_seconds = phase_seconds
        self.concurrency = max(1, concurrency)
        #: Least seconds between the starts of two phases (the engine sets `WATCHING_PACE`
        #: while it watches the index); 0: a kick starts a phase at once.
        self.pace = 0.0
        #: When every phase must have ended, on the event loop's clock: `converge sync`'s
        #: one deadline for its pass and its phase. None: `phase_seconds` alone.
        self.deadline: float | None = None
        self._started = -math.inf  # the last phase's start, on the event loop's clock
        self._on_changed = on_changed
        self._task: asyncio.Task[None] | None = None
        self._again = False
        self._idle = asyncio.Event()
        self._idle.set()
        self.last_report: ContentReport | None = None
        # Stores and evictions take turns, so a fetch sees an eviction of its conversation
        # before it stores the next page (see the module docstring).
        self._writes = asyncio.Lock()
        self._evictions = 0  # evictions made so far
        self._over_budget = True  # a store found more held than the budget (at first: unknown)
        self._evicted_at: dict[str, int] = {}  # a conversation's last eviction's number
        self._drained = False  # the last phase's `ContentReport.drained`

    @property
    def behind(self) -> bool:
        """Whether a phase may find something to fetch that no pass's new or moved row will
        announce: until a phase drained what it found (at first: unknown)."""
        return not self._drained

    def kick(self) -> None:
        """Start a phase, or fold this request into one more after the running one."""
        if self._task is not None and not self._task.done():
            self._again = True
            return
        self._idle.clear()
        self._task = asyncio.get_running_loop().create_task(self._drive())

    async def wait_idle(self) -> None:
        """Until no phase runs nor is due (tests, `converge sync`)."""
        await self._idle.wait()

    async def _drive(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                wait = self._started + self.pace - loop.time()
                if wait > 0:  # kicks meanwhile fold into this phase
                    await asyncio.sleep(wait)
                self._started = loop.time()
                self._again = False
                self._drained = False
                try:
                    self.last_report = await self.run()
                    self._drained = self.last_report.drained
                except MirrorError as exc:
                    log.warning("content phase stopped: %s", loggable(exc))
                if not self._again:
                    return
        finally:
            self._idle.set()

    async def aclose(self) -> None:
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._idle.set()

    async def backlog(self) -> int:
        """How many conversations a phase would still fetch (`converge sync` says it)."""
        return len(await asyncio.to_thread(self.mirror.stale_transcripts, -1))

    async def run(self) -> ContentReport:
        """One phase (see the module docstring)."""
        report = ContentReport()
        started = time.monotonic()
        loop = asyncio.get_running_loop()
        ends = loop.time() + self.phase_seconds
        if self.deadline is not None:
            ends = min(ends, self.deadline)
        try:
            # A rate-limit wait is only worth taking if it ends before the phase must.
            with operation_deadline(ends - loop.time()):
                async with asyncio.timeout_at(ends):
                    await self._phase(report)
            report.drained = report.error is None and report.drained
        except TimeoutError:
            log.info("content phase at its time budget; the next pass goes on")
        if report.error is not None:
            log.info("content phase stopped: %s", loggable(report.error))
        report.duration = time.monotonic() - started
        return report

    async def _phase(self, report: ContentReport) -> None:
        """The title entries the passes left pending, a transaction a batch (decision 0238);
        then `concurrency` workers fetching the stale conversations in turn, newest first,
        until none is left, one meets an error, or the budget evicts what was just stored."""
        while await asyncio.to_thread(self.mirror.index_titles):
            pass
        queue: deque[tuple[TranscriptState, int]] = deque()  # with the evictions made then
        taken: set[str] = set()  # queued or being fetched
        skipped: set[str] = set()  # answered 404 this phase (the pass will prune them)
        refill = asyncio.Lock()
        drained = False  # the last read found every stale conversation
        stop = False
        behind = False  # a conversation left for the next phase

        async def take() -> tuple[TranscriptState, int] | None:
            nonlocal drained
            async with refill:
                if not queue and not drained and not stop:
                    # Those taken before the read began: one finished during the read is
                    # still stale in what it returns.
                    excluded = taken | skipped
                    asked = BATCH + len(excluded)
                    seen = self._evictions
                    found = await asyncio.to_thread(self.mirror.stale_transcripts, asked)
                    drained = len(found) < asked  # a pass meanwhile kicks one more phase
                    for state in found:
                        if state.session_id not in excluded:
                            queue.append((state, seen))
                            taken.add(state.session_id)
                return queue.popleft() if queue and not stop else None

        async def worker() -> None:
            nonlocal stop, behind
            try:
                while (item := await take()) is not None:
                    state, seen = item
                    try:
                        changed = await self.fetch(state, report, seen=seen)
                    except NotFound:
                        skipped.add(state.session_id)
                        continue
                    finally:
                        taken.discard(state.session_id)
                    if self._evicted_at.get(state.session_id, -1) >= seen:
                        skipped.add(state.session_id)  # evicted mid-fetch: the next phase's
                        behind = True
                    if changed:
                        report.fetched.append(state.session_id)
                        self._on_changed((state.session_id,))
                    evicted = await self._enforce_budget() if self._over_budget else []
                    report.evicted.extend(evicted)
                    if state.session_id in evicted:
                        stop = True  # every older one would be evicted too
            except SyncError as exc:  # offline, a 5xx, the mirror: the next pass retries
                report.error = report.error or exc
                stop = True

        async with asyncio.TaskGroup() as workers:
            for _ in range(self.concurrency):
                workers.create_task(worker())
        report.drained = not behind

    async def fetch(
        self,
        state: TranscriptState,
        report: ContentReport | None = None,
        *,
        seen: int | None = None,
    ) -> bool:
        """Fetch and store what the mirror lacks of one conversation; returns whether
        anything was stored. NotFound and network errors propagate. `seen`: the evictions
        made when `state` was read; one of this conversation since then ends the fetch."""
        seen = self._evictions if seen is None else seen
        bounds = self.api.bounds
        guard = WalkGuard(
            "conversation log",
            bounds.transcript_pages,
            bounds.transcript_events,
            bounds.transcript_bytes,
            consequence="only its first part is kept on this device",
        )
        after = state.up_to or None
        stored = False
        while True:
            page = await self.api.session_events(
                state.session_id, after=after, limit=self.page_limit
            )
            if report is not None:
                report.requests += 1
            last = page.next_after is None or not page.items
            try:
                guard.page(len(page.items), page.nbytes)
                if not last:
                    guard.after(page.next_after)  # type: ignore[arg-type]
            except WalkOutOfBounds as exc:
                log.warning("transcript %s: %s", state.session_id, loggable(exc))
                last = True  # keep what fitted; asked again only when the row moves
            async with self._writes:
                if self._evicted_at.get(state.session_id, -1) >= seen:
                    return stored  # evicted meanwhile: this page would not follow on
                kept, held = await asyncio.to_thread(
                    self.mirror.store_events_held,
                    state.session_id,
                    page.items,
                    fetched_at=state.updated_at if last else None,
                )
                self._over_budget = self._over_budget or held > self.budget
            if not kept:
                return stored  # deleted or pruned meanwhile: nothing of it stays
            stored = stored or bool(page.items)
            if last:
                return stored
            after = page.next_after

    async def _enforce_budget(self) -> list[str]:
        async with self._writes:
            self._over_budget = False
            evicted, files = await asyncio.to_thread(self.mirror.evict_over_budget, self.budget)
            if evicted:
                for session_id in evicted:
                    self._evicted_at[session_id] = self._evictions
                self._evictions += 1
        if files:
            await asyncio.to_thread(remove_cached_files, self.cache_dir, files)
        if evicted:
            log.info("content budget: %d transcripts evicted", len(evicted))
        return evicted

    async def refresh(self, session_id: str) -> bool:
        """Fetch what the mirror lacks of one conversation when it is evicted or behind its
        row (the window opening it); True when events were added. Raises SyncError."""
        seen = self._evictions
        state = await asyncio.to_thread(self.mirror.transcript_state, session_id)
        if state is None or (state.current and not state.evicted):
            return False
        changed = await self.fetch(state, seen=seen)
        if changed:
            self._on_changed((session_id,))
        return changed
