"""The sidebar model: diffed updates that keep the selection, checked by Qt's model tester."""

from __future__ import annotations

import asyncio
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QItemSelectionModel
from pytestqt.modeltest import ModelTester

from app.loop import ConvergeEventLoop
from tests.ui.conftest import row, run
from ui.sidebar.diff import compute_diff
from ui.sidebar.model import UNTITLED, SessionListModel


def ids(model: SessionListModel) -> list[str]:
    return [r.id for r in model.rows()]


def test_rows_show_title_or_untitled(qtmodeltester: ModelTester) -> None:
    model = SessionListModel()
    qtmodeltester.check(model)
    model.replace_now([row("ses_a", "Trip to Lisbon"), row("ses_b", None)])
    assert model.index(0, 0).data() == "Trip to Lisbon"
    assert model.index(1, 0).data() == UNTITLED
    assert model.index(1, 0).data(SessionListModel.IdRole) == "ses_b"


def test_qts_editing_calls_neither_change_a_row_nor_read_past_the_model(
    qtmodeltester: ModelTester,
) -> None:
    """Qt's list behind the model holds only the row count (empty strings): its own
    `setData` and `itemData` would edit or show those, not the mirror's rows."""
    model = SessionListModel()
    qtmodeltester.check(model)
    model.replace_now([row("ses_a", "Trip to Lisbon")])
    index = model.index(0, 0)
    assert not model.setData(index, "Edited")
    assert index.data() == "Trip to Lisbon"
    assert model.itemData(index)[0] == "Trip to Lisbon"


