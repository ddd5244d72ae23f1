"""A failed window action's sentence is translatable and keeps its English."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QLocale
from PySide6.QtWidgets import QApplication

from app import translations
from ui.window.action_words import couldnt


def test_the_english_is_what_it_was(qapp: QApplication) -> None:
    assert couldnt("send the message") == "Couldn't send the message"
    assert couldnt("open notes.txt") == "Couldn't open notes.txt"
    assert couldnt("do something new") == "Couldn't do something new"


@pytest.fixture
def german(qapp: QApplication) -> Iterator[None]:
    installed = translations.install(qapp, QLocale("de"))
    try:
        yield
    finally:
        translations.uninstall(qapp, installed)


def test_german(german: None) -> None:
    assert couldnt("send the message") == "Die Nachricht konnte nicht gesendet werden"
    assert couldnt("save plan.md") == "plan.md konnte nicht gespeichert werden"
