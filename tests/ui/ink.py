"""A transcript row painted by its delegate, and its text's ink read from the pixels.

`paint_row` paints one row through `TranscriptDelegate.paint` twice: once as the user sees
it, once with every character made transparent (the bubble, the table's shading, the
inline code's background and the borders stay). The pixels that differ are the text's
ink, and the second image is the surface under each of them. The row's document is also
drawn alone, unclipped, so that text laid out outside its box (and clipped away there) is
still found. `glyph_contrasts` groups the ink into touching clusters (glyphs) and gives
each the contrast of its strongest pixel against the surface under it: a fully covered
stroke, which is what the eye reads the glyph's colour from.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFont,
    QImage,
    QPainter,
    QPalette,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import QStyle, QStyleOptionViewItem

from ui.pane.transcript_delegate import TranscriptDelegate
from ui.pane.transcript_model import TranscriptModel
from ui.theme.style import contrast

#: Clusters of fewer pixels (a dot, a comma's tail) may have no fully covered pixel.
MIN_GLYPH = 8


@dataclass
class Ink:
    """Where the text's ink fell and what it stands on."""

    box: QRect  # the bubble, card or row box, in row coordinates
    painted: list[tuple[int, int]]  # ink pixels in the row as painted
    laid_out: list[tuple[int, int]]  # ink of the document drawn alone, in row coordinates
    row: QImage
    surface: QImage


def _pixels(image: QImage) -> array[int]:
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    values = array("I")
    values.frombytes(bytes(image.constBits()))
    return values


def _diff(a: QImage, b: QImage) -> list[tuple[int, int]]:
    width = a.width()
    pa, pb = _pixels(a), _pixels(b)
    out: list[tuple[int, int]] = []
    for y in range(a.height()):
        start = y * width
        row_a, row_b = pa[start : start + width], pb[start : start + width]
        if row_a == row_b:
            continue
        out.extend((x, y) for x in range(width) if row_a[x] != row_b[x])
    return out


def _blank_text(doc: QTextDocument) -> None:
    cursor = QTextCursor(doc)
    cursor.select(QTextCursor.SelectionType.Document)
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(Qt.GlobalColor.transparent))
    cursor.mergeCharFormat(fmt)
    cursor.mergeBlockCharFormat(fmt)  # a list's bullets and numbers


def _draw(doc: QTextDocument, size: QSize, fill: QColor, text: QColor) -> QImage:
    image = QImage(size, QImage.Format.Format_RGB32)
    image.fill(fill)
    painter = QPainter(image)
    context = QAbstractTextDocumentLayout.PaintContext()
    context.palette.setColor(QPalette.ColorRole.Text, text)
    doc.documentLayout().draw(painter, context)
    painter.end()
    return image


def paint_row(
    delegate: TranscriptDelegate, model: TranscriptModel, row: int, palette: QPalette, font: QFont
) -> Ink:
    """Row `row` painted on the palette's base at the delegate's width, and its ink."""
    index = model.index(row, 0)
    item = model.item(row)
    option = QStyleOptionViewItem()
    option.palette = palette
    option.font = font
    option.state |= QStyle.StateFlag.State_Enabled | QStyle.StateFlag.State_Active
    height = delegate.sizeHint(option, index).height()
    option.rect = QRect(0, 0, delegate.width, height)
    base = palette.color(QPalette.ColorRole.Base)

    def paint() -> QImage:
        image = QImage(QSize(delegate.width, height), QImage.Format.Format_RGB32)
        image.fill(base)
        painter = QPainter(image)
        delegate.paint(painter, option, index)
        painter.end()
        return image

    row_image = paint()
    assert item.size is not None
    frame = delegate.frame(item, option.rect, item.size[3])
    doc = delegate.cache.get(item, delegate.text_width(item), delegate.dark, font)
    # The document alone, on the box's colour, twice: its ink wherever it was laid out.
    room = QSize(delegate.width * 3, height + 200)
    under = row_image.pixelColor(frame.box.left() + 4, frame.box.center().y())
    alone_doc = doc.clone()
    alone_doc.setTextWidth(doc.textWidth())
    seen = QColor("black") if under.lightness() > 128 else QColor("white")
    with_text = _draw(alone_doc, room, under, seen)
    _blank_text(alone_doc)
    blank = _draw(alone_doc, room, under, QColor(Qt.GlobalColor.transparent))
    shift = frame.text
    laid_out = [(x + shift.x(), y + shift.y()) for x, y in _diff(with_text, blank)]
    _blank_text(doc)  # the cached document: painted again, the surface alone
    surface = paint()
    delegate.cache.clear()
    return Ink(frame.box, _diff(row_image, surface), laid_out, row_image, surface)


def outside(ink: list[tuple[int, int]], box: QRect) -> list[tuple[int, int]]:
    return [p for p in ink if not box.contains(QPoint(*p))]


def glyph_contrasts(ink: Ink) -> list[tuple[float, str, str]]:
    """Each cluster of touching ink pixels (of `MIN_GLYPH` or more): the contrast of its
    strongest pixel against the surface under it, and the two colours."""
    left = set(ink.painted)
    found: list[tuple[float, str, str]] = []
    while left:
        seed = left.pop()
        cluster, todo = [seed], [seed]
        while todo:
            x, y = todo.pop()
            for dx in (-1, 0, 1):
                for dy in (-1, 0, 1):
                    near = (x + dx, y + dy)
                    if near in left:
                        left.remove(near)
                        cluster.append(near)
                        todo.append(near)
        if len(cluster) < MIN_GLYPH:
            continue
        best = (0.0, "", "")
        for x, y in cluster:
            fg, bg = ink.row.pixelColor(x, y), ink.surface.pixelColor(x, y)
            ratio = contrast(fg, bg)
            if ratio > best[0]:
                best = (ratio, fg.name(), bg.name())
        found.append(best)
    return found