def test_update_inserts_moves_and_removes_while_the_selection_stays(
    qtmodeltester: ModelTester, loop: ConvergeEventLoop
) -> None:
    model = SessionListModel()
    qtmodeltester.check(model)
    selection = QItemSelectionModel(model)
    model.replace_now([row(f"ses_{i}", f"T{i}") for i in range(6)])
    selection.setCurrentIndex(model.index(3, 0), QItemSelectionModel.SelectionFlag.ClearAndSelect)
    resets: list[None] = []
    model.modelReset.connect(lambda: resets.append(None))

    new = [row("ses_5", "T5 again"), row("ses_new", "New"), row("ses_0"), row("ses_3", "T3")]
    new += [row("ses_2", "T2")]
    assert run(loop, model.update(new))

    assert ids(model) == ["ses_5", "ses_new", "ses_0", "ses_3", "ses_2"]
    assert model.index(0, 0).data() == "T5 again"
    assert [i.data(SessionListModel.IdRole) for i in selection.selectedIndexes()] == ["ses_3"]
    assert selection.currentIndex().data(SessionListModel.IdRole) == "ses_3"
    assert resets == []


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.lists(st.integers(0, 25), unique=True, max_size=20), min_size=1, max_size=6))
def test_any_sequence_of_updates_keeps_the_model_tester_happy(
    qtmodeltester: ModelTester, steps: list[list[int]]
) -> None:
    model = SessionListModel()
    qtmodeltester.check(model)
    selection = QItemSelectionModel(model)
    for step in steps:
        chosen = selection.currentIndex().data(SessionListModel.IdRole)
        wanted = [row(f"ses_{i}", f"T{i}") for i in step]
        model.replace_now(wanted)
        assert ids(model) == [f"ses_{i}" for i in step]
        for value in wanted:  # the value index follows every operation
            assert model.find(value.id) == value
        assert all(model.find(f"ses_{i}") is None for i in range(30) if i not in step)
        if chosen is not None and f"ses_{chosen[4:]}" in ids(model):
            assert selection.currentIndex().data(SessionListModel.IdRole) == chosen
        if model.rowCount():
            selection.setCurrentIndex(
                model.index(len(step) // 2, 0), QItemSelectionModel.SelectionFlag.ClearAndSelect
            )


def test_a_mass_reorder_is_a_layout_change_that_keeps_the_selection(
    qtmodeltester: ModelTester, loop: ConvergeEventLoop
) -> None:
    model = SessionListModel()
    qtmodeltester.check(model)
    selection = QItemSelectionModel(model)
    rows = [row(f"ses_{i:05d}") for i in range(5000)]
    model.replace_now(rows)
    selection.setCurrentIndex(model.index(10, 0), QItemSelectionModel.SelectionFlag.ClearAndSelect)
    shuffled = list(rows)
    random.Random(7).shuffle(shuffled)
    layouts: list[None] = []
    model.layoutChanged.connect(lambda *_: layouts.append(None))
    assert run(loop, model.update(shuffled))
    assert ids(model) == [r.id for r in shuffled]
    assert layouts, "expected one layout change rather than thousands of moves"
    assert selection.currentIndex().data(SessionListModel.IdRole) == "ses_00010"


def test_pending_delete_marks_a_row_until_it_leaves(loop: ConvergeEventLoop) -> None:
    model = SessionListModel()
    model.replace_now([row("ses_a"), row("ses_b")])
    model.set_pending_delete(["ses_a"], True)
    assert model.index(0, 0).data(SessionListModel.PendingDeleteRole) is True
    assert model.index(1, 0).data(SessionListModel.PendingDeleteRole) is False
    assert run(loop, model.update([row("ses_b")]))
    assert not model.is_pending_delete("ses_a")


def test_a_newer_update_supersedes_an_unfinished_one(loop: ConvergeEventLoop) -> None:
    model = SessionListModel(budget_ms=0.0)
    first = [row(f"ses_{i:06d}") for i in range(20_000)]
    second = [row(f"ses_{i:06d}") for i in range(0, 20_000, 2)]

    async def both() -> tuple[bool, bool]:
        a = asyncio.ensure_future(model.update(first))
        await asyncio.sleep(0)
        b = asyncio.ensure_future(model.update(second))
        return await a, await b

    done_first, done_second = run(loop, both())
    assert (done_first, done_second) == (False, True)
    assert ids(model) == [r.id for r in second]


def test_a_big_reconcile_gives_the_event_loop_a_turn_after_every_slice(
    loop: ConvergeEventLoop,
) -> None:
    """With no time budget at all, every diff step and every applied edit is followed by a
    turn of the event loop; with the real budget (8 ms) the same slicing keeps the window
    responsive. How long a slice takes is a figure (`python -m bench micro`, `bench ui`),
    not an assertion: a shared machine makes any threshold flaky."""
    model = SessionListModel(budget_ms=0.0)
    selection = QItemSelectionModel(model)
    n = 10_000
    rnd = random.Random(3)
    base = [row(f"ses_{i:06d}", f"Conversation {i}") for i in range(n)]
    after = list(base)
    for k in range(30):  # 30 sessions got activity: they move to the top, changed
        moved = after.pop(rnd.randrange(len(after)))
        after.insert(0, row(moved.id, f"{moved.title} (updated {k})"))
    after = [r for r in after if rnd.random() > 0.01]  # ~100 deleted elsewhere
    for k in range(50):
        after.insert(rnd.randrange(len(after)), row(f"ses_new_{k:04d}", "New"))
    edits = len(compute_diff(base, after))

    async def scenario() -> int:
        model.replace_now(base)
        keep = next(r for r in after[100:] if r.id in {b.id for b in base[:5_000]})
        selection.setCurrentIndex(
            model.index_of(keep.id), QItemSelectionModel.SelectionFlag.ClearAndSelect
        )
        turns = 0
        updating = asyncio.ensure_future(model.update(after))
        while not updating.done():  # another task: it runs only when the update yields
            turns += 1
            await asyncio.sleep(0)
        assert await updating
        assert selection.currentIndex().data(SessionListModel.IdRole) == keep.id
        return turns

    turns = run(loop, scenario(), timeout=120)
    assert ids(model) == [r.id for r in after]
    assert turns >= edits > 100


def test_screen_readers_hear_title_time_and_state(loop: ConvergeEventLoop) -> None:
    from PySide6.QtCore import Qt

    model = SessionListModel()
    model.replace_now([row("ses_a", "Trip", active_run_id="run_1")])
    model.set_pending_delete(["ses_a"], True)
    text = model.index(0, 0).data(Qt.ItemDataRole.AccessibleTextRole)
    assert text.startswith("Trip, last activity ")
    assert text.endswith(", running, deleting")


def test_index_of_follows_every_update(qtmodeltester: ModelTester) -> None:
    """The id -> row index is rebuilt after each operation (removal, move, insertion)."""
    model = SessionListModel()
    first = [row(f"ses_{i}", f"T{i}") for i in range(5)]
    model.replace_now(first)
    assert model.index_of("ses_3").row() == 3
    second = [row("ses_new"), first[3], first[0], first[1], first[4]]
    model.replace_now(second)
    assert [model.index_of(r.id).row() for r in second] == [0, 1, 2, 3, 4]
    assert not model.index_of("ses_2").isValid()
