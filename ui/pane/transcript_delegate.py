"""Paints transcript rows from cached inert documents, and measures them cheaply.

A reply becomes rich text through `ui.text.rich_text.render_message`, your own message stays
the plain text you typed (`fill`, decision 0211); either is laid out in an `InertDocument`
(it loads nothing) at the row's width, your bubble's then at its longest line's. Laying a
document out is costly, so the delegate keeps a bounded cache of them (`DocumentCache`,
least recently used, keyed by row, words version, width and colour scheme): scrolling
repaints from the cache, a streamed delta lays out its own row again and no other, a resize
lays out only what is painted (decision 0171).

The view places rows by their heights (`row_height`). Rows whose document is not laid out
answer an estimate from the font's metrics (`_estimate`); the view measures a row exactly as
it comes into view, so the rows on screen are exact and the rest cost next to nothing. The
last screenful of rows is measured at once, so a conversation opens at its true bottom.

Geometry: a centred reading column at most `MAX_COLUMN` wide (about 72 characters), your
messages right-aligned bubbles, the assistant's replies the column's width, cards the
column's width with their buttons' bar (`ui.pane.items.CardButtons`) at the bottom,
notes quiet lines. Long unbroken words wrap anywhere (`WrapAtWordBoundaryOrAnywhere`).
"""

from __future__ import annotations

import html
import math
from collections import OrderedDict
from typing import NamedTuple

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QPoint, QRect, QSize, Qt
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFont,
    QFontMetrics,
    QGuiApplication,
    QPainter,
    QPalette,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextOption,
)
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QTextEdit, QWidget

from ui.pane.transcript_model import CARDS, MESSAGES, Kind, TranscriptItem, TranscriptModel
from ui.text.rich_text import InertDocument
from ui.theme.palette_text import painted_colours
from ui.theme.style import ACCENT, is_dark

type AnyIndex = QModelIndex | QPersistentModelIndex

MAX_COLUMN = 720  # px: about 72 characters of the body font
SIDE = 24  # the least margin either side of the column
GAP = 6  # above and below each row
PAD_X, PAD_Y = 12, 8  # inside a bubble or card
USER_SHARE = 0.8  # your bubbles take at most this share of the column
BUTTONS_H = 34  # a card's bar of buttons
TAIL_ROW = 36  # px: a short row; the last screenful of such rows is measured exactly
CACHE_SIZE = 300
NOTES = frozenset({Kind.NOTE, Kind.ERROR, Kind.MEMORY})


class Frame(NamedTuple):
    """Where a row's box and its text go inside the row's rectangle."""

    box: QRect
    text: QPoint
    text_width: int


