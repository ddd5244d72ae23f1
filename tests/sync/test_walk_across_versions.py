"""A walk resumed after the index changed claims nothing it did not see whole (decision 0097).

The schedule an outside fault campaign found: a synced device walks a changed index, reads
page 1 and loses the connection on page 2; a conversation of page 1 is deleted on the
server; the connection comes back. A resumed walk that counted page 1's rows as seen would
store the ETag of an index it never saw whole, and answer every later pass with a 304: the
deleted conversation would stay on the device for good. The real `Reconciler` and SQLite
mirror run against the in-memory server of `tests/sync/memory_index.py`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from sync.api.bounds import Bounds
from sync.engine import SyncEngine
from sync.errors import WalkUnfinished
from sync.mirror.store import Mirror
from sync.profile.profile import Profile
from sync.reconcile.reconciler import Reconciler
from sync.wire.models import SessionPage
from tests.sync.faults import FaultTransport
from tests.sync.helpers import Server, run
from tests.sync.memory_index import MemoryApi, MemoryIndex
from tests.sync.test_slow_walk import LIMIT, _stalled


class Cut:
    """Loses the connection after the walk's page `after`, once armed."""

    def __init__(self, api: MemoryApi, after: int) -> None:
        self.api, self.after = api, after
        self.armed = False

    async def __call__(self, page_number: int, _page: SessionPage) -> None:
        if self.armed and page_number == self.after:
            self.armed = False
            self.api.outage = True


@pytest.mark.parametrize(
    ("sessions", "page", "after", "walked_again"),
    [(41, 20, 2, False), (101, 20, 4, True)],  # few to settle: point-read; many: walked
)
def test_a_conversation_deleted_behind_a_resumed_walk_leaves_the_device(
    tmp_path: Path, sessions: int, page: int, after: int, walked_again: bool
) -> None:
    index = MemoryIndex()
    for _ in range(sessions):
        index.create()
    api = MemoryApi(index)
    cut = Cut(api, after)
    mirror = Mirror.open(tmp_path / "mirror.sqlite3")
    reconciler = Reconciler(api, mirror, page_limit=page, page_hook=cut)
    try:
        asyncio.run(reconciler.run_pass())  # synced
        index.create()  # the index changed: the next pass walks it
        cut.armed = True
        report = asyncio.run(reconciler.run_pass())
        assert report.error is not None  # cut after page 1
        top = index.page(page, None).items
        victim = top[-1].id  # a conversation of page 1, walked before the cut
        index.delete(victim)
        api.outage = False
        report = asyncio.run(reconciler.run_pass())  # the connection is back
        assert report.ok, report
        assert report.pruned == (victim,)
        reads = [sid for sid in api.point_reads if sid != victim]
        assert bool(reads) is not walked_again  # settled by point reads, or walked again
        report = asyncio.run(reconciler.run_pass())
        assert report.ok and report.not_modified, report  # now the index was seen whole
        rows = {row.id for row in mirror.rows()}
        assert victim not in rows
        assert rows == set(index.sessions)
    finally:
        mirror.close()


def test_a_delete_behind_a_walk_cut_on_page_two_reaches_a_device_of_the_real_server(
    live_server: Any, tmp_path: Path
) -> None:
    """The same schedule over real HTTP and the real stub: the pass that resumes prunes."""

    async def go() -> None:
        async with Server(live_server.url) as server:
            for _ in range(3 * LIMIT):
                await server.create()
            transport = FaultTransport()
            profile = Profile.load(tmp_path / "a", server=live_server.url, token="dev-alice")
            engine = await SyncEngine.open(
                profile, transport=transport, page_limit=LIMIT, bounds=Bounds(pass_seconds=2.0)
            )
            try:
                assert (await engine.reconcile()).ok
                await server.create()  # the index changed: the next pass walks it
                stall = _stalled(transport)
                stall.left = 0  # page 1, then the link is gone
                cut = await engine.reconcile()
                assert isinstance(cut.error, WalkUnfinished), repr(cut.error)
                victim = (await engine.rows())[LIMIT - 1].id  # the last row of page 1
                await server.delete(victim)
                stall.left = 10**6  # the link is back
                first = await engine.reconcile()
                assert first.ok and victim in first.pruned, repr(first)
                second = await engine.reconcile()
                assert second.ok and second.not_modified, repr(second)
                assert victim not in {row.id for row in await engine.rows()}
            finally:
                await engine.close()

    run(go(), timeout=60)
