"""The walk of the session index (CONTRACT §7): page after page, planned as it comes.

Split from `sync.reconcile` (which runs the pass around it) so that each module has one job.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sync.bounds import Bounds
from sync.errors import BadCursor
from sync.gc_pause import collect_young
from sync.mirror import Mirror
from sync.models import SessionPage
from sync.plan import WalkPlanner
from sync.ports import SessionIndexApi

log = logging.getLogger("sync.reconcile")

#: Pages walked between two young collections (`sync.gc_pause.collect_young`): about 600
#: objects of cyclic request garbage each time.
YOUNG_COLLECTION_PAGES = 8


@dataclass(frozen=True)
class WalkResult:
    planner: WalkPlanner | None  # None when the first page answered 304
    etag: str | None
    not_modified: bool
    pages: int
    restarted: bool

    @property
    def walked(self) -> int:
        return self.planner.walked if self.planner is not None else 0


#: Called after each page is fetched (tests and the QA harness interleave mutations here).
PageHook = Callable[[int, SessionPage], Awaitable[None]]


async def walk_index(
    api: SessionIndexApi,
    mirror: Mirror,
    bounds: Bounds,
    etag: str | None,
    page_limit: int,
    page_hook: PageHook | None,
) -> WalkResult:
    """Walk the index, planning each page as it comes (`WalkPlanner`).

    The mirror snapshot is taken once the first page says the index changed (a 304
    costs no read), and again if a bad cursor restarts the walk (the planner empties
    its snapshot as it goes)."""
    restarted = False
    while True:
        planner: WalkPlanner | None = None
        cursor: str | None = None
        first_etag: str | None = None
        pages = 0
        guard = bounds.index_walk()
        try:
            while True:
                page = await api.list_sessions(
                    limit=page_limit,
                    cursor=cursor,
                    etag=etag if (cursor is None and not restarted) else None,
                )
                pages += 1
                if page is None:
                    return WalkResult(None, etag, True, pages, restarted)
                guard.page(len(page.items), page.nbytes)
                if planner is None:
                    first_etag = page.etag
                    planner = WalkPlanner(await asyncio.to_thread(mirror.snapshot))
                planner.add(page.items)
                if pages % YOUNG_COLLECTION_PAGES == 0:
                    collect_young()
                if page_hook is not None:
                    await page_hook(pages, page)
                if page.next_cursor is None:
                    return WalkResult(planner, first_etag, False, pages, restarted)
                guard.cursor(page.next_cursor)
                cursor = page.next_cursor
        except BadCursor:
            if restarted:
                raise
            log.info("reconcile: cursor refused (key rotated?), restarting the walk once")
            restarted = True
