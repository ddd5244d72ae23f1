"""The banner that says the saved copy of the conversations is damaged, with its one way
forward: Rebuild (from the server, `sync.repair`).

It sits where the offline banner does, above the sidebar and the conversation, so it is
seen before anything else. It only states the problem and asks for the action: the window's
owner (`app.desktop.Desktop`) closes the engine, rebuilds off the UI thread and reconnects,
and tells the banner how that went (`set_rebuilding`, `set_failed`, `hide`).
"""

from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from ui.text.plain import set_plain_tip

DAMAGED = str(
    QT_TRANSLATE_NOOP(
        "DamageBanner",
        "The saved copy of your conversations is damaged. Rebuild it from the server: "
        "nothing on the server is affected.",
    )
)
REBUILDING = str(QT_TRANSLATE_NOOP("DamageBanner", "Rebuilding from the server…"))
FAILED = str(
    QT_TRANSLATE_NOOP("DamageBanner", "The rebuild did not finish; nothing was changed. Try again.")
)


class DamageBanner(QFrame):
    """Words and a Rebuild button; `rebuild_requested` when it is pressed."""

    rebuild_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("damageBanner")
        self.setAccessibleName(self.tr("Saved conversations damaged"))
        self.text = QLabel(self.tr(DAMAGED))
        self.text.setObjectName("damageText")
        self.text.setTextFormat(Qt.TextFormat.PlainText)  # our sentences; reasons: tooltip
        self.text.setWordWrap(True)
        self.rebuild = QPushButton(self.tr("Rebuild"))
        self.rebuild.setObjectName("rebuildButton")
        self.rebuild.setAccessibleName(self.tr("Rebuild the saved conversations from the server"))
        self.rebuild.clicked.connect(self.rebuild_requested)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(16, 8, 16, 8)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.rebuild, 0)
        self.hide()

    def show_damage(self, details: str) -> None:
        """Say the file is damaged; `details` (the path and SQLite's reason) as a tooltip."""
        self.text.setText(self.tr(DAMAGED))
        set_plain_tip(self, details)
        self.rebuild.setEnabled(True)
        self.show()

    def set_rebuilding(self) -> None:
        self.text.setText(self.tr(REBUILDING))
        self.rebuild.setEnabled(False)

    def set_failed(self, reason: str) -> None:
        """The rebuild failed (the server unreachable): the damaged file is unchanged."""
        self.text.setText(self.tr(FAILED))
        set_plain_tip(self, reason)
        self.rebuild.setEnabled(True)
        self.show()
