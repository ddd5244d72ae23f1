"""A pass's point reads: bounded concurrency, every candidate read once, results in order."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sync.mirror.store import Mirror
from sync.reconcile.reconciler import Reconciler
from sync.wire.models import SessionView
from tests.sync.memory_index import MemoryApi, MemoryIndex


class CountingApi(MemoryApi):
    """Point reads that take a few loop turns, counting how many are in flight at once."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.in_flight = 0
        self.most = 0
        self.reads: list[str] = []

    async def get_session(self, session_id: str) -> SessionView:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        self.reads.append(session_id)
        try:
            for _ in range(3):
                await asyncio.sleep(0)
            return await super().get_session(session_id)
        finally:
            self.in_flight -= 1


def test_point_reads_run_at_most_the_concurrency_at_once_and_prune_every_404(
    tmp_path: Path,
) -> None:
    index = MemoryIndex()
    kept = [index.create(f"kept {i}") for i in range(5)]
    gone = [index.create(f"gone {i}") for i in range(40)]
    api = CountingApi(index)
    mirror = Mirror.open(tmp_path / "mirror.sqlite3")
    try:
        reconciler = Reconciler(api, mirror, point_read_concurrency=3)
        asyncio.run(reconciler.run_pass())
        for sid in gone:
            index.delete(sid)
        report = asyncio.run(reconciler.run_pass())
        assert sorted(report.pruned) == sorted(gone)
        assert sorted(api.reads) == sorted(gone)  # each candidate read once
        assert api.most == 3
        assert sorted(row.id for row in mirror.rows()) == sorted(kept)
    finally:
        mirror.close()


def test_a_delete_is_told_before_the_wal_is_scrubbed_and_scrubbed_before_the_pass_ends(
    tmp_path: Path,
) -> None:
    """A prune's listeners hear it at its commit; the checkpoint that takes the row's bytes
    out of the WAL follows, still inside the pass (CONTRACT §9.2)."""
    index = MemoryIndex()
    index.create("kept")
    gone = index.create("gone")
    mirror = Mirror.open(tmp_path / "mirror.sqlite3")
    order: list[str] = []
    scrub = mirror.scrub

    def scrubbing() -> bool:
        order.append("scrub")
        return scrub()

    mirror.scrub = scrubbing  # type: ignore[method-assign]
    try:
        reconciler = Reconciler(
            MemoryApi(index),
            mirror,
            on_report=lambda r: order.extend("told" for _ in r.pruned),
        )
        asyncio.run(reconciler.run_pass())
        index.delete(gone)
        order.clear()
        report = asyncio.run(reconciler.run_pass())
        assert report.pruned == (gone,)
        assert order == ["told", "scrub"]
        assert not mirror.scrub_pending
    finally:
        mirror.close()


def test_the_walks_last_page_brings_what_it_leaves_to_point_read_in_its_own_write(
    tmp_path: Path,
) -> None:
    """A delete leaves its row unseen on every watching device: the last page's write reads
    the leftovers in its transaction, so the point read leaves without another read."""
    index = MemoryIndex()
    index.create("kept")
    gone = index.create("gone")
    mirror = Mirror.open(tmp_path / "mirror.sqlite3")
    reads: list[object] = []
    leftovers = mirror.walk_leftovers

    def counted(*args: object) -> object:
        reads.append(args)
        return leftovers(*args)  # type: ignore[arg-type]

    mirror.walk_leftovers = counted  # type: ignore[assignment,method-assign]
    try:
        reconciler = Reconciler(MemoryApi(index), mirror)
        asyncio.run(reconciler.run_pass())
        index.delete(gone)
        report = asyncio.run(reconciler.run_pass())
        assert report.pruned == (gone,)
        assert reads == []
        # After a 304 the marks are still read (no page was written to bring them).
        asyncio.run(reconciler.run_pass())
        assert len(reads) == 1
    finally:
        mirror.close()
