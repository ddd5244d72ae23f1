"""A search hit's snippet, laid out for painting with its matched ranges highlighted.

Snippet text comes from messages and is hostile: it is laid out as plain text by
`QTextLayout`, whose highlight is a list of format ranges, so no markup is ever parsed
(`<b>` and `&amp;` show as typed). It is a single line in the sidebar: line breaks, tabs
and other control characters, and explicit bidirectional controls (`ui.text.plain`), become
spaces, one character for one so the ranges (code points, `sync.mirror.search_text.Snippet`)
still point at the same letters. Qt counts UTF-16 units, so the ranges are converted.
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QFont, QPainter, QTextCharFormat, QTextLayout, QTextOption

from ui.text.plain import EXPLICIT_BIDI

if TYPE_CHECKING:
    from sync import Snippet


def one_line(text: str) -> str:
    """`text` with every control, separator of lines and explicit bidi control a space."""
    return "".join(
        " " if c in EXPLICIT_BIDI or unicodedata.category(c) in ("Cc", "Zl", "Zp") else c
        for c in text
    )


def _utf16(text: str, index: int) -> int:
    return len(text[:index].encode("utf-16-le")) // 2


def snippet_layout(snippet: Snippet, font: QFont, width: float, mark: QColor) -> QTextLayout:
    """One line of the snippet, `width` wide, its matched ranges bold on `mark`."""
    text = one_line(snippet.text)
    layout = QTextLayout(text, font)
    option = QTextOption()
    option.setWrapMode(QTextOption.WrapMode.NoWrap)
    layout.setTextOption(option)
    formats = []
    for start, end in snippet.ranges:
        start, end = max(0, start), min(len(text), end)
        if start >= end:
            continue
        fmt = QTextCharFormat()
        fmt.setFontWeight(QFont.Weight.Bold)
        fmt.setBackground(mark)
        highlight = QTextLayout.FormatRange()
        highlight.start = _utf16(text, start)
        highlight.length = _utf16(text, end) - highlight.start
        highlight.format = fmt
        formats.append(highlight)
    layout.setFormats(formats)
    layout.beginLayout()
    line = layout.createLine()
    if line.isValid():
        line.setLineWidth(width)
    layout.endLayout()
    return layout


def draw_snippet(
    painter: QPainter, snippet: Snippet, font: QFont, origin: QPointF, width: float, mark: QColor
) -> None:
    """Paint the snippet's line at `origin` (its top left), clipped to `width`."""
    layout = snippet_layout(snippet, font, width, mark)
    painter.save()
    try:
        height = layout.boundingRect().height() + 2
        painter.setClipRect(QRectF(origin.x(), origin.y(), width, height))
        layout.draw(painter, origin)
    finally:
        painter.restore()
