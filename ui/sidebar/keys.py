"""The sidebar by keyboard and by its rows' "⋯" button.

From the search box, Down moves to the results and selects the row after the current one
(or the first visible row when none is selected), Enter moves there keeping the current row,
and Escape clears the search. A search still waiting for its debounce is read at once, and
the selection is made when its results are shown (`SearchResults.settle_now`): selecting in
the unfiltered list first would let the results remove that row again, and Down would often
select nothing.

When the list gets the focus from the keyboard it gets a current, selected row too, so
Delete works at once without an arrow key first: the first visible conversation, not the
first of the list (a date header is not selectable). A click's focus-in does not pick one,
or the click would open that row and scroll to it instead of the clicked one (as Qt's own
item views do). A left click on a row's "⋯" opens that row's menu. One event filter on the
search box, the list and its viewport does all of it; the menu itself and the clearing
belong to the window.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import QEvent, QItemSelectionModel, QModelIndex, QObject, QPoint, Qt
from PySide6.QtGui import QFocusEvent, QKeyEvent, QMouseEvent
from PySide6.QtWidgets import QLineEdit, QListView

from ui.sidebar.delegate import more_rect
from ui.sidebar.model import SessionListModel

#: How far down `next_selectable` looks for a conversation (past the date headers).
HEADER_LOOKAHEAD = 64


class SearchResults(Protocol):
    """The search behind the search box (`ui.sidebar.search.SidebarSearch`)."""

    def settle_now(self, then: Callable[[], None]) -> bool:
        """Read for the box's text at once, not after the pause; True when the list
        already shows its results, else `then` is called when it does."""
        ...


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
        #: Set by the controller; without it the list is taken to show the box's results.
        self.results: SearchResults | None = None
        # Down or Enter waiting for the results: (which call, Down?); None when not.
        self._awaiting: tuple[int, bool] | None = None
        self._calls = 0
        self._entering = False
        search.textChanged.connect(self._forget_key)
        search.installEventFilter(self)
        view.installEventFilter(self)
        self._viewport.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Search box: Down/Enter go to the results, Escape clears. List: focus from the
        keyboard gives it a current, selected row, so Delete works without an arrow key."""
        kind = event.type()
        if watched is self._filter and kind == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            key = event.key()
            if key in (Qt.Key.Key_Down, Qt.Key.Key_Return, Qt.Key.Key_Enter):
                return self.enter_results(down=key == Qt.Key.Key_Down)
            if key == Qt.Key.Key_Escape and self._filter.text():
                self._clear_filter()
                return True
        elif watched is self._view and kind == QEvent.Type.FocusIn:
            assert isinstance(event, QFocusEvent)
            mouse = event.reason() == Qt.FocusReason.MouseFocusReason
            if not (mouse or self._entering):
                self.ensure_current()
        elif watched is self._filter and kind == QEvent.Type.FocusOut:
            self._awaiting = None  # the user moved on: the results select nothing
        elif (
            watched is self._viewport
            and kind == QEvent.Type.MouseButtonRelease
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

    def enter_results(self, *, down: bool) -> bool:
        """Down or Enter in the search box: select in the results and focus them, now or,
        when the search is still to be read, once its results are shown (the focus stays
        in the box meanwhile; typing on forgets the key)."""
        self._calls += 1
        call = self._calls
        shown = (
            self.results.settle_now(lambda: self._results_shown(call))
            if self.results is not None
            else True
        )
        if not shown:
            self._awaiting = (call, down)
            return True
        self._awaiting = None
        return self._enter(down=down)

    def _forget_key(self, _text: str) -> None:
        self._awaiting = None

    def _results_shown(self, call: int) -> None:
        awaiting, self._awaiting = self._awaiting, None
        if awaiting is not None and awaiting[0] == call and self._filter.hasFocus():
            self._enter(down=awaiting[1])

    def _enter(self, *, down: bool) -> bool:
        if self._model.rowCount() == 0:
            return False
        # Selected before the focus moves: a focus-in with no current row makes Qt's view
        # pick the first row as current, which would open it on the way.
        self.select_entry(down=down)
        self._entering = True
        try:
            self._view.setFocus(Qt.FocusReason.TabFocusReason)
        finally:
            self._entering = False
        return True

    def select_entry(self, *, down: bool) -> None:
        """Down: the row after the current, selected one, else the first visible row.
        Enter: the current row, else the first visible one."""
        selection = self._view.selectionModel()
        current = selection.currentIndex()
        target = QModelIndex()
        if current.isValid() and selection.isSelected(current):
            target = self.next_selectable(current.row() + 1) if down else current
            if not target.isValid():
                target = current
        if not target.isValid():
            target = self.first_visible()
        if not target.isValid():
            return
        if target != current or selection.selectedRows() != [target]:
            selection.setCurrentIndex(target, QItemSelectionModel.SelectionFlag.ClearAndSelect)
        self._view.scrollTo(target)

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
        target = selected[0] if selected else self.first_visible()
        if not target.isValid():
            return
        flags = QItemSelectionModel.SelectionFlag
        selection.setCurrentIndex(target, flags.Select if selected else flags.ClearAndSelect)
        self._view.scrollTo(target)

    def first_visible(self) -> QModelIndex:
        """The first conversation at or below the top of the viewport (scrolled or not;
        past a date header)."""
        top = self._view.indexAt(QPoint(1, 1))
        if not top.isValid():
            return self.next_selectable(0)
        if self._view.visualRect(top).top() < 0:  # partly scrolled out: the next one
            below = self.next_selectable(top.row() + 1)
            if below.isValid():
                return below
        return self.next_selectable(top.row())

    def step(self, forward: bool) -> None:
        """The next (or previous) conversation becomes the current, selected, open one,
        from anywhere in the window (past date headers; the last stays the last)."""
        selection = self._view.selectionModel()
        current = selection.currentIndex()
        if not current.isValid():
            target = self.first_visible()
        elif forward:
            target = self.next_selectable(current.row() + 1)
        else:
            target = self.previous_selectable(current.row() - 1)
        if not target.isValid():
            return
        selection.setCurrentIndex(target, QItemSelectionModel.SelectionFlag.ClearAndSelect)
        self._view.scrollTo(target)

    def previous_selectable(self, start: int) -> QModelIndex:
        """The last conversation at or before row `start`, or an invalid index."""
        for row in range(start, max(-1, start - HEADER_LOOKAHEAD), -1):
            index = self._model.index(row, 0)
            if index.flags() & Qt.ItemFlag.ItemIsSelectable:
                return index
        return QModelIndex()

    def next_selectable(self, start: int) -> QModelIndex:
        """The first conversation at or after row `start`, or an invalid index."""
        for row in range(start, min(self._model.rowCount(), start + HEADER_LOOKAHEAD)):
            index = self._model.index(row, 0)
            if index.flags() & Qt.ItemFlag.ItemIsSelectable:
                return index
        return QModelIndex()
