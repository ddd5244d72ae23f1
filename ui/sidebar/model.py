"""The sidebar's list model: the mirror's rows, updated by diffs, never by a reset.

`update(rows)` plans the operations from the rows shown to `rows` (`ui.sidebar.diff`) and applies
them, both in short slices between event-loop iterations, so that a reconcile of a large index
never freezes the window. The planning runs on the UI thread on purpose: a worker thread would
hold the GIL for up to the switch interval at a time, and on a busy machine the loop then stalls,
while slices never do. Selections and the current index live on persistent indexes, which Qt
moves along with the rows, so they survive every update. Updates are serialised; a newer one
supersedes an older one that has not finished (the next diff starts from whatever has been
applied so far).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from PySide6.QtCore import (
    QT_TRANSLATE_NOOP,
    QByteArray,
    QCoreApplication,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QStringListModel,
    Qt,
    Signal,
)

from ui.sidebar.diff import Change, Insert, Move, Op, Remove, Reorder, compute_diff, diff_steps
from ui.sidebar.relative_time import full_time, relative_time
from ui.sidebar.row import HEADER_PREFIX, SidebarRow, sort_key
from ui.text.plain import isolate, neutral, plain_tooltip

log = logging.getLogger(__name__)

UNTITLED = str(QT_TRANSLATE_NOOP("SessionList", "Untitled conversation"))  # shown translated
type AnyIndex = QModelIndex | QPersistentModelIndex


#: The server keeps at most 64 code points of the first message, with no ellipsis
#: (CONTRACT, title rule); a cluster boundary or a trailing space can shorten the cut by one
#: or two, so a title this long is taken to be cut.
TITLE_LIMIT = 64
CUT_AT = TITLE_LIMIT - 2
#: How far back a cut title may lose its partial last word.
WORD_BACKTRACK = 16


def shown_title(title: str) -> str:
    """A title as the window shows it: a title the server cut at its limit loses the partial
    last word and ends with "…", so nobody reads "Rewrite the README introduction to be
    frien" as the whole thing. Shorter titles are shown as they are."""
    if len(title) < CUT_AT:
        return title
    space = title.rfind(" ")
    if space >= len(title) - WORD_BACKTRACK and space > 0:
        title = title[:space]
    return title.rstrip(" ,.;:-–—") + "…"


def untitled() -> str:
    """The wording for a conversation without a title, in the user's language."""
    return QCoreApplication.translate("SessionList", UNTITLED)


def display_title(row: SidebarRow) -> str:
    """The row's title as shown, or the wording for a conversation without one; without
    bidi controls of its own, which could reorder what is drawn after it (`ui.text.plain`)."""
    title = neutral(row.title) if row.title else ""
    return shown_title(title) if title else untitled()


