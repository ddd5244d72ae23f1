"""Keyboard Shortcuts (F1 or Ctrl+/): every shortcut the window has, read from its actions.

`window_shortcuts` walks the window's `QAction`s (its own, the toolbar's, the sidebar's and
the pane's), so a new action with a shortcut shows up by itself. Keys that are not actions
(Enter in the composer, Escape, Ctrl+C in the transcript: widgets handle them, and an action
would take them from every other widget) are `typing_keys`, the one short list kept by
hand. The dialog is non-modal and deletes itself on close (no nested event loop).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)


def action_name(action: QAction) -> str:
    """An action's words without the mnemonic's "&" or a trailing "…"."""
    text = action.text().replace("&&", "\0").replace("&", "").replace("\0", "&")
    return text.removesuffix("…").strip()


def window_shortcuts(window: QWidget) -> list[tuple[str, str]]:
    """(action, its keys as the platform writes them) for every action of `window` and its
    children that has a shortcut, in the order they were made, each action once."""
    seen: set[int] = set()
    rows: list[tuple[str, str]] = []
    for action in [*window.actions(), *window.findChildren(QAction)]:
        if id(action) in seen or not action.shortcuts() or not action.text():
            continue
        seen.add(id(action))
        keys = ", ".join(
            key.toString(QKeySequence.SequenceFormat.NativeText)
            for key in action.shortcuts()
            if not key.isEmpty()  # a standard key this platform has none for
        )
        if not keys:
            continue
        rows.append((action_name(action), keys))
    return rows


def typing_keys(*, enter_sends: bool = True) -> list[tuple[str, str]]:
    """The keys widgets handle themselves: sending and a new line (as Settings has them),
    Escape, and copying the selected messages."""

    def keys(*sequences: str) -> str:
        native = QKeySequence.SequenceFormat.NativeText
        return ", ".join(QKeySequence(key).toString(native) for key in sequences)

    send, new_line = ("Return", "Shift+Return") if enter_sends else ("Ctrl+Return", "Return")
    return [
        (QCoreApplication.translate("ShortcutsDialog", "Send the message"), keys(send)),
        (QCoreApplication.translate("ShortcutsDialog", "New line in the message"), keys(new_line)),
        (
            QCoreApplication.translate("ShortcutsDialog", "Clear the search, close a dialog"),
            keys("Esc"),
        ),
        (
            QCoreApplication.translate("ShortcutsDialog", "Copy the selected messages"),
            keys("Ctrl+C"),
        ),
    ]


class ShortcutsDialog(QDialog):
    """A two-column table: what, and which keys do it."""

    def __init__(self, window: QWidget, typing: Sequence[tuple[str, str]] = ()) -> None:
        super().__init__(window)
        self.setObjectName("shortcutsDialog")
        self.setWindowTitle(self.tr("Keyboard Shortcuts"))
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        rows = [*window_shortcuts(window), *typing]
        table = QTableWidget(len(rows), 2)
        table.setObjectName("shortcutsTable")
        table.setAccessibleName(self.tr("Keyboard shortcuts"))
        table.setHorizontalHeaderLabels([self.tr("Action"), self.tr("Keys")])
        table.verticalHeader().hide()
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setShowGrid(False)
        for row, (name, keys) in enumerate(rows):
            table.setItem(row, 0, QTableWidgetItem(name))
            table.setItem(row, 1, QTableWidgetItem(keys))
        header = table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.table = table
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(table)
        layout.addWidget(buttons)
        self.resize(420, 360)

    def rows(self) -> list[tuple[str, str]]:
        """What the table shows, row by row."""

        def text(row: int, column: int) -> str:
            item = self.table.item(row, column)
            return item.text() if item is not None else ""

        return [(text(row, 0), text(row, 1)) for row in range(self.table.rowCount())]
