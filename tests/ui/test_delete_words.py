"""The window's delete confirmation says, in English, exactly what the command line says
(`sync.wording`, ADR-0050's required copy), while going through the translator."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from sync import wording
from ui.window import delete_words


def test_the_english_is_the_command_lines(qapp: QApplication) -> None:
    for count in (1, 3):
        assert delete_words.consequences(count) == wording.delete_consequences(count)
    assert delete_words.question("Trip") == wording.delete_question("Trip")
    assert delete_words.question(None) == wording.delete_question(None)
    assert delete_words.question(None, 4) == wording.delete_question(None, 4)
    assert delete_words.CONFIRM_TITLE == wording.DELETE_CONFIRM_TITLE
    assert delete_words.DELETE_EVERYWHERE == wording.DELETE_EVERYWHERE_BUTTON
    assert delete_words.CANCEL == wording.CANCEL_BUTTON
