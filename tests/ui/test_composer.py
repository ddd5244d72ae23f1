"""The composer: Enter sends, Shift+Enter breaks the line (or Ctrl+Enter sends, when set)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QDialog

from app import window_state
from app.loop import ConvergeEventLoop
from tests.ui.conftest import run
from ui.dialogs.settings import SettingsDialog
from ui.pane.pane import ConversationPane
from ui.window.controller import WindowController
from ui.window.main_window import MainWindow


def test_enter_sends_and_shift_enter_breaks_the_line(qapp: object) -> None:
    pane = ConversationPane()
    pane.show()
    sent: list[str] = []
    pane.send_requested.connect(sent.append)
    pane.composer.setFocus()
    QTest.keyClicks(pane.composer, "first line")
    QTest.keyClick(pane.composer, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    QTest.keyClicks(pane.composer, "second line")
    assert sent == []
    assert pane.composer.toPlainText() == "first line\nsecond line"
    QTest.keyClick(pane.composer, Qt.Key.Key_Return)
    assert sent == ["first line\nsecond line"]
    pane.close()


def test_enter_can_be_set_to_break_the_line(qapp: object) -> None:
    pane = ConversationPane()
    pane.show()
    pane.set_enter_sends(False)
    sent: list[str] = []
    pane.send_requested.connect(sent.append)
    QTest.keyClicks(pane.composer, "one")
    QTest.keyClick(pane.composer, Qt.Key.Key_Return)
    QTest.keyClicks(pane.composer, "two")
    assert sent == [] and pane.composer.toPlainText() == "one\ntwo"
    QTest.keyClick(pane.composer, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert sent == ["one\ntwo"]
    pane.close()


def test_what_enter_does_is_a_setting_kept_per_profile(
    loop: ConvergeEventLoop, tmp_path: Path
) -> None:
    window = MainWindow()
    controller = WindowController(window, sync_interval=0)

    def untick(dialog: QDialog) -> None:
        assert isinstance(dialog, SettingsDialog)
        assert dialog.enter_sends.isChecked()
        dialog.enter_sends.setChecked(False)
        QTimer.singleShot(0, dialog.accept)

    controller.prompts.shown.connect(untick)
    run(loop, controller.edit_settings())
    assert window.pane.enter_sends is False
    window_state.write_state(tmp_path, window_state.capture(window))
    run(loop, controller.shutdown())
    window.close()

    again = MainWindow()
    window_state.restore(again, window_state.read_state(tmp_path))
    assert again.pane.enter_sends is False
    again.close()
