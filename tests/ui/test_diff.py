"""The sidebar's list diff: applying it to the old list yields the new list, with few moves."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from ui.sidebar.diff import Change, Insert, Move, Remove, Reorder, apply_ops, compute_diff


@dataclass(frozen=True)
class Item:
    id: str
    version: int = 0


@st.composite
def old_and_new(draw: st.DrawFn) -> tuple[list[Item], list[Item]]:
    ids = draw(st.lists(st.integers(0, 60), unique=True, max_size=40))
    old = [Item(f"s{i}", draw(st.integers(0, 2))) for i in ids]
    kept = [item for item in old if draw(st.booleans()) or draw(st.booleans())]
    changed = [Item(item.id, draw(st.integers(0, 2))) for item in kept]
    fresh = [Item(f"n{i}") for i in draw(st.lists(st.integers(0, 30), unique=True, max_size=10))]
    new = draw(st.permutations(changed + fresh))
    return old, list(new)


@settings(max_examples=400, deadline=None)
@given(old_and_new(), st.sampled_from([1, 2, 5, 2000]), st.sampled_from([0, 1, 3, 2000]))
def test_applying_the_diff_to_the_old_list_yields_the_new_list(
    lists: tuple[list[Item], list[Item]], chunk: int, max_moves: int
) -> None:
    old, new = lists
    ops = compute_diff(old, new, chunk=chunk, max_moves=max_moves)
    assert apply_ops(old, ops) == new


@settings(max_examples=200, deadline=None)
@given(old_and_new())
def test_every_range_respects_the_chunk_size(lists: tuple[list[Item], list[Item]]) -> None:
    old, new = lists
    for op in compute_diff(old, new, chunk=3):
        if isinstance(op, Remove):
            assert 1 <= op.count <= 3
        elif isinstance(op, (Insert, Change)):
            assert 1 <= len(op.rows) <= 3


def test_identical_lists_need_no_operation() -> None:
    rows = [Item(f"s{i}") for i in range(100)]
    assert compute_diff(rows, list(rows)) == []


def test_a_row_moving_to_the_top_is_one_move_not_a_shuffle() -> None:
    rows = [Item(f"s{i}") for i in range(1000)]
    new = [Item("s700", 1), *rows[:700], *rows[701:]]
    ops = compute_diff(rows, new)
    assert ops == [Move(700, 0), Change(0, (Item("s700", 1),))]


def test_the_top_row_sinking_to_the_bottom_is_one_move() -> None:
    rows = [Item(f"s{i}") for i in range(1000)]
    ops = compute_diff(rows, [*rows[1:], rows[0]])
    assert ops == [Move(0, 1000)]


def test_a_mass_reshuffle_becomes_one_reorder() -> None:
    rows = [Item(f"s{i}") for i in range(100)]
    new = list(reversed(rows))
    ops = compute_diff(rows, new, max_moves=10)
    assert len(ops) == 1 and isinstance(ops[0], Reorder)
    assert apply_ops(rows, ops) == new


def test_removals_run_bottom_up_so_indexes_stay_valid() -> None:
    rows = [Item(f"s{i}") for i in range(10)]
    ops = compute_diff(rows, [rows[1], rows[4], rows[5], rows[9]])
    assert ops == [Remove(6, 3), Remove(2, 2), Remove(0, 1)]


def test_a_100k_row_reconcile_plans_ops_that_give_the_new_order() -> None:
    """Its cost is a figure, not a test: `python -m bench micro`."""
    rows = [Item(f"s{i:06d}") for i in range(100_000)]
    new = [Item(f"s{i:06d}", 1) for i in range(0, 100_000, 97)] + [
        r for i, r in enumerate(rows) if i % 97 and i % 211
    ]
    ops = compute_diff(rows, new)
    assert apply_ops(rows, ops) == new
