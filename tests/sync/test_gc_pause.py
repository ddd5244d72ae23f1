"""Full collections are deferred while a pass (or several) runs, and restored after; big
lists are let go of in slices."""

from __future__ import annotations

import asyncio
import gc

from sync.gc_pause import DEFERRED, drop_in_slices, full_collections_deferred


def test_nested_deferrals_restore_the_thresholds_when_the_last_one_ends() -> None:
    before = gc.get_threshold()
    with full_collections_deferred():
        assert gc.get_threshold()[2] == DEFERRED
        with full_collections_deferred():
            assert gc.get_threshold()[2] == DEFERRED
        assert gc.get_threshold()[2] == DEFERRED  # the outer pass still runs
    assert gc.get_threshold() == before


def test_a_failing_pass_restores_the_thresholds() -> None:
    before = gc.get_threshold()
    try:
        with full_collections_deferred():
            raise RuntimeError("the pass crashed")
    except RuntimeError:
        pass
    assert gc.get_threshold() == before


def test_a_big_list_is_let_go_a_slice_per_loop_turn() -> None:
    """Another task runs between the slices, and the list ends empty."""
    items: list[object] = [object() for _ in range(10_000)]
    seen_sizes: list[int] = []

    async def scenario() -> None:
        async def watch() -> None:
            while items:
                seen_sizes.append(len(items))
                await asyncio.sleep(0)

        watcher = asyncio.create_task(watch())
        await asyncio.sleep(0)
        await drop_in_slices(items, 3_000)
        await watcher

    asyncio.run(scenario())
    assert items == []
    assert seen_sizes[:4] == [10_000, 7_000, 4_000, 1_000]
