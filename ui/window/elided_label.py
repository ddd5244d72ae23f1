"""A one-line label that elides its text instead of widening the window.

A plain `QLabel`'s minimum width is its whole text: a conversation with a long title would
make the window grow and stay that wide. This label asks for almost no width, paints the
text elided to the room it gets, follows the text's own direction (an Arabic or Hebrew title
is right-aligned and loses its end, drawn on the left), and keeps the full text in its
tooltip, accessible name and (plain) accessible description.
"""

from __future__ import annotations

import unicodedata

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QFrame, QSizePolicy, QWidget

from ui.text.plain import neutral, set_plain_tip

MIN_CHARS = 8


def is_rtl(text: str) -> bool:
    """Whether a text reads right to left: its first strong character (the Unicode
    bidirectional algorithm's rule for a paragraph's direction) is Arabic or Hebrew."""
    for char in text:
        kind = unicodedata.bidirectional(char)
        if kind in ("R", "AL"):
            return True
        if kind == "L":
            return False
    return False


_LRM, _RLM = "\u200e", "\u200f"


def directed(text: str, *, mirrored: bool) -> str:
    """`text` to draw on a line whose base direction is right to left (`mirrored`) or left
    to right: a title of the other direction is held between marks of its own, so the
    neutral characters at its ends ("#42 notes", a trailing "…") stay at its own start and
    end instead of moving to the line's ("notes #42" in the Arabic window)."""
    if not text or is_rtl(text) == mirrored:
        return text
    mark = _RLM if is_rtl(text) else _LRM
    return f"{mark}{text}{mark}"


class ElidedLabel(QFrame):
    """One line of text, elided at the end that follows the text's direction."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._text = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setText(text)

    def text(self) -> str:
        return self._text

    def setText(self, text: str) -> None:
        """Shown neutralised (its own bidi controls cannot reorder it) and, in the tooltip,
        literally: a title is the server's text (`ui.text.plain`)."""
        text = neutral(text)
        self._text = text
        set_plain_tip(self, text)
        self.setAccessibleName(text)
        self.updateGeometry()
        self.update()

    def elided_text(self, width: int | None = None) -> str:
        """The text as painted in `width` pixels (the label's width by default)."""
        room = self.contentsRect().width() if width is None else width
        # Logical: the text's end goes, which is on the left for a right-to-left title.
        return self.fontMetrics().elidedText(self._text, Qt.TextElideMode.ElideRight, max(0, room))

    def right_to_left(self) -> bool:
        return is_rtl(self._text)

    def sizeHint(self) -> QSize:
        metrics = self.fontMetrics()
        margins = self.contentsMargins()
        width = metrics.horizontalAdvance(self._text) + margins.left() + margins.right()
        return QSize(width, metrics.height() + margins.top() + margins.bottom())

    def minimumSizeHint(self) -> QSize:
        metrics = self.fontMetrics()
        margins = self.contentsMargins()
        width = metrics.averageCharWidth() * MIN_CHARS
        return QSize(width, metrics.height() + margins.top() + margins.bottom())

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        painter = QPainter(self)
        rect: QRect = self.contentsRect()
        rtl = self.right_to_left()
        align = Qt.AlignmentFlag.AlignVCenter | (
            Qt.AlignmentFlag.AlignRight if rtl else Qt.AlignmentFlag.AlignLeft
        )
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.setFont(self.font())
        mirrored = painter.layoutDirection() == Qt.LayoutDirection.RightToLeft
        painter.drawText(
            rect, int(align), directed(self.elided_text(rect.width()), mirrored=mirrored)
        )
        painter.end()