class SessionListModel(QStringListModel):
    """One row per session, in the mirror's activity order. Qt's string list behind it holds
    one empty string per row, so that Qt answers the row count without Python (`_through`)."""

    IdRole = Qt.ItemDataRole.UserRole + 1
    RowRole = Qt.ItemDataRole.UserRole + 2
    UpdatedAtRole = Qt.ItemDataRole.UserRole + 3
    ActiveRunRole = Qt.ItemDataRole.UserRole + 4
    PendingDeleteRole = Qt.ItemDataRole.UserRole + 5
    HeaderRole = Qt.ItemDataRole.UserRole + 6

    # Emitted after an update has been applied completely (not when superseded).
    updated = Signal()
    # Emitted before the first operation of an update that changes something.
    about_to_apply = Signal()

    def __init__(self, parent: QObject | None = None, *, budget_ms: float = 5.0) -> None:
        super().__init__(parent)
        self._rows: list[SidebarRow] = []
        self._pending: set[str] = set()
        self._budget = budget_ms / 1000.0
        self._generation = 0
        self._lock: asyncio.Lock | None = None
        self._applying = False
        self._positions: dict[str, int] | None = None  # id -> row, built on demand
        # id -> row value, kept up to date by every operation (`_apply_op`): rebuilding it
        # after an update would make the first delta of a long list a long UI-thread step.
        self._values: dict[str, SidebarRow] = {}
        # The Python rows follow Qt's list on the signal that ends each change, before any
        # view hears of it (these connections are the model's first): see `_through`.
        self._follow: Callable[[], None] | None = None
        self.rowsInserted.connect(self._followed)
        self.rowsRemoved.connect(self._followed)
        self.rowsMoved.connect(self._followed)

    # --- Qt's interface -------------------------------------------------------------

    def _followed(self, *_: object) -> None:
        follow, self._follow = self._follow, None
        if follow is not None:
            follow()

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.column() != 0 or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        if row.id.startswith(HEADER_PREFIX):
            return self._header_data(row, role)
        if role == Qt.ItemDataRole.DisplayRole:
            return display_title(row)
        if role == Qt.ItemDataRole.AccessibleTextRole:
            when = relative_time(row.updated_at)
            parts = [
                display_title(row),
                QCoreApplication.translate("SessionList", "last activity {0}").format(when),
            ]
            if row.active_run_id:
                parts.append(QCoreApplication.translate("SessionList", "running"))
            if row.id in self._pending:
                parts.append(QCoreApplication.translate("SessionList", "deleting"))
            return QCoreApplication.translate("SessionList", ", ").join(parts)
        if role == Qt.ItemDataRole.ToolTipRole:
            when = full_time(row.updated_at)
            words = QCoreApplication.translate("SessionList", "{0}\nLast activity: {1}")
            return plain_tooltip(words.format(isolate(display_title(row)), when))
        if role == self.IdRole:
            return row.id
        if role == self.RowRole:
            return row
        if role == self.UpdatedAtRole:
            return row.updated_at
        if role == self.ActiveRunRole:
            return row.active_run_id
        if role == self.PendingDeleteRole:
            return row.id in self._pending
        return None

    def _header_data(self, row: SidebarRow, role: int) -> Any:
        """A date section's header: a name for people and assistive tools, nothing else."""
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return row.title
        if role == self.RowRole:
            return row
        if role == self.HeaderRole:
            return True
        return None

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        if 0 <= index.row() < len(self._rows) and self._rows[index.row()].id.startswith(
            HEADER_PREFIX
        ):
            # Not enabled, not selectable: selection, Delete and the arrow keys skip it.
            return Qt.ItemFlag.ItemNeverHasChildren
        return (
            Qt.ItemFlag.ItemIsEnabled
            | Qt.ItemFlag.ItemIsSelectable
            | Qt.ItemFlag.ItemNeverHasChildren
        )

    def setData(self, index: AnyIndex, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        """Read-only: the rows are the mirror's, and Qt's list only holds their count."""
        return False

    def itemData(self, index: AnyIndex) -> dict[int, Any]:
        """The row's roles from `data` (Qt's list holds empty strings, not the rows)."""
        roles = (
            Qt.ItemDataRole.DisplayRole,
            Qt.ItemDataRole.ToolTipRole,
            Qt.ItemDataRole.AccessibleTextRole,
        )
        return {int(r): v for r in roles if (v := self.data(index, r)) is not None}

    def roleNames(self) -> dict[int, QByteArray]:
        names = dict(super().roleNames())
        names.update(
            {
                self.IdRole: QByteArray(b"sessionId"),
                self.UpdatedAtRole: QByteArray(b"updatedAt"),
                self.ActiveRunRole: QByteArray(b"activeRunId"),
                self.PendingDeleteRole: QByteArray(b"pendingDelete"),
            }
        )
        return names

    # --- reading --------------------------------------------------------------------

    def rows(self) -> Sequence[SidebarRow]:
        """The rows as shown (read-only view)."""
        return tuple(self._rows)

    def row_at(self, index: AnyIndex) -> SidebarRow | None:
        """The row behind a valid index."""
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        return self._rows[index.row()]

    def index_of(self, session_id: str) -> QModelIndex:
        """The index of a session, or an invalid index.

        Rows in the mirror's order are found by bisecting their sort key (a few dozen
        comparisons); otherwise positions are indexed once per state of the rows (any
        diff operation drops the index): after an update of a long list the window asks
        for two or three ids, and a linear scan per call would be a long UI-thread step.
        """
        value = self.value(session_id)
        if value is None:
            return QModelIndex()
        at = self.bisect(value)
        if at < len(self._rows) and self._rows[at] is value:
            return self.index(at, 0)
        positions = self._positions
        if positions is None:
            positions = self._positions = {row.id: i for i, row in enumerate(self._rows)}
        i = positions.get(session_id)
        return QModelIndex() if i is None else self.index(i, 0)

    def find(self, session_id: str) -> SidebarRow | None:
        """The row of a session, when shown."""
        return self.value(session_id)

    def value(self, row_id: str) -> SidebarRow | None:
        """The shown row (or section header) with this id."""
        return self._values.get(row_id)

    def bisect(self, row: SidebarRow) -> int:
        """Where `row` belongs: the first row that does not sort before it in the mirror's
        order (`updated_at` DESC, `id` DESC; a section header sorts right before its
        section's rows, see `ui.sidebar.grouping.SectionHeader.before`)."""
        rows = self._rows
        key = sort_key(row)
        lo, hi = 0, len(rows)
        while lo < hi:
            mid = (lo + hi) // 2
            if sort_key(rows[mid]) > key:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def locate(self, row: SidebarRow) -> int:
        """The position of a shown row value (bisected, checked; a scan if out of order)."""
        at = self.bisect(row)
        if at < len(self._rows) and self._rows[at].id == row.id:
            return at
        index = self.index_of(row.id)
        if not index.isValid():
            raise LookupError(row.id)
        return index.row()

    def row_value_at(self, position: int) -> SidebarRow | None:
        """The row at a position, or None past the end."""
        return self._rows[position] if 0 <= position < len(self._rows) else None

    @property
    def applying(self) -> bool:
        """True while an operation is being applied: a current-index change then is the
        model's doing (the current row was removed), not the user's."""
        return self._applying

    def is_pending_delete(self, session_id: str) -> bool:
        return session_id in self._pending

    # --- writing --------------------------------------------------------------------

    def set_pending_delete(self, session_ids: Iterable[str], pending: bool) -> None:
        """Mark rows as being deleted (a request is out) or not, and repaint them (one pass
        over the rows, however many ids)."""
        wanted = set(session_ids)
        if pending:
            self._pending |= wanted
        else:
            self._pending -= wanted
        for i, row in enumerate(self._rows):
            if row.id in wanted:
                index = self.index(i, 0)
                self.dataChanged.emit(index, index, [self.PendingDeleteRole])

    def sessions(self) -> list[SidebarRow]:
        """The conversation rows as shown, without the section headers."""
        return [row for row in self._rows if not row.id.startswith(HEADER_PREFIX)]

    def find_many(self, session_ids: Iterable[str]) -> dict[str, SidebarRow]:
        """The shown rows of these sessions, by id (one pass over the rows)."""
        wanted = set(session_ids)
        return {row.id: row for row in self._rows if row.id in wanted}

    async def update(self, rows: Sequence[SidebarRow]) -> bool:
        """Bring the model to `rows`; False when a newer update superseded this one."""
        self._generation += 1
        generation = self._generation
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if generation != self._generation:
                return False
            steps = diff_steps(tuple(self._rows), tuple(rows))
            deadline = time.perf_counter() + self._budget
            while True:
                try:
                    next(steps)
                except StopIteration as finished:
                    ops: list[Op[SidebarRow]] = finished.value
                    break
                if time.perf_counter() >= deadline:
                    await asyncio.sleep(0)
                    if generation != self._generation:
                        return False
                    deadline = time.perf_counter() + self._budget
            if ops:
                self.about_to_apply.emit()
            done = await self._apply_in_slices(ops, generation)
            if done:
                if self._pending:  # usually empty: spare a pass over every row
                    self._pending.intersection_update(row.id for row in self._rows)
                self.updated.emit()
            return done

    # --- one-row edits, for deltas (`ui.sidebar.delta`) --------------------------------

    def insert_row(self, position: int, row: SidebarRow) -> None:
        self._apply(Insert(position, (row,)))

    def remove_row(self, position: int) -> None:
        self._pending.discard(self._rows[position].id)
        self._apply(Remove(position, 1))

    def move_row(self, source: int, dest: int, row: SidebarRow) -> None:
        """Move the row at `source` before `dest` (Qt's rule), then give it its new value."""
        self._apply(Move(source, dest))
        self._apply(Change(dest - 1 if dest > source else dest, (row,)))

    def change_row(self, position: int, row: SidebarRow) -> None:
        self._apply(Change(position, (row,)))

    def begin_delta(self) -> None:
        """Before a delta's first edit: supersede any unfinished sliced update and let the
        window remember its scroll anchor."""
        self._generation += 1
        self.about_to_apply.emit()

    def end_delta(self) -> None:
        self.updated.emit()

    def replace_now(self, rows: Sequence[SidebarRow]) -> None:
        """Apply a diff synchronously (small lists, tests, the first paint)."""
        self._generation += 1
        ops = compute_diff(tuple(self._rows), tuple(rows))
        if ops:
            self.about_to_apply.emit()
        for op in ops:
            self._apply(op)
        self.updated.emit()

    async def _apply_in_slices(self, ops: Sequence[Op[SidebarRow]], generation: int) -> bool:
        deadline = time.perf_counter() + self._budget
        for op in ops:
            if generation != self._generation:
                return False
            self._apply(op)
            if time.perf_counter() >= deadline:
                await asyncio.sleep(0)
                deadline = time.perf_counter() + self._budget
        return True

    def _apply(self, op: Op[SidebarRow]) -> None:
        self._positions = None
        self._applying = True
        try:
            self._apply_op(op)
        finally:
            self._applying = False
            self._positions = None  # a slot may have indexed the rows halfway through the op

    def _apply_op(self, op: Op[SidebarRow]) -> None:
        root = QModelIndex()
        match op:
            case Remove(start, count):

                def remove() -> None:
                    for row in self._rows[start : start + count]:
                        self._values.pop(row.id, None)
                    del self._rows[start : start + count]

                self._through(remove, lambda: self.removeRows(start, count, root), op)
            case Move(source, dest):

                def move() -> None:
                    row = self._rows.pop(source)
                    self._rows.insert(dest - 1 if dest > source else dest, row)

                self._through(move, lambda: self.moveRows(root, source, 1, root, dest), op)
            case Reorder(rows, position):
                self._reorder(rows, position)
            case Insert(start, rows):

                def insert() -> None:
                    self._rows[start:start] = rows
                    self._values.update((row.id, row) for row in rows)

                self._through(insert, lambda: self.insertRows(start, len(rows), root), op)
            case Change(start, rows):
                for row in self._rows[start : start + len(rows)]:
                    self._values.pop(row.id, None)
                self._rows[start : start + len(rows)] = rows
                self._values.update((row.id, row) for row in rows)
                self.dataChanged.emit(self.index(start, 0), self.index(start + len(rows) - 1, 0))

    def _through(self, follow: Callable[[], None], change: Callable[[], bool], op: object) -> None:
        """Make a change of rows in Qt's list, whose count Qt then answers without calling
        into Python (a layout asks for it twice per row, far cheaper in C++; decision 0218).
        `follow` makes the same change to the Python rows on the signal that ends Qt's
        change, before any view hears of it."""
        self._follow = follow
        if not change() or self._follow is not None:
            self._follow = None
            log.error("refused %s", op)

    def _reorder(self, rows: Sequence[SidebarRow], position: dict[str, int]) -> None:
        """A layout change: same rows, new order; persistent indexes follow their rows."""
        self.layoutAboutToBeChanged.emit()
        persistent = self.persistentIndexList()
        targets = []
        for index in persistent:
            target = position.get(self._rows[index.row()].id) if index.isValid() else None
            targets.append(self.index(target, 0) if target is not None else QModelIndex())
        self._rows = list(rows)
        self._values = {row.id: row for row in self._rows}  # same ids, maybe newer values
        self.changePersistentIndexList(persistent, targets)
        self.layoutChanged.emit()
