"""The smaller defects of the issue "Nothing a conversation holds can freeze, hide or garble
the pane" (item 6): words left in English, Escape in the search box, the shortcuts list, a key
for the next conversation, an LTR title in the mirrored window, Settings' title, Export's
folder, and a desktop notification while the window is not in front."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QStandardPaths, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QFileDialog, QLineEdit

from app.loop import ConvergeEventLoop
from tests.ui.conftest import Harness, row, run, until
from ui.dialogs.settings import ConnectionSettings, SettingsDialog
from ui.text.plain import isolate
from ui.window.main_window import MainWindow


def ts(hour: int, minute: int = 0) -> str:
    return f"2026-11-29T{hour:02d}:{minute:02d}:00.000000Z"


def _clear_button_shown(field: QLineEdit) -> float:
    """How opaque the search box's ⊗ is (Qt fades it in and out with the text)."""
    from PySide6.QtWidgets import QToolButton

    button = field.findChild(QToolButton)
    assert button is not None
    return float(button.property("opacity"))


# --- words in the user's language ----------------------------------------------------------


@pytest.mark.parametrize("language", ["de"], indirect=True)
def test_a_single_deletes_success_and_the_demo_servers_name_are_worded_in_german(
    language: str,
) -> None:
    from ui.window.delete_words import deleted
    from ui.window.where import server_label

    assert deleted("Reise") == "„Reise“ überall gelöscht."
    assert server_label("http://127.0.0.1:8799", bundled=True) == (
        "127.0.0.1:8799 (eingebauter Demo-Server)"
    )


# --- the search box ------------------------------------------------------------------------


def test_escape_in_the_search_box_hides_its_clear_button_and_keeps_the_open_conversation(
    harness: Harness, qtbot: object
) -> None:
    lisbon = harness.create("Trip to Lisbon", ts(9))
    harness.create("Tax return", ts(10))
    run(harness.loop, harness.sync())
    harness.select(lisbon)
    window = harness.window
    assert window.pane.session_id == lisbon

    async def search_then_escape() -> None:
        window.filter.setFocus()
        window.filter.setText("lisbon")
        await until(lambda: harness.controller.search.shown_for == "lisbon", what="the hits")
        await until(lambda: _clear_button_shown(window.filter) == 1.0, what="the ⊗ shown")
        QTest.keyClick(window.filter, Qt.Key.Key_Escape)
        await until(lambda: len(harness.ids()) == 2, what="the whole list back")
        await harness.controller.wait_idle()
        await until(lambda: _clear_button_shown(window.filter) == 0.0, what="the ⊗ hidden")

    run(harness.loop, search_then_escape())
    assert window.filter.text() == ""
    assert window.pane.session_id == lisbon
    assert window.selected_ids() == [lisbon]
    assert window.delete_action.isEnabled()


# --- keys ----------------------------------------------------------------------------------


def test_the_shortcuts_list_names_the_keys_of_the_pane_and_quit_without_exit(
    loop: ConvergeEventLoop,
) -> None:
    window = MainWindow()
    rows = dict(window.show_shortcuts().rows())
    enter, shift_enter = QKeySequence("Return"), QKeySequence("Shift+Return")
    native = QKeySequence.SequenceFormat.NativeText
    assert rows["Send the message"] == enter.toString(native)
    assert rows["New line in the message"] == shift_enter.toString(native)
    assert "Esc" in rows["Clear the search, close a dialog"]
    assert rows["Copy the selected messages"] == QKeySequence("Ctrl+C").toString(native)
    assert "Stop the reply" in rows
    assert "Next conversation" in rows and "Previous conversation" in rows
    window.close()


def test_quit_offers_ctrl_q_and_no_key_a_keyboard_lacks() -> None:
    from ui.window.actions import quit_keys

    keys = quit_keys([QKeySequence(Qt.Key.Key_Exit), QKeySequence("Ctrl+Q")])
    assert [key.toString() for key in keys] == ["Ctrl+Q"]


