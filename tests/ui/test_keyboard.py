"""The sidebar and the search box by keyboard alone, and what assistive tools read."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from app.loop import ConvergeEventLoop
from tests.ui.conftest import row, run
from ui.window.controller import WindowController
from ui.window.main_window import FILTER_DEBOUNCE_MS, MainWindow


def _window(count: int = 3) -> MainWindow:
    window = MainWindow()
    window.show()
    window.model.replace_now([row(f"ses_{i}", f"Conversation {i}") for i in range(count)])
    QApplication.processEvents()
    return window


def test_tabbing_into_the_list_makes_a_row_current_and_delete_possible(
    loop: ConvergeEventLoop,
) -> None:
    window = _window()
    window.filter.setFocus()
    assert not window.delete_action.isEnabled()
    QTest.keyClick(window.filter, Qt.Key.Key_Tab)
    QApplication.processEvents()
    assert window.list.hasFocus()
    assert window.current_id() == "ses_0"
    assert window.selected_ids() == ["ses_0"]
    assert window.delete_action.isEnabled()
    window.close()


def test_down_and_enter_in_the_search_box_move_into_the_results(
    loop: ConvergeEventLoop,
) -> None:
    window = _window()
    for key in (Qt.Key.Key_Down, Qt.Key.Key_Return):
        window.clear_selection()
        window.filter.setFocus()
        QTest.keyClick(window.filter, key)
        QApplication.processEvents()
        assert window.list.hasFocus(), key
        assert window.current_id() == "ses_0", key
    window.close()


def test_escape_clears_the_search(loop: ConvergeEventLoop) -> None:
    window = _window()
    seen: list[str] = []
    window.filter_changed.connect(seen.append)
    window.filter.setFocus()
    QTest.keyClicks(window.filter, "plan")
    QTest.keyClick(window.filter, Qt.Key.Key_Escape)
    assert window.filter.text() == ""
    assert seen[-1:] == [""]  # at once, not after the debounce
    assert FILTER_DEBOUNCE_MS > 0
    window.close()


def test_new_conversation_clears_an_active_search(loop: ConvergeEventLoop) -> None:
    window = _window()
    controller = WindowController(window, sync_interval=0)
    window.filter.setText("plan")
    window.filter_changed.emit("plan")
    window.new_action.trigger()
    assert window.filter.text() == ""
    assert controller.sidebar.filter_text == ""  # the new conversation will be in the list it shows
    run(loop, controller.shutdown())
    window.close()


def test_list_rows_and_the_list_have_accessible_names_and_roles(
    loop: ConvergeEventLoop,
) -> None:
    window = _window(2)
    window.list.setFocus()
    QApplication.processEvents()
    list_iface = QAccessible.queryAccessibleInterface(window.list)
    assert list_iface is not None
    assert list_iface.role() == QAccessible.Role.List
    assert list_iface.text(QAccessible.Text.Name) == "Conversations"
    names = []
    for i in range(list_iface.childCount()):
        child = list_iface.child(i)
        if child is not None and child.role() == QAccessible.Role.ListItem:
            names.append(child.text(QAccessible.Text.Name))
    assert any(name.startswith("Conversation 0") for name in names), names
    window.close()
