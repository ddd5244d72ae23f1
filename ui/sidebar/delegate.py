"""Paints one sidebar row: the title, a relative time, an active-run mark, a pending state.

Every row has the same height (`QListView.setUniformItemSizes(True)` relies on that), so a
long sidebar lays out without asking the delegate about each one.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from PySide6.QtCore import (
    QModelIndex,
    QPersistentModelIndex,
    QPointF,
    QRect,
    QSize,
    Qt,
)
from PySide6.QtGui import QColor, QFont, QFontMetrics, QGuiApplication, QPainter, QPalette, QPen
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from ui.sidebar.model import SessionListModel, display_title
from ui.sidebar.relative_time import relative_time
from ui.sidebar.row import HEADER_PREFIX, SidebarRow
from ui.sidebar.snippet_layout import draw_snippet
from ui.theme.palette_text import header_text, quiet_text, readable
from ui.theme.style import ACCENT, FOCUS_WIDTH, row_focus_ring
from ui.window.elided_label import directed, is_rtl

if TYPE_CHECKING:
    from sync import Snippet

RUNNING_COLOR = QColor("#2e9d5b")
RUNNING_COLOR_DARK = QColor("#5fd08f")


def running_color(palette: QPalette) -> QColor:
    """Green that reads on the list's background, light or dark."""
    base = palette.color(QPalette.ColorRole.Base)
    green = RUNNING_COLOR_DARK if base.lightness() < 128 else RUNNING_COLOR
    return readable(green, (base,))  # 4.5:1, like the rest of the line


H_PAD = 12
V_PAD = 7
LINE_GAP = 3
MORE = "⋯"
MORE_WIDTH = 28


def more_rect(row: QRect) -> QRect:
    """Where a hovered row shows its "⋯" button (clicking there opens the row's menu): at
    the end side, the left edge in Arabic."""
    logical = QRect(row.right() - MORE_WIDTH - 4, row.top() + 4, MORE_WIDTH, row.height() - 8)
    return QStyle.visualRect(QGuiApplication.layoutDirection(), row, logical)


