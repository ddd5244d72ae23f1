"""Two keyboard-and-mouse rules of the sidebar (`ui.sidebar.keys`).

- With nothing selected, the first click in a scrolled sidebar opens the clicked row, not
  the first one: the list's focus handler picks a row for keyboard users on a keyboard
  focus-in only, never before a click is handled.
- Down from the search box selects a row even when pressed before the search's debounce
  ran: selecting the first row of the unfiltered list would let the results remove it
  again. Here the race is made deterministic: `QTest` delivers the
  keystrokes without running the event loop, so the debounce cannot fire in between.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from app.loop import ConvergeEventLoop
from tests.ui.conftest import Harness, row, run, until
from ui.window.main_window import MainWindow


def _window(count: int) -> MainWindow:
    window = MainWindow()
    window.resize(900, 500)
    window.show()
    rows = [
        row(f"ses_{i:03}", f"Conversation {i}", updated_at=f"2026-11-30T05:{59 - i:02}:00.000000Z")
        for i in range(count)
    ]
    window.model.replace_now(rows)
    QApplication.processEvents()
    return window


def _scroll_to_middle(window: MainWindow) -> int:
    bar = window.list.verticalScrollBar()
    bar.setValue(bar.maximum() // 2)
    QApplication.processEvents()
    assert bar.value() > 0
    return bar.value()


def test_first_click_in_a_scrolled_list_opens_the_clicked_row_and_keeps_the_scroll(
    loop: ConvergeEventLoop,
) -> None:
    window = _window(60)
    window.filter.setFocus()
    value = _scroll_to_middle(window)
    assert window.current_id() is None and not window.selected_ids()
    viewport = window.list.viewport()
    index = window.list.indexAt(viewport.rect().center())
    clicked = window.model.row_at(index)
    assert clicked is not None
    QTest.mouseClick(
        viewport, Qt.MouseButton.LeftButton, pos=window.list.visualRect(index).center()
    )
    QApplication.processEvents()
    assert window.list.hasFocus()
    assert window.current_id() == clicked.id
    assert window.selected_ids() == [clicked.id]
    assert window.list.verticalScrollBar().value() == value
    window.close()


def test_tab_into_a_scrolled_list_selects_the_first_visible_row_in_place(
    loop: ConvergeEventLoop,
) -> None:
    window = _window(60)
    window.filter.setFocus()
    value = _scroll_to_middle(window)
    first = window.list.indexAt(window.list.viewport().rect().topLeft())
    if window.list.visualRect(first).top() < 0:  # partly scrolled out: the one below
        first = first.siblingAtRow(first.row() + 1)
    top = window.model.row_at(first)
    assert top is not None
    QTest.keyClick(window.filter, Qt.Key.Key_Tab)
    QApplication.processEvents()
    assert window.list.hasFocus()
    assert window.current_id() == top.id
    assert window.list.verticalScrollBar().value() == value
    window.close()


def test_down_from_the_search_box_selects_the_row_after_the_current_one(
    loop: ConvergeEventLoop,
) -> None:
    window = _window(5)
    window.select_session("ses_001")
    window.filter.setFocus()
    QTest.keyClick(window.filter, Qt.Key.Key_Down)
    QApplication.processEvents()
    assert window.list.hasFocus()
    assert window.current_id() == "ses_002"
    assert window.selected_ids() == ["ses_002"]
    # Enter keeps the current row.
    window.filter.setFocus()
    QTest.keyClick(window.filter, Qt.Key.Key_Return)
    assert window.current_id() == "ses_002"
    window.close()


def test_down_pressed_before_the_search_settles_selects_the_first_result(
    harness: Harness,
) -> None:
    # Newest first: the unfiltered list opens with a conversation the search drops.
    beta_old = harness.create("beta launch checklist", "2026-11-30T05:00:00.000000Z")
    beta_new = harness.create("beta pricing questions", "2026-11-30T05:10:00.000000Z")
    harness.create("alpha retrospective notes", "2026-11-30T05:20:00.000000Z")
    run(harness.loop, harness.sync())
    window = harness.window
    assert len(harness.ids()) == 3
    window.filter.setFocus()
    opened: list[str | None] = []
    window.current_changed.connect(opened.append)
    QTest.keyClicks(window.filter, "beta")
    QTest.keyClick(window.filter, Qt.Key.Key_Down)  # before the debounce: no loop ran

    def settled() -> bool:
        return harness.ids() == [beta_new, beta_old] and bool(window.selected_ids())

    run(harness.loop, until(settled, what="the search results with a selected row"))
    run(harness.loop, harness.controller.wait_idle())
    assert window.list.hasFocus()
    assert window.selected_ids() == [beta_new]
    assert window.current_id() == beta_new
    assert harness.controller.pane.session_id == beta_new
    assert opened == [beta_new]  # not the unfiltered list's first row on the way
