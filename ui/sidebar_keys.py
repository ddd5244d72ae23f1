"""The sidebar by keyboard and by its rows' "⋯" button.

From the search box, Down or Enter moves to the results and Escape clears the search. When
the list gets the focus it gets a current, selected row too, so Delete works at once
without an arrow key first (a list may open with a date header, which is not selectable).
A left click on a row's "⋯" opens that row's menu. One event filter on the search box, the
list and its viewport does all of it; the menu itself and the clearing belong to the window.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QItemSelectionModel, QModelIndex, QObject, QPoint, Qt
from PySide6.QtGui import QKeyEvent, QMouseEvent
from PySide6.QtWidgets import QLineEdit, QListView

from ui.session_delegate import more_rect
from ui.session_model import SessionListModel

#: How far down `first_selectable` looks for a conversation (past the date headers).
HEADER_LOOKAHEAD = 64


class SidebarKeys(QObject):
    """Installs itself on `search`, `view` and its viewport; `clear_filter()` empties the
    search, `open_menu(index, pos)` shows a row's menu at a viewport position."""

    def __init__(
        self,
        search: QLineEdit,
        view: QListView,
        model: SessionListModel,
        *,
        clear_filter: Callable[[], None],
        open_menu: Callable[[QModelIndex, QPoint], None],
    ) -> None:
        super().__init__(view)
        self._filter = search
        self._view = view
        # Kept, not asked for: while the window is torn down this filter still sees the
        # search box's events after the list's C++ object is gone, and asking the list
        # for its viewport then raises. Comparing wrappers never touches C++.
        self._viewport = view.viewport()
        self._model = model
        self._clear_filter = clear_filter
        self._open_menu = open_menu
        search.installEventFilter(self)
        view.installEventFilter(self)
        self._viewport.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Search box: Down/Enter go to the results, Escape clears. List: focus gives it a
        current, selected row, so Delete works without an arrow key first."""
        if watched is self._filter and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            key = event.key()
            if key in (Qt.Key.Key_Down, Qt.Key.Key_Return, Qt.Key.Key_Enter):
                if self._model.rowCount() > 0:
                    self._view.setFocus(Qt.FocusReason.TabFocusReason)
                    return True
            elif key == Qt.Key.Key_Escape and self._filter.text():
                self._clear_filter()
                return True
        elif watched is self._view and event.type() == QEvent.Type.FocusIn:
            self.ensure_current()
        elif (
            watched is self._viewport
            and event.type() == QEvent.Type.MouseButtonRelease
            and isinstance(event, QMouseEvent)
            and event.button() == Qt.MouseButton.LeftButton
        ):
            pos = event.position().toPoint()
            index = self._view.indexAt(pos)
            if (
                index.isValid()
                and index.flags() & Qt.ItemFlag.ItemIsSelectable
                and more_rect(self._view.visualRect(index)).contains(pos)
            ):
                self._open_menu(index, pos)
                return True
        return super().eventFilter(watched, event)

    def ensure_current(self) -> None:
        """Give the list a current, selected row: the current one, else the first selected,
        else the first conversation."""
        selection = self._view.selectionModel()
        if self._model.rowCount() == 0:
            return
        current = selection.currentIndex()
        if current.isValid():
            if not selection.isSelected(current):
                selection.select(current, QItemSelectionModel.SelectionFlag.Select)
            return
        selected = sorted(selection.selectedRows(), key=lambda index: index.row())
        target = selected[0] if selected else self.first_selectable()
        if not target.isValid():
            return
        flags = QItemSelectionModel.SelectionFlag
        selection.setCurrentIndex(target, flags.Select if selected else flags.ClearAndSelect)
        self._view.scrollTo(target)

    def first_selectable(self) -> QModelIndex:
        """The first conversation (the list may open with a date header)."""
        for row in range(min(self._model.rowCount(), HEADER_LOOKAHEAD)):
            index = self._model.index(row, 0)
            if index.flags() & Qt.ItemFlag.ItemIsSelectable:
                return index
        return QModelIndex()
