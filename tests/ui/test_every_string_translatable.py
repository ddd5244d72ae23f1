"""Every word the window shows goes through the translator.

A pseudo translator maps every source string to a marked form ("⟦Send⟧"); the window is
built in its states (empty, with conversations and date sections, a conversation open,
the offline banner, the settings dialog, the delete confirmation, the shortcuts dialog)
and every visible text is walked: labels, buttons, actions, menus, placeholders,
tooltips, window titles, the status line, and the sidebar's painted texts through the
model and the formatting functions. A text without the marker was not translatable.
Conversation titles and content from the fixture are data, excluded by their known
values; so are the server's and the profile's names the status bar shows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from PySide6.QtCore import QCoreApplication, Qt, QTranslator
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QComboBox,
    QLabel,
    QLineEdit,
    QMenu,
    QMessageBox,
    QTextEdit,
    QWidget,
)

from sync.profile.token_store import TokenLocation
from tests.ui.conftest import row
from ui.dialogs.dialogs import build_delete_box
from ui.dialogs.settings import ConnectionSettings, SettingsDialog
from ui.dialogs.trust_rows import token_storage_words
from ui.sidebar.grouping import group_rows
from ui.sidebar.model import SessionListModel
from ui.sidebar.relative_time import forget_words, relative_time
from ui.window.main_window import MainWindow

OPEN = "⟦"
DATA = {"Trip to Lisbon", "Notes", "alice", "http://127.0.0.1:8000", "dev-alice", "laptop"}
#: Not words: the language names (each in its own language), typed keys, glyphs.
NOT_WORDS = re.compile(r"^([\W\d_]*|English|Deutsch|العربية|⋯)$")


class PseudoTranslator(QTranslator):
    def translate(
        self, context: str, source: str, disambiguation: str | None = None, n: int = -1
    ) -> str:
        return f"{OPEN}{source}⟧" if source else ""


@pytest.fixture
def pseudo(qapp: QApplication) -> Iterator[None]:
    """The pseudo language installed as the app installs a language (`app.translations`):
    the days already worded in another language are forgotten, on the way in and out."""
    translator = PseudoTranslator()
    QCoreApplication.installTranslator(translator)
    forget_words()
    try:
        yield
    finally:
        QCoreApplication.removeTranslator(translator)
        forget_words()


def _texts(top: QWidget) -> list[tuple[str, str]]:
    """(where, text) for every visible text under `top`."""
    found: list[tuple[str, str]] = [("window title", top.windowTitle())]
    widgets = [top, *top.findChildren(QWidget)]
    for widget in widgets:
        if not widget.isVisibleTo(top) and widget is not top:
            continue
        name = f"{type(widget).__name__}#{widget.objectName()}"
        found.append((f"{name} tooltip", widget.toolTip()))
        found.append((f"{name} accessible name", widget.accessibleName()))
        if isinstance(widget, QLabel) and widget.text():
            found.append((name, widget.text()))
        if isinstance(widget, QAbstractButton):
            found.append((name, widget.text()))
        if isinstance(widget, QLineEdit):
            found.append((f"{name} placeholder", widget.placeholderText()))
        if isinstance(widget, QTextEdit):
            found.append((f"{name} placeholder", widget.placeholderText()))
        if isinstance(widget, QComboBox):
            found += [(name, widget.itemText(i)) for i in range(widget.count())]
        for action in widget.actions():
            found += [(f"action {action.objectName()}", action.text())]
            found += [(f"action {action.objectName()} tooltip", action.toolTip())]
            if isinstance(menu := action.menu(), QMenu):
                found += [(f"menu {menu.title()}", a.text()) for a in menu.actions()]
    return found


def _unmarked(texts: list[tuple[str, str]]) -> list[tuple[str, str]]:
    bad = []
    for where, text in texts:
        text = re.sub(r"<[^>]*>", "", text).replace("&", "")  # a tooltip's markup
        if not text or OPEN in text or NOT_WORDS.match(text):
            continue
        if any(part.strip() in DATA for part in re.split(r"[\n·—]", text)):
            continue
        if text.strip() in DATA:
            continue
        bad.append((where, text))
    return bad


def test_every_visible_string_is_translatable(pseudo: None) -> None:
    window = MainWindow()
    window.resize(1000, 700)
    window.show()
    texts = _texts(window)  # empty: loading
    now = datetime.now(UTC)
    stamp = (now - timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    old = (now - timedelta(days=60)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    rows = [row("ses_a", "Trip to Lisbon", stamp, active_run_id="run_1"), row("ses_b", None, old)]
    window.model.replace_now(group_rows(rows))
    model: SessionListModel = window.model
    for i in range(model.rowCount()):
        index = model.index(i, 0)
        for role in (
            Qt.ItemDataRole.DisplayRole,
            Qt.ItemDataRole.AccessibleTextRole,
            Qt.ItemDataRole.ToolTipRole,
        ):
            value = index.data(role)
            if isinstance(value, str):
                texts.append((f"sidebar row {i} role {role}", value))
    texts.append(("relative time", relative_time(stamp)))
    window.set_where("alice", "http://127.0.0.1:8000", "laptop")
    window.set_status(window.tr("Syncing…"))
    window.pane.show_session("ses_a", "Trip to Lisbon", stamp)
    texts += _texts(window)
    window.set_offline(True)
    texts += _texts(window)
    settings = SettingsDialog(
        window,
        ConnectionSettings("http://127.0.0.1:8000", "dev-alice"),
        token_storage=token_storage_words(TokenLocation("keychain", "a")),
    )
    settings.show()
    texts += _texts(settings)
    settings.close()
    shortcuts = window.show_shortcuts()
    texts += _texts(shortcuts)
    texts += [(f"shortcut {i}", name) for i, (name, _keys) in enumerate(shortcuts.rows())]
    shortcuts.close()
    box: QMessageBox = build_delete_box(window, ["Trip to Lisbon"])
    box.show()
    texts += _texts(box)
    box.close()
    window.close()
    assert len(texts) > 80
    bad = _unmarked(texts)
    assert bad == [], "\n".join(f"{w}: {t!r}" for w, t in bad)
