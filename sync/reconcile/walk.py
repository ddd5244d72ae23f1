"""The walk of the session index (CONTRACT §7), written page by page and resumable.

A walk of a big index on a slow link takes longer than one pass may (`Bounds.pass_seconds`),
so the walk is not one pass's: each page is upserted into the mirror as it arrives, in the
same transaction as the walk's position (`sync_state`: the next cursor, the ETag and the top
`updated_at` the walk is following, its generation and how many it has seen). The next pass
resumes from that position, and a process restart changes nothing: the mirror is the walk.

Which rows a walk has seen is in the mirror too: each walked row's `synced_at` is raised to
the walk's generation (its start, wall clock), so no pass holds the walk's ids in memory.
Only when the walk reached the last page are the rows it did not see (`synced_at` below the
generation) point-read, and only a 404 prunes
(§9.3, `sync.reconcile.reconciler`). A row that the server
showed to exist since the walk began (any write sets `synced_at` to now) counts as seen: it
is kept, and a later walk settles it. That errs towards keeping, never towards pruning.

A walk whose first page is the whole index (a watching device's usual walk), moves no row
and lacks rows the mirror holds (a delete) is not written at once: the pass point-reads the
missing rows first and writes the page, what the reads proved and the ETag in one
transaction (`DeferredPage`), with no position to write and clear: a delete costs a
watching device one write.

Resuming: the first page is asked with the walk's ETag. 304: nothing changed, go on from the
cursor. 200: keyset cursors stay valid, but sessions created or updated since sit at the top,
above the cursor; they are read from the top until a row not newer than the walk's top mark
(`updated_at` never goes back, CONTRACT §2), then the walk goes on from its cursor. A 200
also starts a new *epoch* (decision 0097): rows walked before it may have been deleted since,
so from then on only rows raised to the epoch count as seen, and the reconcile settles the
older ones (point reads, or a fresh walk) before it claims the index. A cursor
the server refuses (its key rotated) restarts the walk from the top, once per pass, under a
new generation. A walk past `Bounds.walk_total_items` or `walk_total_bytes` across passes is
abandoned (an endless index must not fill the disk): what it wrote stays, nothing is pruned,
and the window's timer, watch and foreground start no other walk (`WALK_REFUSED`) until a
sync the user asks for or the next start.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime

from sync.api.bounds import Bounds, PassBudgetSpent, WalkGuard, walk_unfinished
from sync.errors import BadCursor, WalkOutOfBounds
from sync.mirror.apply import ApplyResult, Leftovers, WalkEnd
from sync.mirror.reader import MirrorIds
from sync.mirror.state import (
    WALK_BYTES,
    WALK_CURSOR,
    WALK_EPOCH,
    WALK_ESTIMATE,
    WALK_ETAG,
    WALK_GENERATION,
    WALK_KEYS,
    WALK_MARK,
    WALK_REFUSED,
    WALK_SEEN,
)
from sync.mirror.store import Mirror
from sync.reconcile.plan import dedupe_walk
from sync.reconcile.ports import SessionIndexApi
from sync.wire.models import SessionPage, SessionView

log = logging.getLogger(__name__)

#: Called after each page is fetched and written (tests interleave mutations here).
PageHook = Callable[[int, SessionPage], Awaitable[None]]
#: Told of each page's write right after it committed (the engine announces it).
Announce = Callable[[ApplyResult], None]


@dataclass
class WalkResult:
    """What a pass's share of the walk did; `complete`: the walk has reached its end."""

    etag: str | None
    not_modified: bool = False
    pages: int = 0
    restarted: bool = False
    walked: int = 0
    complete: bool = False
    generation: float = 0.0
    #: When the walk began following the index version it now follows (`generation`, or
    #: the resume that found the index changed): rows seen before it are settled again.
    epoch: float = 0.0
    seen: int = 0  # all passes of this walk
    nbytes: int = 0  # its pages' bytes, all passes
    estimate: int = 0
    #: The last page's write concluded the walk: no row was left to point-read
    #: (`sync.mirror.apply.WalkEnd`).
    concluded: bool = False
    #: What the last page's write left to settle, read in its transaction (None: not read).
    leftovers: Leftovers | None = None
    #: A one-page walk's page, not written: the pass writes it with its point reads.
    deferred: DeferredPage | None = None
    inserted: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class DeferredPage:
    """The first page of a fresh walk that is the whole index, not written yet because the
    mirror holds rows it lacks (`missing`): they are point-read first, and the pass writes
    the page with what the reads proved in one transaction (`Reconciler._conclude`)."""

    page: SessionPage
    views: list[SessionView]
    missing: frozenset[str]
    #: Rows on the page whose delete was never answered: seen, so settled.
    seen_marked: frozenset[str]
    #: The walk's position, written with the page if the pass cannot conclude.
    position: dict[str, str | None]


