"""Full collections are deferred while a pass (or several) runs, and restored after; big
lists are let go of in slices."""

from __future__ import annotations

import gc

from sync.reconcile.gc_pause import DEFERRED, full_collections_deferred


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
