"""One reconcile pass (CONTRACT §7), and the coalescing of triggers into passes.

A pass: walk the index (limit 200), point-read every mirror row a complete walk did not see,
prune only on 404. The walk is `sync.reconcile.walk`'s: each page is upserted as it arrives, with
the walk's position in `sync_state`, so a walk that a pass cannot finish (the pass deadline,
a network error, a 5xx) keeps what it wrote and the next pass resumes it (`WalkUnfinished`
when the deadline cut it); nothing is pruned until a walk reached its last page. A first 400
on a cursor (the server's key rotated) restarts the walk once from the top; 401/403 or a
second 400 ends the pass (`report.error`). A point read that answers anything but 200 or
404 keeps its row; the pass still writes what it learned, but it did not conclude:
`report.point_read_error` says why, and the engine shows it. The first page's ETag is stored
in the mirror after a conclusive pass, so an unchanged index costs one request.

A pass is bounded (`sync.api.bounds`, CONTRACT §10.1): a total deadline, and a `WalkGuard`
(repeating cursors, a page cap refused; items, bytes and memory a budget per pass, which
ends it as `WalkUnfinished`); a walk past `Bounds.walk_total_items` over all its passes is
abandoned, nothing pruned.
Each write's report goes to `on_report` after it commits, with the change sequence it took
(listeners pull from the mirror, so the order they hear in does not matter, decision 0209).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sync.api.bounds import (
    DEFAULT_BOUNDS,
    Bounds,
    operation_deadline,
    pass_too_slow,
    walk_unfinished,
)
from sync.api.client import PAGE_LIMIT
from sync.errors import MirrorError, NotFound, SyncError, loggable
from sync.events import TriggerReason
from sync.files.cache import remove_cached_files
from sync.mirror.apply import ApplyResult, WalkEnd
from sync.mirror.state import ETAG_KEY, WALK_KEYS, WALK_REFUSED
from sync.mirror.store import Mirror
from sync.reconcile.gc_pause import full_collections_deferred
from sync.reconcile.plan import PointRead, PointReadOutcome, WalkPlan, most_telling, plan_prunes
from sync.reconcile.ports import SessionIndexApi
from sync.reconcile.walk import IndexWalk, PageHook, WalkResult, clear_walk, walk_abandoned

log = logging.getLogger(__name__)


#: Triggers nobody asked for just now: they start no walk after one was abandoned.
UNASKED = frozenset({TriggerReason.TIMER, TriggerReason.WATCH, TriggerReason.FOREGROUND})


@dataclass(frozen=True)
class ReconcileReport:
    """What one pass did.

    `error`: the pass was interrupted (walk cut short, point reads past the deadline, mirror
    not writable): nothing was pruned, but the pages the walk wrote before it stopped stay
    (their ids are in `inserted`/`updated`; the next pass resumes the walk).
    `point_read_error`: the walk was written and 404s pruned, but some point reads were
    inconclusive (401, 403, 5xx, network): those rows are `kept`, and this is the most
    telling of their errors. `ok` only when neither is set.
    """

    reason: TriggerReason
    inserted: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    pruned: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()  # absent from the walk, point read inconclusive: kept
    not_modified: bool = False  # the first page answered 304
    complete: bool = False  # the walk covered the whole index
    restarted: bool = False  # a bad cursor restarted the walk once
    pages: int = 0
    requests: int = 0
    walked: int = 0
    error: SyncError | None = field(default=None, compare=False)
    duration: float = 0.0
    point_read_error: SyncError | None = field(default=None, compare=False)
    seq: int = 0  # the change sequence of the pass's write (0: it changed no row)
    #: The walk found the index changed when it resumed and saw too many rows before the
    #: change to point-read: nothing it saw then is claimed, a fresh walk settles them.
    walk_again: bool = False
    #: The first page's ETag the mirror holds after this pass (None: none, or the pass
    #: did not conclude): the index watch asks with it without reading the mirror again.
    etag: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.point_read_error is None

    @property
    def problem(self) -> SyncError | None:
        """Why the pass did not conclude, whichever way: `error`, else `point_read_error`."""
        return self.error if self.error is not None else self.point_read_error

    @property
    def changed(self) -> bool:
        return bool(self.inserted or self.updated or self.pruned)


class Reconciler:
    """Executes passes against one API client and one mirror. Not re-entrant: use
    `Coalescer` (the engine does) so that only one pass runs at a time."""

    def __init__(
        self,
        api: SessionIndexApi,
        mirror: Mirror,
        *,
        cache_dir: Path | None = None,
        page_limit: int = PAGE_LIMIT,
        point_read_concurrency: int = 8,
        use_etag: bool = True,
        skip: Callable[[str], bool] | None = None,
        page_hook: PageHook | None = None,
        on_report: Callable[[ReconcileReport], None] | None = None,
        bounds: Bounds = DEFAULT_BOUNDS,
    ) -> None:
        self.api = api
        self.bounds = bounds
        self.mirror = mirror
        self.on_report = on_report
        self.cache_dir = cache_dir
        self.page_limit = page_limit
        self.use_etag = use_etag
        self.page_hook = page_hook
        self._skip = skip
        self._point_read_concurrency = max(1, point_read_concurrency)

    async def run_pass(self, reason: TriggerReason = TriggerReason.MANUAL) -> ReconcileReport:
        # The pass's objects are many and acyclic: a full collection in its middle would
        # stall the UI thread for nothing (sync.reconcile.gc_pause).
        with full_collections_deferred():
            return await self._run_pass(reason)

    async def _run_pass(self, reason: TriggerReason) -> ReconcileReport:
        # The pass deadline covers what the server controls (the walk, the point reads),
        # not the local mirror write that follows: cancelling a commit half-way is worse
        # than a slow disk. `operation_deadline` lets a rate-limit wait know it would not fit.
        with operation_deadline(self.bounds.pass_seconds):
            deadline = asyncio.get_running_loop().time() + self.bounds.pass_seconds
            return await self._bounded_pass(reason, deadline)

    async def _bounded_pass(self, reason: TriggerReason, deadline: float) -> ReconcileReport:
        report = await self._lap(reason, deadline)
        if report.walk_again and report.error is None:
            # A fresh walk settles the rows the last one saw before the index changed. It
            # cannot span versions itself: only a walk resumed by a later pass does.
            report = _joined(report, await self._lap(reason, deadline))
        return report

    async def _lap(self, reason: TriggerReason, deadline: float) -> ReconcileReport:
        """One walk's share in this pass, and its conclusion when it reached the end."""
        started = time.monotonic()
        state, rows, held = await asyncio.to_thread(
            self.mirror.pass_start, (ETAG_KEY, *WALK_KEYS), self.page_limit
        )
        if state.get(WALK_REFUSED) and reason in UNASKED:
            # An abandoned walk (an endless index) is said once; only the user or the next
            # start tries again.
            return ReconcileReport(reason=reason, error=walk_abandoned(self.bounds))
        etag = state[ETAG_KEY] if self.use_etag else None
        walker = IndexWalk(
            self.api,
            self.mirror,
            self.bounds,
            page_limit=self.page_limit,
            page_hook=self.page_hook,
            skip=self._skip,
            announce=lambda applied: self._announce_page(reason, applied, started),
            keep_etag=self.use_etag,
        )
        try:
            try:
                async with asyncio.timeout_at(deadline):
                    walk = await walker.run(etag, state, rows, held)
            except TimeoutError:
                part = walker.result
                if part.generation:  # a walk is under way: its pages are kept
                    raise walk_unfinished(part.seen, part.estimate) from None
                raise pass_too_slow(self.bounds.pass_seconds) from None
        except SyncError as exc:
            log.warning(
                "reconcile (%s): walk not finished, nothing pruned: %s", reason.value, loggable(exc)
            )
            return _cut_short(reason, exc, walker.result, started)
        if walk.concluded:  # its last page's write left nothing to point-read
            report = ReconcileReport(
                reason=reason,
                inserted=tuple(walk.inserted),
                updated=tuple(walk.updated),
                complete=True,
                restarted=walk.restarted,
                pages=walk.pages,
                requests=walk.pages,
                walked=walk.walked,
                duration=time.monotonic() - started,
                etag=walk.etag if self.use_etag else None,
            )
            _log_pass(report)
            return report
        if walk.deferred is not None:  # the whole index in one page, not written yet
            plan = WalkPlan(point_reads=sorted(walk.deferred.missing))
            return await self._conclude(
                reason, walk, started, deadline, plan, write_page=walker.write_deferred
            )
        # Deletes whose answer never came (CONTRACT §9.2): the walk settles the ones it lists
        # (they exist); the others are point-read like any row the walk lacks, even when the
        # index answered 304.
        if walk.leftovers is not None and not walk.not_modified:
            # Read by the last page's write, in its transaction (`sync.mirror.apply.WalkEnd`).
            left = walk.leftovers
            marked, unseen, older = left.marked, left.unseen, left.older
        else:
            marked, unseen, older = await asyncio.to_thread(
                self.mirror.walk_leftovers,
                None if walk.not_modified else walk.generation,
                walk.epoch,
            )
        if walk.not_modified:
            if not marked:
                return ReconcileReport(
                    reason=reason,
                    not_modified=True,
                    complete=True,
                    pages=walk.pages,
                    requests=walk.pages,
                    duration=time.monotonic() - started,
                    etag=etag,
                )
            plan = WalkPlan(point_reads=sorted(marked))
            return await self._conclude(reason, walk, started, deadline, plan)
        # Rows seen only before the index changed under a resumed walk (decision 0097) may
        # have been deleted since: point-read when they are few, else walked again.
        again = len(older) > self._point_read_concurrency * max(1, -(-rows // self.page_limit))
        reads = sorted({*unseen, *(() if again else older)})
        settled = sorted(marked.difference(unseen, older))
        return await self._conclude(
            reason, walk, started, deadline, WalkPlan(point_reads=reads), settled, again=again
        )

    def _announce_page(self, reason: TriggerReason, applied: ApplyResult, started: float) -> None:
        """A walked page's write, told to the listeners as it commits (rows first)."""
        if self.on_report is not None:
            self.on_report(
                ReconcileReport(
                    reason=reason,
                    inserted=tuple(applied.inserted),
                    updated=tuple(applied.updated),
                    duration=time.monotonic() - started,
                    seq=applied.seq,
                )
            )

    async def _conclude(
        self,
        reason: TriggerReason,
        walk: WalkResult,
        started: float,
        deadline: float,
        plan: WalkPlan,
        settled: Sequence[str] = (),
        *,
        again: bool = False,
        write_page: Callable[[], Awaitable[None]] | None = None,
    ) -> ReconcileReport:
        """Point-read (within the pass deadline: past it, nothing is written), then write
        the plan and what the reads proved in one transaction, with the walk's page when
        it was kept for this write (`WalkResult.deferred`): that write concludes the walk
        when no row is left unseen, and stores its ETag then; past the deadline,
        `write_page` writes that page alone."""
        try:
            async with asyncio.timeout_at(deadline):
                results = await self._point_read_all(plan.point_reads)
        except TimeoutError:
            error = pass_too_slow(self.bounds.pass_seconds)
            log.warning("reconcile (%s): %s, nothing pruned", reason.value, loggable(error))
            if write_page is not None:  # the walk's page, kept for this write: written alone
                try:
                    await write_page()
                except MirrorError as exc:
                    log.warning("reconcile (%s): page not written: %s", reason.value, loggable(exc))
            return _cut_short(reason, error, walk, started)
        prunes = plan_prunes(results)
        unconfirmed = most_telling(r.error for r in results if r.error is not None)
        # Store the ETag only after a conclusive pass: if a point read was inconclusive, the
        # next pass must not be short-circuited by a 304 and must retry it; a walk to be
        # walked again never saw its index whole. After a 304 the stored ETag is still the
        # right one.
        state = None
        stored = walk.etag  # after a 304: the one the pass asked with
        if not walk.not_modified:
            keep = self.use_etag and not prunes.kept and not again
            stored = walk.etag if keep else None
            state = {**clear_walk(), ETAG_KEY: stored}
        page, seen_at, end = walk.deferred, None, None
        if page is not None:  # stored only if the write concludes the walk (`WalkEnd`)
            state = {**clear_walk(), ETAG_KEY: None}
            seen_at, end = walk.generation, WalkEnd(stored)
            settled = [*settled, *page.seen_marked]
        try:
            applied = await asyncio.to_thread(
                self.mirror.apply,
                [*(page.views if page is not None else ()), *prunes.refreshes],
                prunes.prunes,
                state=state,
                skip=self._skip,
                settle=[*settled, *(view.id for view in prunes.refreshes)],
                seen_at=seen_at,
                end=end,
                scrub=False,
            )
        except MirrorError as exc:  # locked by another process, disk full: the plan not written
            log.warning("reconcile (%s): mirror not written: %s", reason.value, loggable(exc))
            return _cut_short(reason, exc, walk, started)
        if page is not None and not applied.concluded:
            stored = None  # a row left unseen (kept, or written meanwhile): no ETag
        concluded = ReconcileReport(
            reason=reason,
            inserted=tuple(applied.inserted),
            updated=tuple(applied.updated),
            pruned=tuple(applied.removed),
            kept=tuple(prunes.kept),
            not_modified=walk.not_modified,
            complete=True,
            restarted=walk.restarted,
            pages=walk.pages,
            requests=walk.pages + len(plan.point_reads),
            walked=walk.walked,
            duration=time.monotonic() - started,
            point_read_error=unconfirmed if prunes.kept else None,
            seq=applied.seq,
            walk_again=again,
            etag=stored if not prunes.kept else None,
        )
        if self.on_report is not None:
            self.on_report(concluded)
        # The prune is told before the WAL is scrubbed (`Mirror.apply`); the pass still
        # ends only once its removed rows have left every file (CONTRACT §9.2).
        if self.mirror.scrub_pending:
            with contextlib.suppress(MirrorError):  # pending: the next write or close tries
                await asyncio.to_thread(self.mirror.scrub)
        if applied.removed_files:
            await asyncio.to_thread(remove_cached_files, self.cache_dir, applied.removed_files)
        # The pages' own writes were announced as they committed; the pass's report counts
        # them all.
        report = dataclasses.replace(
            concluded,
            inserted=(*walk.inserted, *concluded.inserted),
            updated=(*walk.updated, *concluded.updated),
        )
        _log_pass(report)
        return report

    async def _point_read_all(self, session_ids: Sequence[str]) -> list[PointRead]:
        """Point-read every id, `point_read_concurrency` at a time, results in id order.

        A few workers take the ids in turn rather than one task per id: hundreds of tasks
        created at once would cost the UI thread one long step, and keep as many coroutines
        alive for the collector to scan (`python -m bench ui`, churn)."""
        results: dict[str, PointRead] = {}
        pending = iter(session_ids)

        async def worker() -> None:
            for session_id in pending:
                results[session_id] = await self._point_read(session_id)

        workers = min(self._point_read_concurrency, len(session_ids))
        await asyncio.gather(*(worker() for _ in range(workers)))
        return [results[session_id] for session_id in session_ids]

    async def _point_read(self, session_id: str) -> PointRead:
        try:
            view = await self.api.get_session(session_id)
        except NotFound as exc:
            return PointRead(session_id, PointReadOutcome.ABSENT, detail=exc.reason or "")
        except SyncError as exc:
            return PointRead(session_id, PointReadOutcome.UNKNOWN, detail=exc.message, error=exc)
        return PointRead(session_id, PointReadOutcome.FOUND, view=view)


def _log_pass(report: ReconcileReport) -> None:
    log.info(
        "reconcile (%s): %d walked, +%d ~%d -%d, %d kept, %d requests, %.3fs",
        report.reason.value,
        report.walked,
        len(report.inserted),
        len(report.updated),
        len(report.pruned),
        len(report.kept),
        report.requests,
        report.duration,
    )


def _joined(first: ReconcileReport, then: ReconcileReport) -> ReconcileReport:
    """One pass's report of two walks: the second's outcome (it settled again what the
    first kept), both walks' changes."""
    return dataclasses.replace(
        then,
        inserted=(*first.inserted, *then.inserted),
        updated=(*first.updated, *then.updated),
        pruned=(*first.pruned, *then.pruned),
        restarted=first.restarted or then.restarted,
        pages=first.pages + then.pages,
        requests=first.requests + then.requests,
        walked=first.walked + then.walked,
        duration=first.duration + then.duration,
    )


def _cut_short(
    reason: TriggerReason, error: SyncError, walk: WalkResult, started: float
) -> ReconcileReport:
    """A pass that ended before it concluded: its walk's pages were committed and announced
    as they arrived, so the report counts them (`sync.cli.main` must not say nothing changed)."""
    return ReconcileReport(
        reason=reason,
        error=error,
        inserted=tuple(walk.inserted),
        updated=tuple(walk.updated),
        pages=walk.pages,
        requests=walk.pages,
        walked=walk.walked,
        duration=time.monotonic() - started,
    )


class Coalescer:
    """One pass at a time; every trigger during a pass folds into exactly one more pass.

    `request()` returns a future for the pass that will cover the trigger: the running pass
    only if none is running (a new one starts), else the single queued follow-up pass.
    """

    def __init__(self, run_pass: Callable[[TriggerReason], Awaitable[ReconcileReport]]) -> None:
        self._run_pass = run_pass
        self._running = False
        self._task: asyncio.Task[None] | None = None
        self._next: asyncio.Future[ReconcileReport] | None = None
        self._current: asyncio.Future[ReconcileReport] | None = None
        self._next_reason = TriggerReason.MANUAL
        self.passes_started = 0

    @property
    def busy(self) -> bool:
        return self._running

    def running_or_request(self, reason: TriggerReason) -> asyncio.Future[ReconcileReport]:
        """The running pass's future when one runs (it has not ended yet, so its result is
        fresh enough for a caller that only needs *a* conclusive pass), else `request()`."""
        if self._running and self._current is not None and not self._current.done():
            return self._current
        return self.request(reason)

    def request(self, reason: TriggerReason) -> asyncio.Future[ReconcileReport]:
        loop = asyncio.get_running_loop()
        if not self._running:
            future: asyncio.Future[ReconcileReport] = loop.create_future()
            self._running = True
            self._task = loop.create_task(self._drive(reason, future))
            return future
        if self._next is None:
            self._next = loop.create_future()
            self._next_reason = reason
        return self._next

    async def _drive(self, reason: TriggerReason, future: asyncio.Future[ReconcileReport]) -> None:
        try:
            while True:
                self.passes_started += 1
                self._current = future
                try:
                    report = await self._run_pass(reason)
                except asyncio.CancelledError:
                    future.cancel()
                    raise
                except Exception as exc:  # a bug, not a network condition: surface it
                    log.exception("reconcile pass crashed")
                    if not future.done():
                        future.set_exception(exc)
                else:
                    if not future.done():
                        future.set_result(report)
                if self._next is None:
                    return
                future, reason = self._next, self._next_reason
                self._next = None
        finally:
            self._running = False
            self._current = None
            if self._next is not None and not self._next.done():
                self._next.cancel()
                self._next = None

    async def aclose(self) -> None:
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
