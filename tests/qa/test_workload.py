"""The seeded workload plan of `converge qa`: same seed, same choices; restarts and outages
present even in a short run, and never while the harness cannot restart."""

from __future__ import annotations

import itertools

from qa.workload import Op, OpKind, choose, plan, plan_digest


def first(n: int, seed: int, devices: int = 3, restarts: bool = True) -> list[Op]:
    return list(itertools.islice(plan(seed, devices, restarts=restarts), n))


def test_the_same_seed_gives_the_same_operations() -> None:
    assert first(500, seed=11) == first(500, seed=11)
    assert plan_digest(first(40, seed=11)) == plan_digest(first(40, seed=11))


def test_another_seed_gives_other_operations() -> None:
    assert plan_digest(first(40, seed=11)) != plan_digest(first(40, seed=12))


def test_forty_operations_include_a_restart_and_a_complete_outage() -> None:
    for seed in range(30):
        kinds = [op.kind for op in first(40, seed)]
        assert OpKind.RESTART in kinds, seed
        start = kinds.index(OpKind.OUTAGE_START)
        assert OpKind.OUTAGE_END in kinds[start:], seed


def test_outages_alternate_and_restarts_are_spaced() -> None:
    ops = first(3000, seed=5)
    toggles = [op.kind for op in ops if op.kind in (OpKind.OUTAGE_START, OpKind.OUTAGE_END)]
    assert toggles[::2] == [OpKind.OUTAGE_START] * len(toggles[::2])
    assert toggles[1::2] == [OpKind.OUTAGE_END] * len(toggles[1::2])
    restarts = [op.index for op in ops if op.kind is OpKind.RESTART]
    assert len(restarts) >= 2
    assert all(b - a >= 150 for a, b in itertools.pairwise(restarts))


def test_without_restarts_the_plan_never_restarts() -> None:
    assert OpKind.RESTART not in {op.kind for op in first(2000, seed=3, restarts=False)}


def test_devices_and_picks_stay_in_range() -> None:
    for op in first(1000, seed=9, devices=4):
        assert 0 <= op.device < 4 and 0 <= op.other < 4
        assert 0.0 <= op.pick < 1.0


def test_choose_maps_a_fraction_onto_the_list() -> None:
    assert choose([], 0.5) is None
    assert choose(["a", "b", "c"], 0.0) == "a"
    assert choose(["a", "b", "c"], 0.999) == "c"