class SessionDelegate(QStyledItemDelegate):
    """Two lines per row: the title, then "2 min ago · ● Running" in a quieter colour."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._now: datetime | None = None
        # A search hit's snippet, drawn after the time (`ui.sidebar.search` sets it).
        self.snippet_of: Callable[[str], Snippet | None] = lambda _session_id: None
        self._quiet: dict[tuple[int, bool, bool], QColor] = {}
        self._fonts: dict[str, tuple[QFont, QFont, QFontMetrics, QFontMetrics]] = {}

    def set_now(self, now: datetime | None) -> None:
        """Freeze "now" (screenshots, tests); None follows the clock."""
        self._now = now

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        _title, _small, title, small = self.fonts(option.font)
        return QSize(200, V_PAD * 2 + title.height() + LINE_GAP + small.height())

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        model = index.model()
        if not isinstance(model, SessionListModel):
            super().paint(painter, option, index)
            return
        # The row straight from the model, not through `index.data` and `initStyleOption`:
        # those cost a dozen calls from C++ into `data()` per row, a large share of the paint
        # (decision 0217). The view's option already holds the state, rect, palette and font.
        row = model.row_value_at(index.row())
        if row is None:
            return
        if row.id.startswith(HEADER_PREFIX):
            self._paint_header(painter, option, row.title or "")
            return
        pending = model.is_pending_delete(row.id)
        widget = option.widget
        style = widget.style() if widget is not None else None
        painter.save()
        try:
            if style is not None:
                style.drawPrimitive(
                    QStyle.PrimitiveElement.PE_PanelItemViewItem, option, painter, widget
                )
            selected = bool(option.state & QStyle.StateFlag.State_Selected)
            palette = option.palette
            group = (
                QPalette.ColorGroup.Active
                if option.state & QStyle.StateFlag.State_Active
                else QPalette.ColorGroup.Inactive
            )
            text_role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
            text_color = palette.color(group, text_role)
            quiet = self.quiet_color(palette, selected, group == QPalette.ColorGroup.Active)
            if pending:
                text_color = QColor(quiet)

            rect = option.rect.adjusted(H_PAD, V_PAD, -H_PAD, -V_PAD)
            title_font, small_font, title_metrics, small_metrics = self.fonts(option.font)

            title = display_title(row)
            if not row.title:
                title_font = QFont(title_font)
                title_font.setItalic(True)
            painter.setFont(title_font)
            painter.setPen(text_color)
            hovered = bool(option.state & QStyle.StateFlag.State_MouseOver)
            room = rect.width() - (MORE_WIDTH if hovered else 0)
            title_rect = QRect(rect.left(), rect.top(), room, title_metrics.height())
            rtl = is_rtl(title)
            mirrored = option.direction == Qt.LayoutDirection.RightToLeft
            title_rect = QStyle.visualRect(option.direction, rect, title_rect)
            # Elide modes are logical: ElideRight drops a right-to-left title's end, which
            # is drawn on the left. A left-to-right title in the mirrored window keeps its
            # "#" and "…" at its own ends (`directed`), and sits on the start side.
            shown = title_metrics.elidedText(title, Qt.TextElideMode.ElideRight, room)
            shown = directed(shown, mirrored=mirrored)
            painter.drawText(
                title_rect,
                (Qt.AlignmentFlag.AlignRight if rtl or mirrored else Qt.AlignmentFlag.AlignLeft)
                | Qt.AlignmentFlag.AlignAbsolute
                | Qt.AlignmentFlag.AlignVCenter,
                shown,
            )
            if hovered and not pending:
                painter.drawText(
                    more_rect(option.rect),
                    Qt.AlignmentFlag.AlignCenter,
                    MORE,
                )

            line_top = title_rect.bottom() + 1 + LINE_GAP
            line = QRect(rect.left(), line_top, rect.width(), small_metrics.height())
            painter.setFont(small_font)
            if pending:
                painter.setPen(quiet)
                painter.drawText(line, Qt.AlignmentFlag.AlignLeft, self.tr("Deleting…"))
            else:
                self._paint_details(painter, option, row, line, text_color, selected)
            if option.state & QStyle.StateFlag.State_HasFocus and widget and widget.hasFocus():
                self._paint_focus(painter, option, selected)
        finally:
            painter.restore()

    def _paint_details(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        row: SidebarRow,
        line: QRect,
        text_color: QColor,
        selected: bool,
    ) -> None:
        """The second line: "2 min ago", a search hit's snippet, "● Running"."""
        palette = option.palette
        group = (
            QPalette.ColorGroup.Active
            if option.state & QStyle.StateFlag.State_Active
            else QPalette.ColorGroup.Inactive
        )
        quiet = self.quiet_color(palette, selected, group == QPalette.ColorGroup.Active)
        _title, small_font, _title_metrics, small_metrics = self.fonts(option.font)
        painter.setFont(small_font)
        when = relative_time(row.updated_at, self._now)
        painter.setPen(quiet)
        painter.drawText(line, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, when)
        found = self.snippet_of(row.id)
        if found is not None and not row.active_run_id:
            x = line.left() + small_metrics.horizontalAdvance(when + " · ")
            painter.drawText(
                QStyle.visualRect(
                    option.direction,
                    line,
                    line.adjusted(small_metrics.horizontalAdvance(when), 0, 0, 0),
                ),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                " · ",
            )
            room = line.right() - x
            if option.direction == Qt.LayoutDirection.RightToLeft:  # the snippet's box, mirrored
                x = line.left()
            mark = palette.color(group, QPalette.ColorRole.Highlight)
            mark.setAlphaF(0.28)
            painter.setPen(text_color)
            draw_snippet(painter, found, small_font, QPointF(x, line.top()), room, mark)
        if row.active_run_id:
            for part, area in self.badge_rects(option, line, when):
                if part == "dot":
                    color = QColor("#ffffff") if selected else running_color(palette)
                    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
                    painter.setBrush(color)
                    painter.setPen(Qt.PenStyle.NoPen)
                    painter.drawEllipse(area)
                    painter.setPen(color)
                else:  # laid out from the start side, mirrored in Arabic
                    painter.drawText(
                        area, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, part
                    )

    def badge_rects(
        self, option: QStyleOptionViewItem, line: QRect, when: str
    ) -> list[tuple[str, QRect]]:
        """Where the "● Running" badge after the time goes: ("dot", rect), (words, rect),
        in `line`'s logical order, mirrored (`QStyle.visualRect`) under right to left."""
        metrics = self.fonts(option.font)[3]
        x = line.left() + metrics.horizontalAdvance(when) + 10
        dot = metrics.height() // 2 - 1
        cy = line.center().y()
        words = self.tr("Running")
        logical = [
            ("dot", QRect(x, cy - dot // 2, dot, dot)),
            (words, QRect(x + dot + 5, line.top(), line.right() - x - dot - 5, line.height())),
        ]
        return [(part, QStyle.visualRect(option.direction, line, r)) for part, r in logical]

    @staticmethod
    def _paint_focus(painter: QPainter, option: QStyleOptionViewItem, selected: bool) -> None:
        """The keyboard focus ring around the current row, while the list has the focus
        (the list's stylesheet turns Qt's own dotted focus rectangle off)."""
        pen = QPen(row_focus_ring(option.palette, selected), FOCUS_WIDTH)
        pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        inset = FOCUS_WIDTH // 2 + 3  # a band of the row colour outside the ring
        painter.drawRect(option.rect.adjusted(inset, inset, -inset - 1, -inset - 1))

    def _paint_header(self, painter: QPainter, option: QStyleOptionViewItem, label: str) -> None:
        """A date section's name, small and quiet, sitting on the rows below it."""
        painter.save()
        try:
            font = QFont(self.fonts(option.font)[1])
            font.setWeight(QFont.Weight.DemiBold)
            painter.setFont(font)
            painter.setPen(header_text(option.palette))
            rect = option.rect.adjusted(H_PAD, V_PAD, -H_PAD, -4)
            painter.drawText(rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignBottom, label)
        finally:
            painter.restore()

    def quiet_color(self, palette: QPalette, selected: bool, active: bool = True) -> QColor:
        """`row_quiet` for this palette, remembered: the contrast search behind it cost a
        fifth of a row's paint, and the palette changes only with the theme."""
        key = (palette.cacheKey(), selected, active)
        color = self._quiet.get(key)
        if color is None:
            if len(self._quiet) > 16:  # a few palettes (active, inactive, themes) at most
                self._quiet.clear()
            color = self._quiet[key] = row_quiet(palette, selected, active)
        return color

    def fonts(self, base: QFont) -> tuple[QFont, QFont, QFontMetrics, QFontMetrics]:
        """The title and small fonts derived from the row's font, and their metrics, made
        once per base font (callers copy a font before changing it)."""
        key = base.key()
        made = self._fonts.get(key)
        if made is None:
            title, small = self._title_font(base), self._small_font(base)
            if len(self._fonts) > 8:
                self._fonts.clear()
            made = self._fonts[key] = (title, small, QFontMetrics(title), QFontMetrics(small))
        return made

    @staticmethod
    def _title_font(base: QFont) -> QFont:
        return QFont(base)  # regular weight: a list of titles, not a list of headlines

    @staticmethod
    def _small_font(base: QFont) -> QFont:
        font = QFont(base)
        size = base.pointSizeF()
        if size > 0:
            font.setPointSizeF(max(size - 1.5, 7.0))
        return font


def row_quiet(palette: QPalette, selected: bool, active: bool = True) -> QColor:
    """The secondary line's colour ("2 min ago", "Deleting…"): the row's text softened
    towards the row's background, held to 4.5:1 against it (`ui.theme.palette_text`). On the
    selected row's accent there is no room for a quieter tone (white is 4.7:1 on it):
    the line keeps the highlighted-text colour."""
    if selected:
        return quiet_text(palette, selected=True, background=QColor(ACCENT), alpha=1.0)
    return quiet_text(palette, active=active)
