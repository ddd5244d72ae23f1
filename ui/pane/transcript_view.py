"""The transcript's list view: follows the bottom, copies messages, opens links on click.

A `QListView` over the `TranscriptModel`, painted by the `TranscriptDelegate`: it creates
no widget per message (only the few cards with buttons carry a `CardButtons` bar, decision
0172). What it adds to a plain list view:

- Following: while the view is at the bottom it stays there as rows come and a reply
  streams; scrolled up, it stays put and offers "Jump to latest" (decision 0173). Sending
  (`follow_bottom`) scrolls down.
- Copying: Ctrl+C and the context menu's "Copy message" copy the selected messages' plain
  text, joined by blank lines.
- Links: the target shows on hover (a plain tooltip); a click opens it only if
  `ui.text.rich_text.link_target` allows it, and a click on a `converge-copy:N` anchor copies
  code block N. Nothing opens on hover.
- Selecting words: a double-click opens a read-only copy of the message over it
  (a persistent editor) to select in; Escape or leaving it closes it (decision 0174).
- Placing rows: the view keeps each row's height and the sums above them itself
  (`RowOffsets`), and measures a row exactly as it comes into view, row by row: `QListView`
  placed every row again whenever one row's height changed (decision 0220). A row revealed
  above the top that turns out taller or shorter keeps its bottom edge where it was, so
  scrolling up does not push what is being read down the screen.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import (
    QCoreApplication,
    QEvent,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QRect,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QContextMenuEvent,
    QCursor,
    QDesktopServices,
    QFocusEvent,
    QGuiApplication,
    QHelpEvent,
    QKeyEvent,
    QKeySequence,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QRegion,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QListView,
    QMenu,
    QStyle,
    QStyleOptionViewItem,
    QTextEdit,
    QToolButton,
    QToolTip,
    QWidget,
)

from ui.pane.items import CardButtons
from ui.pane.row_offsets import RowOffsets
from ui.pane.transcript_delegate import TranscriptDelegate
from ui.pane.transcript_model import MESSAGES, TranscriptItem, TranscriptModel
from ui.text.plain import plain_tooltip
from ui.text.rich_text import COPY_SCHEME, link_target
from ui.theme.style import is_dark

FOLLOW_SLACK = 24  # px from the bottom that still count as "at the bottom"


class TranscriptView(QListView):
    """One conversation's rows; `card_action` reports a card's button (key, name, action)."""

    card_action = Signal(str, str, str)

    def __init__(self, model: TranscriptModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._offsets = RowOffsets()  # first: Qt calls the overrides below from here on
        self._geometry_due = False
        self._model = model
        self.setObjectName("transcript")
        self.setAccessibleName(QCoreApplication.translate("ConversationPane", "Transcript"))
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setUniformItemSizes(False)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setMouseTracking(True)
        self.verticalScrollBar().setSingleStep(24)
        self.delegate = TranscriptDelegate(self)
        self.setItemDelegate(self.delegate)
        self.setModel(model)
        self.delegate.model = model
        self.following = True
        self._selecting: QPersistentModelIndex | None = None

        self.jump = QToolButton(self)
        self.jump.setObjectName("jumpToLatest")
        self.jump.setText(QCoreApplication.translate("ConversationPane", "Jump to latest ↓"))
        self.jump.setAccessibleName(
            QCoreApplication.translate("ConversationPane", "Jump to latest")
        )
        self.jump.setCursor(Qt.CursorShape.PointingHandCursor)
        self.jump.clicked.connect(self.follow_bottom)
        self.jump.hide()

        self._anchor: tuple[QPersistentModelIndex, int] | None = None
        model.rowsAboutToBeInserted.connect(self._inserting)
        model.rowsInserted.connect(self._inserted)
        model.modelReset.connect(self._was_reset)
        bar = self.verticalScrollBar()
        bar.rangeChanged.connect(self._range_changed)
        bar.valueChanged.connect(self._scrolled)
        self.doubleClicked.connect(self.select_words)

    # --- following the bottom -----------------------------------------------------------

    def at_bottom(self) -> bool:
        bar = self.verticalScrollBar()
        return bar.value() >= bar.maximum() - FOLLOW_SLACK

    def follow_bottom(self) -> None:
        """Scroll to the latest row and keep following it."""
        self.following = True
        self.jump.hide()
        self.scrollToBottom()

    def _range_changed(self, _minimum: int, maximum: int) -> None:
        if self.following:
            self.verticalScrollBar().setValue(maximum)

    def _scrolled(self, _value: int) -> None:
        self.following = self.at_bottom()
        if self.following:
            self.jump.hide()

    def _news(self) -> None:
        """Something new at the bottom: follow it, or offer to jump to it."""
        if not self.following:
            self._place_jump()
            self.jump.show()
            self.jump.raise_()

    def _place_jump(self) -> None:
        self.jump.adjustSize()
        area = self.viewport().geometry()
        x = area.left() + (area.width() - self.jump.width()) // 2
        self.jump.move(x, area.bottom() - self.jump.height() - 12)

    def changeEvent(self, event: QEvent) -> None:
        """A new palette (light or dark): documents are laid out again in its colours."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self.delegate.forget()
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.StyleChange):
            dark = is_dark(self.palette())
            if dark != self.delegate.dark:
                self.delegate.set_dark(dark)
                self.scheduleDelayedItemsLayout()

    def resizeEvent(self, event: QResizeEvent) -> None:
        width = self.delegate.width
        self.delegate.set_width(self.viewport().width())
        self.delegate.set_height(self.viewport().height())
        if self.delegate.width != width:
            self.scheduleDelayedItemsLayout()  # every height is stale at a new width
        QAbstractItemView.resizeEvent(self, event)
        self._place_jump()

    # --- placing rows -------------------------------------------------------------------

    def doItemsLayout(self) -> None:
        """Every row's height again (a reset, a new width, font or colours): the delegate's
        known ones, estimates for the rest, the rows in view measured."""
        font, height = self.font(), self.delegate.row_height
        self._offsets.reset([height(row, font) for row in range(self._model.rowCount())])
        self._measure_view()
        QAbstractItemView.doItemsLayout(self)

    def rowsInserted(
        self, parent: QModelIndex | QPersistentModelIndex, first: int, last: int
    ) -> None:
        font, height = self.font(), self.delegate.row_height
        self._offsets.insert(first, [height(row, font) for row in range(first, last + 1)])
        QAbstractItemView.rowsInserted(self, parent, first, last)
        self.updateGeometries()
        self.viewport().update()

    def updateGeometries(self) -> None:
        self._geometry_due = False
        bar, height = self.verticalScrollBar(), self.viewport().height()
        bar.setPageStep(height)
        bar.setRange(0, max(0, self._offsets.total() - height))
        self.horizontalScrollBar().setRange(0, 0)
        QAbstractItemView.updateGeometries(self)

    def _measure_view(self) -> tuple[bool, int]:
        """Lay out the rows in view that were only estimated: (whether any row moved, how far
        the view should scroll so that a row reaching above the top keeps its bottom edge)."""
        offsets, rows = self._offsets, len(self._offsets)
        top = self.verticalScrollBar().value()
        end = top + self.viewport().height()
        row = offsets.row_at(top)
        if row < 0:
            row = 0 if top < 0 or not rows else rows - 1
        font, moved, shift = self.font(), False, 0
        while row < rows and offsets.top(row) < end:
            change = offsets.set(row, self.delegate.row_height(row, font, exact=True))
            if change:
                moved = True
                if offsets.top(row) < top:
                    shift += change
            row += 1
        return moved, shift

    def _placed_again(self) -> bool:
        """`_measure_view`, then the scroll range and position it calls for; whether any
        row moved."""
        moved, shift = self._measure_view()
        if moved:
            self.updateGeometries()
            if shift:
                bar = self.verticalScrollBar()
                bar.setValue(bar.value() + shift)
        return moved

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        if self._placed_again():
            self.viewport().update()
        else:
            self.scrollDirtyRegion(dx, dy)
            self.viewport().scroll(dx, dy)
        self.updateEditorGeometries()

    def paintEvent(self, event: QPaintEvent) -> None:
        if self._measure_view()[0] and not self._geometry_due:
            self._geometry_due = True  # the scroll range, after this paint
            QTimer.singleShot(0, self.updateGeometries)
        option = QStyleOptionViewItem()
        self.initViewItemOption(option)
        plain = option.state
        selection, current = self.selectionModel(), self.currentIndex()
        focus = self.hasFocus() or self.viewport().hasFocus()
        area: QRect = event.rect()
        offsets, value = self._offsets, self.verticalScrollBar().value()
        row = max(0, offsets.row_at(area.top() + value)) if len(offsets) else 0
        painter = QPainter(self.viewport())
        while row < len(offsets) and offsets.top(row) <= area.bottom() + value:
            index = self._model.index(row, 0)
            option.rect = self.visualRect(index)
            state = plain
            if selection.isSelected(index):
                state |= QStyle.StateFlag.State_Selected
            if focus and index == current:
                state |= QStyle.StateFlag.State_HasFocus
            option.state = state
            self.delegate.paint(painter, option, index)
            row += 1
        painter.end()

    def visualRect(self, index: QModelIndex | QPersistentModelIndex) -> QRect:
        row = index.row() if index.isValid() else -1
        if not 0 <= row < len(self._offsets):
            return QRect()
        top = self._offsets.top(row) - self.verticalScrollBar().value()
        return QRect(0, top, self.viewport().width(), self._offsets.height(row))

    def indexAt(self, point: QPoint) -> QModelIndex:
        row = self._offsets.row_at(point.y() + self.verticalScrollBar().value())
        return self._model.index(row, 0) if row >= 0 else QModelIndex()

    def scrollTo(
        self,
        index: QModelIndex | QPersistentModelIndex,
        hint: QAbstractItemView.ScrollHint = QAbstractItemView.ScrollHint.EnsureVisible,
    ) -> None:
        rect = self.visualRect(index)
        if not rect.isValid():
            return
        area, bar = self.viewport().rect(), self.verticalScrollBar()
        Hint = QAbstractItemView.ScrollHint
        if hint == Hint.PositionAtTop or (
            hint == Hint.EnsureVisible and (rect.top() < 0 or rect.height() > area.height())
        ):
            by = rect.top()
        elif hint == Hint.PositionAtBottom or (
            hint == Hint.EnsureVisible and rect.bottom() > area.bottom()
        ):
            by = rect.bottom() - area.bottom()
        elif hint == Hint.PositionAtCenter:
            by = rect.center().y() - area.center().y()
        else:
            return
        bar.setValue(bar.value() + by)

    def moveCursor(
        self, action: QAbstractItemView.CursorAction, modifiers: Qt.KeyboardModifier
    ) -> QModelIndex:
        del modifiers
        rows = len(self._offsets)
        if not rows:
            return QModelIndex()
        current = self.currentIndex()
        row = current.row() if current.isValid() else -1
        Action, page = QAbstractItemView.CursorAction, self.viewport().height()
        if action in (Action.MoveUp, Action.MovePrevious):
            row = max(0, row - 1)
        elif action in (Action.MoveDown, Action.MoveNext):
            row = min(rows - 1, row + 1)
        elif action == Action.MoveHome:
            row = 0
        elif action == Action.MoveEnd:
            row = rows - 1
        elif action == Action.MovePageUp:
            row = max(0, self._offsets.row_at(max(0, self._offsets.top(max(row, 0)) - page)))
        elif action == Action.MovePageDown:
            below = self._offsets.row_at(self._offsets.top(max(row, 0)) + page)
            row = rows - 1 if below < 0 else below
        return self._model.index(max(row, 0), 0)

    def horizontalOffset(self) -> int:
        return 0

    def verticalOffset(self) -> int:
        return self.verticalScrollBar().value()

    def isIndexHidden(self, index: QModelIndex | QPersistentModelIndex) -> bool:
        del index
        return False

    def setSelection(self, rect: QRect, command: QItemSelectionModel.SelectionFlag) -> None:
        rows = len(self._offsets)
        if not rows:
            return
        box, value = rect.normalized(), self.verticalScrollBar().value()
        first = self._offsets.row_at(max(0, box.top() + value))
        last = self._offsets.row_at(box.bottom() + value)
        first = rows - 1 if first < 0 else first
        last = rows - 1 if last < 0 else last
        chosen = QItemSelection(self._model.index(first, 0), self._model.index(last, 0))
        self.selectionModel().select(chosen, command)

    def visualRegionForSelection(self, selection: QItemSelection) -> QRegion:
        region, width = QRegion(), self.viewport().width()
        value = self.verticalScrollBar().value()
        rows = len(self._offsets)
        for span in (selection.at(n) for n in range(selection.size())):
            if span.top() >= rows:
                continue  # rows not placed yet: painted once they are
            top = self._offsets.top(span.top()) - value
            bottom = self._offsets.top(min(span.bottom() + 1, rows)) - value
            region += QRect(0, top, width, bottom - top).intersected(self.viewport().rect())
        return region

    # --- rows coming and changing -------------------------------------------------------

    def _was_reset(self) -> None:
        self._selecting = None
        self.delegate.forget()
        self.delegate.set_width(self.viewport().width())
        for row in [row for row, item in enumerate(self._model.rows) if item.buttons]:
            self._add_buttons(row)
        self.following = True  # the layout, in the next pass, brings it to the bottom
        self.jump.hide()

    def _inserting(self, _parent: QModelIndex, first: int, _last: int) -> None:
        """Older rows coming in above (an open, decision 0178): scrolled up, the first row
        in view is the anchor, kept where it is on the screen."""
        self._anchor = None
        if first == 0 and self._model.rowCount() and not self.following:
            index = self.indexAt(QPoint(1, 1))
            if index.isValid():
                self._anchor = (QPersistentModelIndex(index), self.visualRect(index).top())

    def _inserted(self, _parent: QModelIndex, first: int, last: int) -> None:
        for row in range(first, last + 1):
            if self._model.item(row).buttons:
                self._add_buttons(row)
        anchor, self._anchor = self._anchor, None
        if anchor is not None and anchor[0].isValid():
            self.executeDelayedItemsLayout()  # the rows placed now, to scroll by their height
            bar = self.verticalScrollBar()
            moved = self.visualRect(self._model.index(anchor[0].row(), 0)).top() - anchor[1]
            bar.setValue(bar.value() + moved)
        if last == self._model.rowCount() - 1:
            self._news()  # a row at the bottom: follow it, or offer to jump to it

    def dataChanged(
        self,
        top_left: QModelIndex | QPersistentModelIndex,
        bottom_right: QModelIndex | QPersistentModelIndex,
        roles: Sequence[int] = (),
    ) -> None:
        """Rows whose words changed (a streamed delta, a resolved card).

        `QListView.dataChanged` lays every row out again, whatever changed, which a long
        transcript pays for each delta. A changed row is measured here instead, and only a
        change of its height moves the rows below it; otherwise the row is just repainted
        (`QAbstractItemView.dataChanged`)."""
        moved = False
        for row in range(top_left.row(), bottom_right.row() + 1):
            index = self._model.index(row, 0)
            has = self.indexWidget(index) is not None
            wanted = self._model.item(row).buttons
            if has and not wanted:
                self.setIndexWidget(index, None)  # type: ignore[arg-type]
            elif wanted and not has:
                self._add_buttons(row)
            self.delegate.refresh(self._model.item(row), self.font())
            if row < len(self._offsets):
                height = self.delegate.row_height(row, self.font(), exact=True)
                moved |= bool(self._offsets.set(row, height))
        QAbstractItemView.dataChanged(self, top_left, bottom_right, list(roles))
        if moved:  # the rows below moved
            self.updateGeometries()
            self.viewport().update()
        if bottom_right.row() == self._model.rowCount() - 1:
            self._news()

    def recolour(self) -> None:
        """The code lexers some rows waited for are loaded: those rows are rendered again,
        the ones in view measured and painted now (colours can change a block's wrapping),
        the others when they are next shown, as a row only estimated is."""
        if self._model.recolour():
            self._placed_again()
            self.viewport().update()

    def _add_buttons(self, row: int) -> None:
        bar = CardButtons(self._model.item(row))
        bar.chosen.connect(self.card_action)
        self.setIndexWidget(self._model.index(row, 0), bar)

    def set_buttons_enabled(self, enabled: bool) -> None:
        for bar in self.viewport().findChildren(CardButtons):
            bar.setEnabled(enabled)

    # --- copying ------------------------------------------------------------------------

    def selected_text(self) -> str:
        """The selected messages' plain text, in order, joined by blank lines."""
        rows = sorted(index.row() for index in self.selectionModel().selectedIndexes())
        return "\n\n".join(self._plain(self._model.item(row)) for row in rows)

    def _plain(self, item: TranscriptItem) -> str:
        if item.kind in MESSAGES:
            return item.render(self.delegate.dark).plain
        return item.plain

    def copy_selection(self) -> None:
        text = self.selected_text()
        if text:
            QGuiApplication.clipboard().setText(text)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy_selection()
            event.accept()
            return
        super().keyPressEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        index = self.indexAt(event.pos())
        if not index.isValid():
            return
        selection = self.selectionModel()
        if not selection.isSelected(index):
            selection.select(index, QItemSelectionModel.SelectionFlag.ClearAndSelect)
        menu = QMenu(self)
        menu.addAction(
            QCoreApplication.translate("ConversationPane", "Copy message"), self.copy_selection
        )
        menu.addAction(
            QCoreApplication.translate("ConversationPane", "Select words"),
            lambda: self.select_words(index),
        )
        menu.exec(event.globalPos())
        menu.deleteLater()

    # --- links and copy anchors ---------------------------------------------------------

    def anchor_at(self, pos: QPoint) -> str:
        """The href under `pos` (viewport coordinates), or ""."""
        index = self.indexAt(pos)
        if not index.isValid():
            return ""
        return self.delegate.anchor_at(index, self.visualRect(index), pos, self.font())

    def activate_anchor(self, href: str) -> bool:
        """A click on `href`: copy a code block, or open a link the renderer allows."""
        if href.startswith(f"{COPY_SCHEME}:"):
            index = self.currentIndex()
            item = self._model.item(index.row()) if index.isValid() else None
            blocks = item.render(self.delegate.dark).code_blocks if item is not None else ()
            number = href.partition(":")[2]
            if number.isdigit() and int(number) < len(blocks):
                QGuiApplication.clipboard().setText(blocks[int(number)])
                return True
            return False
        url = link_target(href)
        if url is None:
            return False
        return QDesktopServices.openUrl(url)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        href = self.anchor_at(event.position().toPoint())
        shape = Qt.CursorShape.PointingHandCursor if href else Qt.CursorShape.ArrowCursor
        self.viewport().setCursor(QCursor(shape))
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        pos = event.position().toPoint()
        href = self.anchor_at(pos) if event.button() == Qt.MouseButton.LeftButton else ""
        super().mouseReleaseEvent(event)
        if href:
            self.setCurrentIndex(self.indexAt(pos))
            self.activate_anchor(href)

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            href = self.anchor_at(event.pos())
            if href:
                url = link_target(href)
                shown = url.toString() if url is not None else href
                if href.startswith(f"{COPY_SCHEME}:"):
                    shown = QCoreApplication.translate("ConversationPane", "Copy this code")
                QToolTip.showText(event.globalPos(), plain_tooltip(shown), self.viewport())
                return True
        return super().viewportEvent(event)

    # --- selecting words ----------------------------------------------------------------

    def select_words(self, index: QModelIndex) -> None:
        """Open a selectable copy of the message at `index` (closing any other)."""
        self.close_selection()
        if not index.isValid() or self._model.item(index.row()).kind not in MESSAGES:
            return
        self._selecting = QPersistentModelIndex(index)
        self.openPersistentEditor(index)
        editor = self.indexWidget(index)
        if isinstance(editor, QTextEdit):
            editor.installEventFilter(self)
            editor.setFocus()

    def close_selection(self) -> None:
        selecting, self._selecting = self._selecting, None
        if selecting is not None and selecting.isValid():
            self.closePersistentEditor(selecting)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Escape, or focus leaving the copy, closes it: after the event, never inside it
        (closing deletes the editor that is handling the event)."""
        if isinstance(watched, QTextEdit):
            if (
                event.type() == QEvent.Type.KeyPress
                and isinstance(event, QKeyEvent)
                and event.key() == Qt.Key.Key_Escape
            ):
                QTimer.singleShot(0, self._close_and_return)
                return True
            if (
                isinstance(event, QFocusEvent)
                and event.type() == QEvent.Type.FocusOut
                and event.reason() != Qt.FocusReason.PopupFocusReason  # its own menu
            ):
                QTimer.singleShot(0, self.close_selection)
        return super().eventFilter(watched, event)

    def _close_and_return(self) -> None:
        self.close_selection()
        self.setFocus()