class DocumentCache:
    """Laid-out documents, the least recently used dropped beyond `size`; `layouts` counts
    every layout (the benchmark reads it)."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self.size = size
        self.layouts = 0
        self._docs: OrderedDict[tuple[int, int, int, bool], InertDocument] = OrderedDict()
        #: A streaming reply's document, by its row: its key, the settled HTML it holds and
        #: where its open tail begins (`_grow`).
        self._streams: dict[int, tuple[tuple[int, int, int, bool], str, int]] = {}

    def get(self, item: TranscriptItem, width: int, dark: bool, font: QFont) -> InertDocument:
        key = (item.serial, item.version, width, dark)
        doc = self._docs.get(key)
        if doc is not None:
            self._docs.move_to_end(key)
            return doc
        if item.streaming and item.kind in MESSAGES and (grown := self._grow(item, key)):
            return grown
        self._streams.pop(item.serial, None)
        doc = InertDocument()
        doc.setDefaultFont(_font_for(item, font))
        option = QTextOption()
        option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        doc.setDefaultTextOption(option)
        doc.setDocumentMargin(0)
        doc.setTextWidth(width)
        if item.streaming and item.kind in MESSAGES:
            rendered = item.render(dark)
            doc.setHtml(rendered.html[: rendered.settled])
            self._streams[item.serial] = (key, rendered.html[: rendered.settled], 0)
            self._put_tail(doc, item.serial, rendered.html[rendered.settled :])
        else:
            fill(doc, item, dark)
        if item.kind == Kind.USER:
            # Your bubble is as wide as its longest line, and its text is laid out at that
            # width: a right-to-left line then ends at the bubble's edge, not the column's.
            doc.setTextWidth(min(width, math.ceil(doc.idealWidth())))
        doc.size()  # lay it out now, once
        self.layouts += 1
        self._docs[key] = doc
        if len(self._docs) > self.size:
            self._docs.popitem(last=False)
        return doc

    def clear(self) -> None:
        self._docs.clear()
        self._streams.clear()

    def _grow(self, item: TranscriptItem, key: tuple[int, int, int, bool]) -> InertDocument | None:
        """A streaming reply's document from its previous piece's, when there is one at this
        width and colour scheme: its open tail replaced by what settled since and the new
        tail, so a piece costs the layout of its tail, not of the whole reply."""
        known = self._streams.get(item.serial)
        if known is None or known[0][2:] != key[2:]:
            return None
        old_key, held, tail_at = known
        doc = self._docs.get(old_key)
        rendered = item.render(key[3])
        if doc is None or not rendered.html.startswith(held) or rendered.settled < len(held):
            return None
        cursor = QTextCursor(doc)
        cursor.setPosition(tail_at)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        if rendered.settled > len(held):
            if not doc.isEmpty():
                cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
            cursor.insertHtml(rendered.html[len(held) : rendered.settled])
        del self._docs[old_key]
        self._docs[key] = doc
        self._streams[item.serial] = (key, rendered.html[: rendered.settled], 0)
        self._put_tail(doc, item.serial, rendered.html[rendered.settled :])
        doc.size()
        self.layouts += 1
        return doc

    def _put_tail(self, doc: InertDocument, serial: int, tail: str) -> None:
        """Append a streaming reply's open tail in a block of its own, remembering where it
        begins (the next piece replaces it from there)."""
        cursor = QTextCursor(doc)
        cursor.movePosition(QTextCursor.MoveOperation.End)
        if not doc.isEmpty():
            cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
        key, held, _ = self._streams[serial]
        self._streams[serial] = (key, held, cursor.position() - (0 if doc.isEmpty() else 1))
        cursor.insertHtml(tail)


def _font_for(item: TranscriptItem, font: QFont) -> QFont:
    # Notes are italic, but not in Arabic: the script has no italic, and the fonts' oblique
    # faces lack its glyphs (the words rendered as boxes).
    if item.kind in (Kind.NOTE, Kind.MEMORY) and not QGuiApplication.isRightToLeft():
        font = QFont(font)
        font.setItalic(True)
    return font


def fill(doc: InertDocument, item: TranscriptItem, dark: bool) -> None:
    """Put a row's words in `doc`: your own message as plain text, one paragraph per line
    (each takes the direction of its own first letter), anything else as rich text."""
    if item.kind == Kind.USER:
        doc.setPlainText(item.render(dark).plain)
    else:
        doc.setHtml(_html_for(item, dark))


def _html_for(item: TranscriptItem, dark: bool) -> str:
    """A row's rich text: a message through the renderer, our own rows escaped here."""
    if item.kind in MESSAGES:
        return item.render(dark).html
    heading = html.escape(item.text, quote=False)
    if item.kind not in CARDS:
        return f'<p style="white-space:pre-wrap">{heading}</p>'
    body = f'<p style="white-space:pre-wrap; margin:0 0 4px 0"><b>{heading}</b></p>'
    if item.detail:
        detail = html.escape(item.detail, quote=False)
        if item.kind == Kind.TOOL:
            body += f'<pre style="white-space:pre-wrap; margin:0">{detail}</pre>'
        else:
            body += f'<p style="white-space:pre-wrap; margin:0">{detail}</p>'
    return body


