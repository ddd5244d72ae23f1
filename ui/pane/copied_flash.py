"""The word "Copied" over a code block's Copy, for a moment after it was clicked.

The click copies silently (`TranscriptView.activate_anchor`): without a sign the user clicks
again or pastes to check. The flash watches the transcript's viewport for a release on a copy
anchor and shows itself where the click was, then hides after `FLASH_MS`; it never takes the
focus or the mouse, so the view keeps working under it.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, Qt, QTimer
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QLabel, QWidget

from ui.pane.transcript_view import TranscriptView
from ui.text.rich_text import COPY_SCHEME

# Long enough to be seen, short enough not to cover the code.
FLASH_MS = 1_500


class CopiedFlash(QLabel):
    """A tooltip-like "Copied" on `view`'s viewport (`timer` hides it again)."""

    def __init__(self, view: TranscriptView) -> None:
        super().__init__(view.viewport())
        self._view = view
        self.setObjectName("copiedFlash")
        self.setText(self.tr("Copied"))
        self.setAccessibleName(self.tr("Copied"))
        self.setAutoFillBackground(True)
        self.setBackgroundRole(self.palette().ColorRole.ToolTipBase)
        self.setForegroundRole(self.palette().ColorRole.ToolTipText)
        self.setMargin(4)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents, True)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.hide()
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(FLASH_MS)
        self.timer.timeout.connect(self.hide)
        view.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.MouseButtonRelease
            and isinstance(event, QMouseEvent)
            and event.button() == Qt.MouseButton.LeftButton
        ):
            pos = event.position().toPoint()
            if self._view.anchor_at(pos).startswith(f"{COPY_SCHEME}:"):
                self.flash(pos)
        return False  # the view still handles the click (it copies)

    def flash(self, at: QPoint) -> None:
        """Show "Copied" centred on `at` (inside the viewport) until the timer ends."""
        self.adjustSize()
        area = self.parentWidget()
        bounds = area.rect() if isinstance(area, QWidget) else QRect()
        place = QRect(QPoint(0, 0), self.size())
        place.moveCenter(at)
        place.moveLeft(max(0, min(place.left(), bounds.width() - place.width())))
        place.moveTop(max(0, min(place.top(), bounds.height() - place.height())))
        self.move(place.topLeft())
        self.raise_()
        self.show()
        self.timer.start()