def test_ctrl_page_down_and_up_open_the_next_and_previous_conversation(
    loop: ConvergeEventLoop,
) -> None:
    window = MainWindow()
    window.show()
    window.model.replace_now([row(f"ses_{i}", f"Conversation {i}") for i in range(3)])
    QApplication.processEvents()
    window.select_session("ses_0")
    window.pane.composer.setFocus()  # from anywhere in the window
    QTest.keyClick(window.pane.composer, Qt.Key.Key_PageDown, Qt.KeyboardModifier.ControlModifier)
    assert window.current_id() == "ses_1"
    QTest.keyClick(window.pane.composer, Qt.Key.Key_PageDown, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClick(window.pane.composer, Qt.Key.Key_PageDown, Qt.KeyboardModifier.ControlModifier)
    assert window.current_id() == "ses_2"  # the last stays the last
    QTest.keyClick(window.pane.composer, Qt.Key.Key_PageUp, Qt.KeyboardModifier.ControlModifier)
    assert window.current_id() == "ses_1"
    assert window.selected_ids() == ["ses_1"]
    window.close()


# --- direction -----------------------------------------------------------------------------


def test_an_ltr_title_starting_with_a_hash_keeps_it_first_in_the_mirrored_window() -> None:
    from ui.window.elided_label import directed

    marked = directed("#42 release notes", mirrored=True)
    assert marked.startswith("\u200e") and marked.endswith("\u200e")  # LRM both sides
    assert directed("#42 release notes", mirrored=False) == "#42 release notes"
    assert directed("#تقرير", mirrored=False).startswith("\u200f")  # RLM for RTL in LTR
    assert directed("تقرير", mirrored=True) == "تقرير"


# --- Settings ------------------------------------------------------------------------------


def test_settings_is_titled_settings_and_wraps_what_is_in_use(qapp: QApplication) -> None:
    in_use = "http://127.0.0.1:8799 as alice\nprofile /home/someone/" + "very-long-folder/" * 8
    dialog = SettingsDialog(None, ConnectionSettings("", ""), in_use)
    assert dialog.windowTitle() == "Settings"
    assert dialog.in_use.wordWrap()
    dialog.deleteLater()


# --- Export --------------------------------------------------------------------------------


def test_export_asks_in_the_documents_folder(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ui.window.file_actions as file_actions

    sid = harness.create("Trip notes", ts(9))
    run(harness.loop, harness.sync())
    asked_in: list[str] = []

    async def cancelled(dialog: QFileDialog, on_open: object = None) -> int:
        asked_in.append(dialog.directory().absolutePath())
        return int(QFileDialog.DialogCode.Rejected)

    monkeypatch.setattr(file_actions, "run_dialog", cancelled)
    run(harness.loop, harness.controller.files.export(sid))
    documents = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    expected = documents if Path(documents).is_dir() else str(Path.home())  # never the cwd
    assert asked_in == [expected]
    assert asked_in != [str(Path.cwd())]


# --- desktop notifications -------------------------------------------------------------


def _away(harness: Harness) -> list[tuple[str, str]]:
    """The window is not in front; what it would show on the desktop is collected."""
    shown: list[tuple[str, str]] = []
    notifier = harness.controller.notifier
    notifier.in_front = lambda: False
    notifier.show = lambda title, message: shown.append((title, message))
    return shown


def test_a_finished_reply_is_announced_on_the_desktop_while_the_window_is_away(
    harness: Harness,
) -> None:
    shown = _away(harness)
    pane = harness.window.pane

    async def scenario() -> None:
        harness.controller.new_conversation()
        pane.composer.setPlainText("Hello there")
        pane.send_button.click()
        await until(lambda: bool(shown), what="the notification")

    run(harness.loop, scenario())
    assert shown == [("Reply finished", f"The reply in “{isolate('Hello there')}” has finished.")]


def test_a_conversation_deleted_elsewhere_is_announced_only_while_the_window_is_away(
    harness: Harness,
) -> None:
    shared = harness.create("Shared", ts(9))
    other = harness.create("Other", ts(8))
    run(harness.loop, harness.sync())
    shown = _away(harness)

    async def deleted_elsewhere(sid: str) -> None:
        await harness.select_async(sid)
        assert harness.api().delete(f"/v1/sessions/{sid}").status_code == 204
        await harness.sync()

    run(harness.loop, deleted_elsewhere(shared))
    expected = f"“{isolate('Shared')}” was deleted on another device."
    assert shown == [("Conversation deleted", expected)]

    harness.controller.notifier.in_front = lambda: True  # the user is looking: no notification
    run(harness.loop, deleted_elsewhere(other))
    assert len(shown) == 1


def test_without_a_system_tray_a_notification_is_dropped_quietly(qapp: QApplication) -> None:
    from PySide6.QtWidgets import QWidget

    from ui.window.notifier import DesktopNotifier

    window = QWidget()
    notifier = DesktopNotifier(window)
    notifier.in_front = lambda: False
    assert not DesktopNotifier.available()  # offscreen: no tray
    assert notifier.notify("Reply finished", "The reply has finished.")  # no crash, no tray
    assert notifier._tray is None
    notifier.stop()
    window.deleteLater()