class TranscriptDelegate(QStyledItemDelegate):
    """Paints and measures the rows of a `TranscriptModel` for one view."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.cache = DocumentCache()
        self.width = 600  # the viewport's width (`set_width`)
        self.dark = is_dark()  # (`set_dark`)
        self.painted = -1  # the last row painted (the benchmark waits for the bottom one)
        self._epoch = 0  # bumped when every row's size is stale (width, colours, font)
        self.tail = 24  # rows at the end measured exactly: a screenful (`set_height`)
        self._widths: dict[Kind, int] = {}
        self._metrics: tuple[int, int] | None = None  # average character width, line height
        self._model: TranscriptModel | None = None
        self._rows: list[TranscriptItem] = []

    # --- geometry -----------------------------------------------------------------------

    def column(self) -> tuple[int, int]:
        """The reading column's left edge and width."""
        width = max(120, min(MAX_COLUMN, self.width - 2 * SIDE))
        return max(0, (self.width - width) // 2), width

    def text_width(self, item: TranscriptItem) -> int:
        """The width a row's text is laid out at (per kind, cached until the width changes)."""
        known = self._widths.get(item.kind)
        if known is not None:
            return known
        _left, width = self.column()
        if item.kind == Kind.USER:
            width = int(width * USER_SHARE)
        if item.kind in MESSAGES or item.kind in CARDS:
            width -= 2 * PAD_X
        self._widths[item.kind] = max(40, width)
        return self._widths[item.kind]

    def frame(self, item: TranscriptItem, rect: QRect, ideal: int) -> Frame:
        """The box (bubble or card) and the text's origin inside `rect`."""
        left, width = self.column()
        top = rect.top() + GAP
        height = rect.height() - 2 * GAP
        if item.kind == Kind.USER:  # on the end side: the right, the left in Arabic
            box_w = min(ideal + 2 * PAD_X, int(width * USER_SHARE))
            start = left if QGuiApplication.isRightToLeft() else left + width - box_w
            box = QRect(start, top, box_w, height)
        elif item.kind in MESSAGES or item.kind in CARDS:
            box = QRect(left, top, width, height)
        else:
            return Frame(QRect(left, top, width, height), QPoint(left, top), width)
        return Frame(box, QPoint(box.left() + PAD_X, top + PAD_Y), self.text_width(item))

    def measure(self, item: TranscriptItem, font: QFont) -> tuple[int, int]:
        """Exact (height, ideal text width) from the laid-out document."""
        doc = self.cache.get(item, self.text_width(item), self.dark, font)
        ideal = math.ceil(doc.idealWidth())
        height = math.ceil(doc.size().height()) + 2 * GAP
        if item.kind in MESSAGES or item.kind in CARDS:
            height += 2 * PAD_Y
        if item.buttons:
            height += BUTTONS_H
        return height, ideal

    def _estimate(self, item: TranscriptItem, font: QFont) -> tuple[int, int]:
        if self._metrics is None:
            metrics = QFontMetrics(font)
            self._metrics = (max(1, metrics.averageCharWidth()), metrics.lineSpacing())
        char, line_height = self._metrics
        width = self.text_width(item)
        per_line = max(1, width // char)
        text = item.text if not item.detail else f"{item.text}\n{item.detail}"
        if "\n" in text:
            lengths = [len(line) for line in text.split("\n")]
            lines = sum(-(-length // per_line) or 1 for length in lengths)
            longest = max(lengths)
        else:
            longest = len(text)
            lines = -(-longest // per_line) or 1
        height = lines * line_height + 2 * GAP
        if item.kind not in NOTES:
            height += 2 * PAD_Y
        if item.buttons:
            height += BUTTONS_H
        return height, min(width, longest * char)

    def _size(self, item: TranscriptItem, font: QFont, exact: bool) -> tuple[int, int, bool]:
        """(height, ideal text width, exact), measured once per words, width and colours."""
        known = item.size
        if (
            known is not None
            and known[0] == self._epoch
            and known[1] == item.version
            and (known[4] or not exact)
        ):
            return known[2], known[3], known[4]
        height, ideal = self.measure(item, font) if exact else self._estimate(item, font)
        item.size = (self._epoch, item.version, height, ideal, exact)
        item.hint = None
        return height, ideal, exact

    def row_height(self, row: int, font: QFont, exact: bool = False) -> int:
        """Row `row`'s height: known, else exact for the last screenful (and when asked),
        else estimated."""
        rows = self._rows
        return self._size(rows[row], font, exact or row >= len(rows) - self.tail)[0]

    def refresh(self, item: TranscriptItem, font: QFont) -> bool:
        """The row's words changed: measure it now; whether its height changed."""
        before = item.size[2] if item.size is not None else -1
        return self._size(item, font, True)[0] != before

    def set_width(self, width: int) -> None:
        if width != self.width:
            self.width = width
            self._epoch += 1
            self._widths.clear()

    def set_height(self, height: int) -> None:
        """The viewport's height: as many last rows as fit on it are measured exactly,
        so a conversation opens at its true bottom (each costs a render and a layout)."""
        self.tail = max(8, height // TAIL_ROW + 2)

    def set_dark(self, dark: bool) -> None:
        if dark != self.dark:
            self.dark = dark
            self._epoch += 1
            self.cache.clear()

    @property
    def model(self) -> TranscriptModel | None:
        return self._model

    @model.setter
    def model(self, model: TranscriptModel) -> None:
        self._model = model
        self._rows = model.rows

    def forget(self) -> None:
        """A new transcript or font: nothing measured is of use."""
        self._epoch += 1
        if self._model is not None:
            self._rows = self._model.rows  # a reset brings a new list
        self.cache.clear()
        self._metrics = None

    # --- QStyledItemDelegate ------------------------------------------------------------

    def sizeHint(self, option: QStyleOptionViewItem, index: AnyIndex) -> QSize:
        """Called for every row at every layout: the known height if there is one."""
        rows = self._rows
        row = index.row()
        if not 0 <= row < len(rows):
            return QSize(0, 0)
        item = rows[row]
        known = item.size
        if known is not None and known[0] == self._epoch and known[1] == item.version:
            hint = item.hint  # the same QSize as last time: no new object per row per layout
            if hint is not None:
                return hint
        exact = row >= len(rows) - self.tail
        height, _ideal, _exact = self._size(item, option.font, exact)
        item.hint = QSize(self.width, height)
        return item.hint

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: AnyIndex) -> None:
        item = index.data(TranscriptModel.ItemRole)
        if not isinstance(item, TranscriptItem):
            return
        font: QFont = option.font
        rect: QRect = option.rect
        self.painted = index.row()
        _height, ideal, _exact = self._size(item, font, True)  # the view measured it first
        frame = self.frame(item, rect, ideal)
        palette: QPalette = option.palette
        c = painted_colours(palette, self.dark)  # each held to contrast (decision 0205)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        if selected:
            shade = QColor(palette.color(QPalette.ColorRole.Highlight))
            shade.setAlpha(40)
            painter.fillRect(rect, shade)
        text_color = palette.color(QPalette.ColorRole.Text)
        if item.kind == Kind.USER:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(ACCENT))
            painter.drawRoundedRect(frame.box, 12, 12)
            text_color = QColor("white")
        elif item.kind == Kind.ASSISTANT:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(c["assistant_bg"]))
            painter.drawRoundedRect(frame.box, 12, 12)
            text_color = QColor(c["assistant_fg"])
        elif item.kind in CARDS:
            approval = item.kind == Kind.APPROVAL
            painter.setPen(QColor(c["approval_border"] if approval else c["card_border"]))
            painter.setBrush(QColor(c["approval_bg"] if approval else c["card_bg"]))
            painter.drawRoundedRect(frame.box.adjusted(0, 0, -1, -1), 8, 8)
            text_color = QColor(c["heading"])
        elif item.kind == Kind.ERROR:
            text_color = QColor(c["error"])
        else:
            text_color = QColor(c["note"])
        doc = self.cache.get(item, frame.text_width, self.dark, font)
        if item.kind in MESSAGES or item.kind in CARDS:
            painter.setClipRect(frame.box)  # a wide unwrappable block stays in its box
        painter.translate(frame.text)
        context = QAbstractTextDocumentLayout.PaintContext()
        context.palette.setColor(QPalette.ColorRole.Text, text_color)
        link = palette.color(QPalette.ColorRole.Link)
        if item.kind == Kind.USER:
            link = QColor("#cfe0ff")  # readable on the accent
        context.palette.setColor(QPalette.ColorRole.Link, link)
        doc.documentLayout().draw(painter, context)
        painter.restore()
        if option.state & QStyle.StateFlag.State_HasFocus:  # the keyboard's row, visible
            painter.save()
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setPen(palette.color(QPalette.ColorRole.Highlight))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(frame.box.adjusted(-2, -2, 1, 1), 12, 12)
            painter.restore()

    def anchor_at(self, index: AnyIndex, rect: QRect, pos: QPoint, font: QFont) -> str:
        """The link (or copy anchor) under `pos` in the row at `rect`, or ""."""
        item = index.data(TranscriptModel.ItemRole)
        if not isinstance(item, TranscriptItem) or item.kind not in MESSAGES:
            return ""
        _height, ideal, _exact = self._size(item, font, True)
        frame = self.frame(item, rect, ideal)
        doc = self.cache.get(item, frame.text_width, self.dark, font)
        return doc.documentLayout().anchorAt((pos - frame.text).toPointF())

    # --- editors: a message's selectable copy, and a card's buttons --------------------

    def createEditor(
        self, parent: QWidget, option: QStyleOptionViewItem, index: AnyIndex
    ) -> QWidget:
        """A read-only copy of the message to select words in (opened on double-click)."""
        item = index.data(TranscriptModel.ItemRole)
        editor = QTextEdit(parent)
        editor.setObjectName("messageSelection")
        editor.setReadOnly(True)
        editor.setFrameShape(QTextEdit.Shape.NoFrame)
        editor.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        editor.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        editor.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        doc = InertDocument(editor)
        doc.setDocumentMargin(0)
        option_ = QTextOption()
        option_.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        doc.setDefaultTextOption(option_)
        doc.setDefaultFont(option.font)
        if isinstance(item, TranscriptItem):
            fill(doc, item, self.dark)
            editor.setAccessibleName(item.spoken)
        editor.setDocument(doc)
        return editor

    def setEditorData(self, editor: QWidget, index: AnyIndex) -> None:
        del editor, index  # the copy has its words (Qt's default would blank it: no EditRole)

    def setModelData(self, editor: QWidget, model: object, index: AnyIndex) -> None:
        del editor, model, index  # read-only: nothing goes back

    def updateEditorGeometry(
        self, editor: QWidget, option: QStyleOptionViewItem, index: AnyIndex
    ) -> None:
        item = index.data(TranscriptModel.ItemRole)
        rect: QRect = option.rect
        if not isinstance(item, TranscriptItem):
            return
        height, ideal, _exact = self._size(item, option.font, True)
        frame = self.frame(item, rect, ideal)
        if isinstance(editor, QTextEdit):
            text_h = frame.box.height() - 2 * PAD_Y
            text_w = min(frame.text_width, frame.box.width() - 2 * PAD_X)  # your bubble's
            editor.setGeometry(frame.text.x(), frame.text.y(), text_w, text_h)
            return
        box = frame.box
        editor.setGeometry(
            box.left() + PAD_X, box.bottom() - BUTTONS_H + 2, box.width() - 2 * PAD_X, 28
        )
        del height
