"""Strings go through Qt's translation functions: a translator changes them without code
changes, and a translated dialog still means what its buttons say."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QCoreApplication, QTimer, QTranslator
from PySide6.QtWidgets import QApplication, QDialog, QMessageBox, QWidget

from app.loop import ConvergeEventLoop
from tests.ui.conftest import run
from ui.dialogs.dialogs import Prompts
from ui.pane.pane import ConversationPane
from ui.window.main_window import MainWindow

GERMAN = {
    ("MainWindow", "New Conversation"): "Neue Unterhaltung",
    ("MainWindow", "Search conversations"): "Unterhaltungen durchsuchen",
    ("MainWindow", "Loading conversations…"): "Unterhaltungen werden geladen…",
    ("ConversationPane", "Send"): "Senden",
    ("Dialogs", "Stop Run and Delete"): "Lauf stoppen und löschen",
}


class DictTranslator(QTranslator):
    def translate(
        self, context: str, source: str, disambiguation: str | None = None, n: int = -1
    ) -> str:
        return GERMAN.get((context, source), "")


@pytest.fixture
def german(qapp: QApplication) -> Iterator[None]:
    translator = DictTranslator()
    QCoreApplication.installTranslator(translator)
    try:
        yield
    finally:
        QCoreApplication.removeTranslator(translator)


def test_a_translator_changes_the_windows_words(german: None) -> None:
    window = MainWindow()
    assert window.new_action.text() == "Neue Unterhaltung"
    assert window.filter.placeholderText() == "Unterhaltungen durchsuchen"
    assert window.sidebar_empty.text() == "Unterhaltungen werden geladen…"
    pane = ConversationPane()
    assert pane.send_button.text() == "Senden"
    window.close()


def test_a_translated_button_still_means_what_it_says(
    german: None, loop: ConvergeEventLoop
) -> None:
    parent = QWidget()
    prompts = Prompts(parent)

    def click(dialog: QDialog) -> None:
        assert isinstance(dialog, QMessageBox)
        button = next(b for b in dialog.buttons() if b.text() == "Lauf stoppen und löschen")
        QTimer.singleShot(0, button.click)

    prompts.shown.connect(click)
    assert run(loop, prompts.confirm_delete_running("Trip", "run_1")) is True