def newer_than(updated_at: str, mark: str) -> bool:
    """True unless `updated_at` is provably not after `mark` (unparsable: newer, so the
    top-read goes on rather than stop early)."""
    try:
        return datetime.fromisoformat(updated_at) > datetime.fromisoformat(mark)
    except (ValueError, TypeError):
        return True


class IndexWalk:
    """One pass's share of the walk: resume or start, write each page, stop at the end."""

    def __init__(
        self,
        api: SessionIndexApi,
        mirror: Mirror,
        bounds: Bounds,
        *,
        page_limit: int,
        page_hook: PageHook | None,
        skip: Callable[[str], bool] | None,
        announce: Announce,
        keep_etag: bool = True,
    ) -> None:
        """`keep_etag`: a walk that concludes stores its first page's ETag (False: None)."""
        self.api, self.mirror, self.bounds = api, mirror, bounds
        self.keep_etag = keep_etag
        self.page_limit, self.page_hook, self.skip = page_limit, page_hook, skip
        self._announce = announce
        self.result = WalkResult(etag=None)
        self._guard: WalkGuard = bounds.index_walk()
        self._rows = 0  # the mirror's rows when the pass began
        self._held: MirrorIds | None = None  # and their ids, when few

    async def run(
        self,
        etag: str | None,
        state: dict[str, str | None],
        rows: int,
        held: MirrorIds | None = None,
    ) -> WalkResult:
        """Go on from `state` (the `WALK_KEYS` the pass read, with `rows`, the mirror's row
        count, and `held`, its ids when few, in `Mirror.pass_start`); `etag`: the stored
        first page's, None to ask without one. Raises what the API raises (and
        `WalkOutOfBounds`); what was written stays."""
        result = self.result
        self._rows = rows
        self._held = held
        try:
            if state.get(WALK_CURSOR) is None:
                await self._start(etag)
            else:
                await self._resume(state)
        except BadCursor:
            if result.restarted:
                raise
            log.info("reconcile: cursor refused (key rotated?), restarting the walk once")
            result.restarted = True
            self._guard = self.bounds.index_walk()  # a new walk: its cursors are new
            await self._start(None)
        return result

    async def _start(self, etag: str | None) -> None:
        result = self.result
        page = await self._fetch(None, etag)
        if page is None:
            result.not_modified, result.complete, result.etag = True, True, etag
            return
        result.generation = result.epoch = time.time()
        result.estimate = self._rows
        result.etag = page.etag
        result.seen = 0
        mark = page.items[0].updated_at if page.items else ""
        fresh: dict[str, str | None] = {
            WALK_ETAG: page.etag,
            WALK_MARK: mark,
            WALK_GENERATION: repr(result.generation),
            WALK_EPOCH: repr(result.epoch),
            WALK_ESTIMATE: str(result.estimate),
            WALK_REFUSED: None,  # a walk the user asked for after one was abandoned
        }
        if self._defer(page, fresh):
            return
        await self._write(page, cursor=page.next_cursor, extra=fresh, last=not page.next_cursor)
        await self._forward(page.next_cursor)

    def _defer(self, page: SessionPage, extra: dict[str, str | None]) -> bool:
        """Keep the first page for the pass's one write when it is the whole index, moves
        no row the mirror holds and lacks some of them (`DeferredPage`): a page with a new
        or moved row is written first, so that row is not held back by a point read. A
        page hook (tests that change the index between a page's write and what follows)
        gets its pages written."""
        held = self._held
        if page.next_cursor or held is None or self.page_hook is not None:
            return False
        views = list(dedupe_walk(page.items).values())
        if any(held.updated.get(view.id) != view.updated_at for view in views):
            return False
        listed = {view.id for view in views}
        missing = held.updated.keys() - listed
        if not missing:
            return False
        position = self._walked(page, None, extra)
        self.result.complete = True
        self.result.deferred = DeferredPage(
            page, views, frozenset(missing), held.marked & listed, position
        )
        return True

    async def _resume(self, state: dict[str, str | None]) -> None:
        result = self.result
        result.generation = float(state.get(WALK_GENERATION) or 0.0)
        result.epoch = float(state.get(WALK_EPOCH) or result.generation)
        result.seen = int(state.get(WALK_SEEN) or 0)
        result.nbytes = int(state.get(WALK_BYTES) or 0)
        result.estimate = int(state.get(WALK_ESTIMATE) or 0)
        result.etag = state.get(WALK_ETAG)
        bounds = self.bounds
        if result.seen > bounds.walk_total_items or result.nbytes > bounds.walk_total_bytes:
            # Abandoned: its pages stay, and the window's triggers start no other walk.
            refused = {**clear_walk(), WALK_REFUSED: "1"}
            await asyncio.to_thread(self.mirror.apply, state=refused)
            raise walk_abandoned(bounds)
        saved = state.get(WALK_CURSOR) or None
        top = await self._fetch(None, result.etag)
        if top is not None:  # the index changed since: read what moved to the top
            # A new epoch: what was walked before it may since have been deleted, so it
            # no longer counts as seen at the version the walk now follows.
            result.epoch = time.time()
            await self._reread_top(top, state.get(WALK_MARK) or "", saved)
        await self._forward(saved)

    async def _reread_top(self, page: SessionPage, mark: str, saved: str | None) -> None:
        """Top pages until a row not newer than `mark`; the new ETag and mark are saved
        with the last of them, so a top-read cut short is done again."""
        etag, new_mark = page.etag, (page.items[0].updated_at if page.items else mark)
        while True:
            done = page.next_cursor is None or any(
                not newer_than(view.updated_at, mark) for view in page.items
            )
            extra: dict[str, str | None] = {}
            if done:
                extra = {WALK_ETAG: etag, WALK_MARK: new_mark, WALK_EPOCH: repr(self.result.epoch)}
            if done:
                self.result.etag = etag
            last = done and (page.next_cursor is None or not saved)
            await self._write(page, cursor=saved if saved else "", extra=extra, last=last)
            if done:
                if page.next_cursor is None:  # the whole index fit above the mark
                    self.result.complete = True
                return
            self._guard.cursor(page.next_cursor or "")
            page = await self._fetch_required(page.next_cursor)

    async def _forward(self, cursor: str | None) -> None:
        """From `cursor` to the last page, each page written with the position after it.

        The next page is asked for while this one is written: the server's answer and the
        mirror's write overlap instead of adding up. Nothing else changes: a page is still
        written before anything the next fetch raised is raised, and the position written
        with it is still the one to resume from. A page hook (tests changing the index
        between pages) gets the pages one after the other, as before."""
        if self.result.complete:
            return
        if cursor:
            page = await self._next_page(cursor)
            ahead: asyncio.Future[SessionPage] | None = None
            try:
                while True:
                    following = page.next_cursor
                    if following and self.page_hook is None:
                        ahead = asyncio.ensure_future(self._next_page(following))
                    await self._write(page, cursor=following, last=not following)
                    if not following:
                        break
                    page = await (ahead if ahead is not None else self._next_page(following))
                    ahead = None
            finally:
                if ahead is not None:  # the write failed or the pass was cancelled
                    ahead.cancel()
                    ahead.add_done_callback(_forget)
        self.result.complete = True

    async def _next_page(self, cursor: str) -> SessionPage:
        self._guard.cursor(cursor)
        return await self._fetch_required(cursor)

    async def _fetch_required(self, cursor: str | None) -> SessionPage:
        page = await self._fetch(cursor, None)
        assert page is not None  # only a first page with an ETag can answer 304
        return page

    async def _fetch(self, cursor: str | None, etag: str | None) -> SessionPage | None:
        page = await self.api.list_sessions(limit=self.page_limit, cursor=cursor, etag=etag)
        self.result.pages += 1
        if page is not None:
            try:
                self._guard.page(len(page.items), page.nbytes)
            except PassBudgetSpent:  # this pass's share is walked; the page is the next's
                raise walk_unfinished(
                    self.result.seen, self.result.estimate, "The index is long"
                ) from None
        return page

    async def _write(
        self,
        page: SessionPage,
        *,
        cursor: str | None,
        extra: dict[str, str | None] | None = None,
        last: bool = False,
    ) -> None:
        """The page's rows, their seen mark and the walk's position, in one transaction;
        the `last` page concludes the walk there when it leaves nothing to point-read."""
        views = list(dedupe_walk(page.items).values())
        await self._store(page, views, self._walked(page, cursor, extra), last=last)

    async def write_deferred(self) -> None:
        """Write the page kept for the pass's write (`DeferredPage`) as the walk would have,
        with its position: the pass could not conclude (its point reads ran past the
        deadline), and a walk keeps the pages it fetched, or a row that stalls its point
        read would keep every new row out of the mirror too."""
        kept = self.result.deferred
        if kept is not None:
            self.result.deferred = None
            await self._store(kept.page, kept.views, kept.position, last=True)

    def _walked(
        self, page: SessionPage, cursor: str | None, extra: dict[str, str | None] | None
    ) -> dict[str, str | None]:
        """Count the page into the walk; the position to write with it."""
        result = self.result
        result.walked += len(page.items)
        result.seen += len(page.items)
        result.nbytes += page.nbytes
        state: dict[str, str | None] = {
            WALK_CURSOR: cursor or "",
            WALK_SEEN: str(result.seen),
            WALK_BYTES: str(result.nbytes),
        }
        state.update(extra or {})
        return state

    async def _store(
        self,
        page: SessionPage,
        views: list[SessionView],
        state: dict[str, str | None],
        *,
        last: bool,
    ) -> None:
        result = self.result
        end = None
        if last:
            end = WalkEnd(result.etag if self.keep_etag else None, result.generation)
        applied = await asyncio.to_thread(
            self.mirror.apply,
            views,
            state=state,
            skip=self.skip,
            seen_at=result.epoch,
            end=end,
        )
        result.concluded = applied.concluded
        result.leftovers = applied.leftovers
        self._announce(applied)
        result.inserted.extend(applied.inserted)
        result.updated.extend(applied.updated)
        if self.page_hook is not None:
            await self.page_hook(result.pages, page)


def _forget(fetch: asyncio.Future[SessionPage]) -> None:
    """A page fetched ahead and not used: what it raised was superseded by what ended the
    walk, so it is read here, not logged as never retrieved."""
    if not fetch.cancelled():
        fetch.exception()


def walk_abandoned(bounds: Bounds) -> WalkOutOfBounds:
    """The error of a walk past its totals over several passes."""
    return WalkOutOfBounds(
        f"The server's session index went on past {bounds.walk_total_items:,} items or "
        f"{bounds.walk_total_bytes // (1024 * 1024):,} MiB over several passes; the sync "
        "stopped there and nothing was removed. Converge tries again when you sync.",
        status=200,
    )


def clear_walk() -> dict[str, str | None]:
    """The state that ends a concluded walk: its keys cleared."""
    return dict.fromkeys(WALK_KEYS)


__all__ = [
    "DeferredPage",
    "IndexWalk",
    "PageHook",
    "WalkResult",
    "clear_walk",
    "newer_than",
    "walk_abandoned",
]
