"""The composer: Enter sends, Shift+Enter breaks the line (or Ctrl+Enter sends, when set)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from ui.conversation_pane import ConversationPane


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
    assert pane.composer_text() == "first line\nsecond line"
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
    assert sent == [] and pane.composer_text() == "one\ntwo"
    QTest.keyClick(pane.composer, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert sent == ["one\ntwo"]
    pane.close()
