"""Search as you type in the sidebar: titles and message text, from the mirror (§11).

The filter field drives one sidebar read per pause in typing (`SEARCH_DEBOUNCE_MS` after
the last keystroke): the rows whose title matches (`SyncEngine.rows`, the title filter)
together with the conversations whose text matches (`SyncEngine.search`, off the UI
thread), in activity order, each with its snippet. The results replace the list rather
than annotate it: a search for a word in 3 conversations out of 10,000 must show those 3,
not 10,000 rows with 3 marked (decision 0125). They go through the sidebar's own read and
diff (`ui.sidebar.refresher`), so selection and scroll are kept, a read started for an
older query is thrown away by the refresher before it reaches the model, and clearing the
field restores the whole list. While results are shown, a mirror write re-reads them (a
delta applied by title alone would drop a row that matched by its text).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QLineEdit, QListView

from sync import SearchTooLong, SessionView
from ui.sidebar.refresher import ChangeSource, RowSource, SidebarRefresher

if TYPE_CHECKING:
    from sync import MirrorChanges, Snippet, SyncEngine

#: From the last keystroke to the read that shows titles and text together.
SEARCH_DEBOUNCE_MS = 150


class SidebarSearch(QObject):
    """The filter field's text as a search; `snippet_of` is what the delegate draws."""

    def __init__(
        self, refresher: SidebarRefresher, field: QLineEdit, view: QListView, parent: QObject
    ) -> None:
        super().__init__(parent)
        self._refresher = refresher
        self._field = field
        self._view = view
        self._snippets: dict[str, Snippet] = {}
        self.shown_for = ""  # the filter text whose results the list shows
        #: The most words a search may hold, when the last one held more (its refusal is
        #: what the empty list says); None otherwise.
        self.refused: int | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SEARCH_DEBOUNCE_MS)
        self._timer.timeout.connect(lambda: self.settled(field.text()))
        field.textChanged.connect(lambda _text: self._timer.start())

    def snippet_of(self, session_id: str) -> Snippet | None:
        return self._snippets.get(session_id)

    def settled(self, text: str) -> None:
        """Typing paused on `text` (or the window cleared the field): read for it, once."""
        self._timer.stop()
        text = text.strip()
        if text != self._refresher.filter_text:
            self._refresher.searching = bool(text)
            self._refresher.set_filter(text)

    def settle_now(self, then: Callable[[], None]) -> bool:
        """Down or Enter in the box (`ui.sidebar.keys`): read for its text now rather than
        after the pause; True when the list already shows the results for it, else `then`
        is called when it does."""
        text = self._field.text()
        self.settled(text)
        return self._refresher.when_shown(text, then)

    def source(self, engine: SyncEngine) -> RowSource:
        """The sidebar's rows for a filter text: all rows, or the matches of a search."""

        async def rows(filter_text: str) -> list[SessionView]:
            titled = await engine.rows(filter_text)
            if not filter_text:
                self.refused = None
                self._show("", {})
                return titled
            refused = None
            try:
                hits = await engine.search(filter_text)
            except SearchTooLong as exc:  # the words, not the mirror: the list says so
                refused, hits = exc.limit, []
            have = {row.id for row in titled}
            extra = await asyncio.gather(*(engine.row(h.id) for h in hits if h.id not in have))
            merged = titled + [row for row in extra if row is not None]
            merged.sort(key=lambda row: (row.updated_at, row.id), reverse=True)
            if filter_text == self._refresher.filter_text:  # not a stale query's
                self.refused = refused
                self._show(filter_text, {hit.id: hit.snippet for hit in hits})
            return merged

        return rows

    def changes(self, engine: SyncEngine) -> ChangeSource:
        """What changed since a number (`SyncEngine.changes_since`): the list follows the
        mirror this way while no search is shown, so a whole read of it ends one."""

        async def changes(since: int | None, filter_text: str, limit: int) -> MirrorChanges:
            got = await engine.changes_since(since, filter_text, limit)
            if got.whole and not filter_text:
                self._show("", {})
            return got

        return changes

    def _show(self, text: str, snippets: dict[str, Snippet]) -> None:
        self.shown_for = text
        if snippets != self._snippets:
            self._snippets = snippets
            self._view.viewport().update()  # a kept row may show another snippet
