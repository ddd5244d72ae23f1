"""Opening a long conversation in steps (decision 0178): the newest rows show at once, at
the bottom, the older ones come in above them; a new open cancels what is left; appends
land last; the view stays at the bottom, or on the row a reader scrolled to."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QModelIndex, QPoint
from pytestqt.qtbot import QtBot

from tests.ui.test_transcript_view import LOAD_TIMEOUT_MS, long_transcript, user
from ui.pane.pane import ConversationPane

TOTAL = 5_000


def first_rows(qtbot: QtBot, pane: ConversationPane) -> None:
    """Wait for an open's first rows (the newest) to be shown."""
    qtbot.waitUntil(lambda: pane.model.rowCount() > 0)


def loaded(qtbot: QtBot, pane: ConversationPane) -> None:
    if pane.loading:
        with qtbot.waitSignal(pane.transcript_loaded, timeout=LOAD_TIMEOUT_MS):
            pass


def last_row_shown(pane: ConversationPane) -> bool:
    view = pane.transcript
    view.executeDelayedItemsLayout()
    rect = view.visualRect(pane.model.index(pane.model.rowCount() - 1, 0))
    return view.at_bottom() and view.viewport().rect().intersects(rect)


def test_the_last_message_shows_before_the_older_rows_are_in(
    qtbot: QtBot, pane: ConversationPane
) -> None:
    events = long_transcript(TOTAL)
    newest = events[-1].data["content"][0]["text"]
    pane.set_events(events)
    assert pane.model.rowCount() < TOTAL and pane.loading
    first_rows(qtbot, pane)
    assert pane.model.rowCount() < TOTAL, "the newest rows first, the rest still to come"
    assert pane.model.item(pane.model.rowCount() - 1).text == newest
    assert last_row_shown(pane), "the last message is in view at once"
    loaded(qtbot, pane)
    assert pane.model.rowCount() == TOTAL
    assert [text for _kind, text in pane.messages()] == [
        event.data["content"][0]["text"] for event in events
    ]


def test_opening_another_conversation_mid_load_leaves_only_its_rows(
    qtbot: QtBot, pane: ConversationPane
) -> None:
    pane.set_events(long_transcript(TOTAL))
    first_rows(qtbot, pane)
    assert pane.loading
    other = [user(f"Other {n}") for n in range(300)]
    pane.set_events(other)
    loaded(qtbot, pane)
    assert pane.messages() == [("user", f"Other {n}") for n in range(300)]
    pane.set_events([user("Just one")])  # and once more while nothing is loading
    assert pane.messages() == [("user", "Just one")] and not pane.loading


@pytest.mark.parametrize("when", ["while folding", "while rows come in above"])
def test_an_event_appended_mid_load_ends_up_last(
    qtbot: QtBot, pane: ConversationPane, when: str
) -> None:
    pane.set_events(long_transcript(TOTAL))
    if when == "while rows come in above":
        first_rows(qtbot, pane)
    assert pane.loading
    pane.append_event(user("The newest, from another device"))
    loaded(qtbot, pane)
    assert pane.model.rowCount() == TOTAL + 1
    assert pane.messages()[-1] == ("user", "The newest, from another device")
    assert pane.messages()[-2][1].startswith(f"Answer {TOTAL // 2 - 1}:")


def test_the_view_stays_at_the_bottom_through_the_load(
    qtbot: QtBot, pane: ConversationPane
) -> None:
    pane.set_events(long_transcript(TOTAL))
    first_rows(qtbot, pane)
    counts = []
    while pane.loading:
        seen = pane.model.rowCount()
        qtbot.waitUntil(lambda: pane.model.rowCount() > seen or not pane.loading)  # noqa: B023
        counts.append(pane.model.rowCount())
        assert last_row_shown(pane), f"at the bottom with {pane.model.rowCount()} rows"
    assert len(counts) > 1 and counts[-1] == TOTAL, "the older rows came in chunks"


def test_a_reader_who_scrolls_up_during_the_load_keeps_their_row_in_view(
    qtbot: QtBot, pane: ConversationPane
) -> None:
    pane.set_events(long_transcript(TOTAL))
    first_rows(qtbot, pane)
    view, bar = pane.transcript, pane.transcript.verticalScrollBar()
    view.executeDelayedItemsLayout()
    assert bar.maximum() > 0 and pane.loading
    bar.setValue(bar.maximum() // 3)
    index = view.indexAt(QPoint(1, 1))
    item, top = pane.model.item(index.row()), view.visualRect(index).top()
    assert not view.following
    loaded(qtbot, pane)
    view.executeDelayedItemsLayout()
    assert pane.model.row_of(item) > TOTAL - 100, "rows came in above it"
    assert view.visualRect(pane.model.index_of(item)).top() == top, "it stays where it was"
    assert view.indexAt(QPoint(1, 1)) == pane.model.index_of(item)
    assert not view.following and not view.jump.isVisible()
    assert view.indexAt(QPoint(1, 1)) != QModelIndex()
