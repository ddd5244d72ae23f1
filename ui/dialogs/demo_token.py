"""The demo server's token in Settings: masked, with Show and Copy, for a second device.

The built-in demo server accepts only its profile's random token (CONTRACT §10.2), so a
second device needs it. It is a secret like any token: masked until the user asks, never
selectable into a tooltip, and copied to the clipboard only on an explicit click.
"""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QPushButton, QWidget


class DemoTokenField(QWidget):
    """A read-only, masked token with a Show toggle and a Copy button."""

    def __init__(self, token: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("demoToken")
        self.field = QLineEdit(token)
        self.field.setReadOnly(True)
        self.field.setEchoMode(QLineEdit.EchoMode.Password)
        self.field.setObjectName("demoTokenValue")
        self.field.setAccessibleName(self.tr("Demo server token"))
        # Fixed pitch and wide enough for the whole token: read off one screen, typed into
        # another device, it must be legible character by character.
        self.field.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        metrics = self.field.fontMetrics()
        self.field.setMinimumWidth(metrics.horizontalAdvance(token + "MM"))
        self.field.setCursorPosition(0)
        self.show_button = QPushButton(self.tr("Show"))
        self.show_button.setObjectName("demoTokenShow")
        self.show_button.setCheckable(True)
        self.show_button.setAccessibleName(self.tr("Show the demo server token"))
        self.show_button.toggled.connect(self._set_shown)
        self.copy_button = QPushButton(self.tr("Copy"))
        self.copy_button.setObjectName("demoTokenCopy")
        self.copy_button.setAccessibleName(self.tr("Copy the demo server token"))
        self.copy_button.clicked.connect(self.copy)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.field, 1)
        layout.addWidget(self.show_button)
        layout.addWidget(self.copy_button)

    def _set_shown(self, shown: bool) -> None:
        mode = QLineEdit.EchoMode.Normal if shown else QLineEdit.EchoMode.Password
        self.field.setEchoMode(mode)
        self.show_button.setText(self.tr("Hide") if shown else self.tr("Show"))

    def copy(self) -> None:
        """Put the whole token on the clipboard (shown or not)."""
        clipboard = QGuiApplication.clipboard()
        clipboard.setText(self.field.text())
