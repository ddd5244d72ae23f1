"""The sidebar follows mirror writes by deltas: the model after any sequence of deltas
equals the model built from the final rows (filter and date sections included)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QItemSelectionModel
from pytestqt.modeltest import ModelTester

from sync import matches_filter
from sync.wire.models import SessionView
from tests.ui.conftest import row
from ui.sidebar.delta import apply_delta
from ui.sidebar.grouping import group_rows
from ui.sidebar.model import SessionListModel

NOW = datetime(2026, 11, 30, 15, 0, tzinfo=UTC)
TITLES = ["Alpha", "beta", "Straße", None, "ÉTÉ", "café"]
FILTERS = ["", "a", "SS", "ses_1", "été", "SES_2"]


def _stamp(hours_ago: int) -> str:
    return (NOW - timedelta(hours=hours_ago)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _shown(mirror: dict[str, SessionView], filter_text: str, grouped: bool) -> list[object]:
    rows = sorted(
        (r for r in mirror.values() if matches_filter(r.id, r.title, filter_text)),
        key=lambda r: (r.updated_at, r.id),
        reverse=True,
    )
    return list(group_rows(rows, NOW)) if grouped else list(rows)


def _build(mirror: dict[str, SessionView], filter_text: str, grouped: bool) -> SessionListModel:
    model = SessionListModel()
    model.replace_now(_shown(mirror, filter_text, grouped))  # type: ignore[arg-type]
    return model


rows_strategy = st.builds(
    lambda i, title, hours: row(f"ses_{i}", title, updated_at=_stamp(hours)),
    st.integers(0, 15),
    st.sampled_from(TITLES),
    st.sampled_from([0, 1, 2, 20, 30, 100, 200, 800, 1500, 4000, 9000]),
)
deltas_strategy = st.lists(
    st.tuples(st.lists(rows_strategy, max_size=5), st.lists(st.integers(0, 15), max_size=3)),
    max_size=8,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(rows_strategy, max_size=12),
    deltas_strategy,
    st.sampled_from(FILTERS),
    st.booleans(),
)
def test_any_deltas_leave_the_model_as_built_from_the_final_rows(
    qtmodeltester: ModelTester,
    initial: list[SessionView],
    deltas: list[tuple[list[SessionView], list[int]]],
    filter_text: str,
    grouped: bool,
) -> None:
    mirror = {r.id: r for r in initial}
    model = _build(mirror, filter_text, grouped)
    qtmodeltester.check(model)
    for upserts, removals in deltas:
        written = list({r.id: r for r in upserts}.values())  # one value per id, as Mirror.apply
        removed = [f"ses_{i}" for i in removals if f"ses_{i}" not in {r.id for r in written}]
        for r in written:
            mirror[r.id] = r
        for sid in removed:
            mirror.pop(sid, None)
        apply_delta(
            model,
            written,
            removed,
            filter_text=filter_text,
            grouped_at=NOW if grouped else None,
        )
        assert list(model.rows()) == _shown(mirror, filter_text, grouped)
        shown = {value.id for value in model.rows()}
        for value in model.rows():  # the value index follows every row signal
            assert model.value(value.id) is value
        assert all(model.value(sid) is None for sid in mirror if sid not in shown)


def test_a_row_that_moves_across_sections_keeps_selection_and_current(
    qtmodeltester: ModelTester,
) -> None:
    mirror = {
        "ses_a": row("ses_a", "A", updated_at=_stamp(1)),
        "ses_b": row("ses_b", "B", updated_at=_stamp(30)),
        "ses_c": row("ses_c", "C", updated_at=_stamp(800)),
    }
    model = _build(mirror, "", True)
    qtmodeltester.check(model)
    selection = QItemSelectionModel(model)
    selection.setCurrentIndex(
        model.index_of("ses_c"), QItemSelectionModel.SelectionFlag.ClearAndSelect
    )
    resets: list[None] = []
    model.modelReset.connect(lambda: resets.append(None))
    layouts: list[None] = []
    model.layoutChanged.connect(lambda: layouts.append(None))

    moved = row("ses_c", "C, again", updated_at=_stamp(0))
    apply_delta(model, [moved], [], grouped_at=NOW)

    mirror["ses_c"] = moved
    assert list(model.rows()) == _shown(mirror, "", True)
    assert selection.currentIndex().data(SessionListModel.IdRole) == "ses_c"
    assert [i.data(SessionListModel.IdRole) for i in selection.selectedIndexes()] == ["ses_c"]
    assert resets == [] and layouts == []


def test_a_row_leaving_the_filter_is_removed_and_one_entering_it_is_inserted() -> None:
    mirror = {"ses_1": row("ses_1", "Trip", updated_at=_stamp(1))}
    model = _build(mirror, "trip", False)
    apply_delta(
        model,
        [row("ses_1", "Budget", updated_at=_stamp(0)), row("ses_2", "TRIP", _stamp(2))],
        [],
        filter_text="trip",
    )
    assert [r.id for r in model.rows()] == ["ses_2"]


def test_index_of_and_find_follow_deltas_without_reindexing() -> None:
    mirror = {f"ses_{i:03d}": row(f"ses_{i:03d}", "T", updated_at=_stamp(i)) for i in range(50)}
    model = _build(mirror, "", True)
    apply_delta(model, [row("ses_049", "T2", updated_at=_stamp(0))], ["ses_010"], grouped_at=NOW)
    mirror["ses_049"] = row("ses_049", "T2", updated_at=_stamp(0))
    del mirror["ses_010"]
    shown = list(model.rows())
    assert shown == _shown(mirror, "", True)
    for position, value in enumerate(shown):
        assert model.index_of(value.id).row() == position
        assert model.find(value.id) == value
    assert model.find("ses_010") is None
