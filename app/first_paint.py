"""Start-up's first screenful: the mirror's rows painted before the rest of the window loads.

Most of a start over a large mirror is interpreter start and imports, and the first screenful
needs few of them (docs/performance.md, first paint). So the sidebar first shows the mirror's
first `FIRST_ROWS` rows (`sync.read_mirror_rows`: read-only, never creating or migrating the
file) straight into its model, with no controller, pane or engine yet, and waits for them to
be painted (`paint_first_rows`). `app.desktop` then builds the rest of the window, and the
controller reads all rows the same way, with the mirror's change sequence they are at
(`sync.read_mirror_changes`, `show_all_rows`); the engine is loaded only after that, on a
worker thread, and goes on from that number rather than reading every row again
(`WindowController.attach`).

When the read-only reader cannot answer (a mirror of an older schema that must be migrated,
a locked or damaged file), the `Mirror` is opened the normal way, which migrates or waits for
the lock. A damaged file gives no rows here (`[]`): the engine meets the damage next, and
the window says what is wrong and offers Rebuild.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject

from sync import MirrorChanges, MirrorDamaged, SessionView, read_mirror_changes, read_mirror_rows
from ui.sidebar.grouping import group_rows
from ui.sidebar.relative_time import server_now

if TYPE_CHECKING:
    from sync import Mirror
    from ui.window.controller import WindowController
    from ui.window.main_window import MainWindow

#: Rows of the first paint: enough to fill a tall window several times over.
FIRST_ROWS = 300
#: How long the rest waits for the first rows to be painted: a window that is not exposed
#: (minimised, on another desktop) is never painted.
PAINT_WAIT = 0.5


def open_mirror(path: Path) -> Mirror:
    """`Mirror.open`, on a worker thread: it may migrate the file or wait for its lock."""
    from sync import Mirror

    return Mirror.open(path)


class MirrorRows:
    """The sidebar's rows before an engine is attached: read-only reads of the mirror file,
    or the `Mirror` opened the normal way once those cannot answer."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._mirror: Mirror | None = None

    async def first_rows(self, filter_text: str) -> list[SessionView]:
        rows = await asyncio.to_thread(read_mirror_rows, self.path, filter_text, FIRST_ROWS)
        return rows or []

    async def rows(self, filter_text: str) -> list[SessionView]:
        if self._mirror is None:
            rows = await asyncio.to_thread(read_mirror_rows, self.path, filter_text)
            if rows is not None:
                return rows
            try:
                self._mirror = await asyncio.to_thread(open_mirror, self.path)
            except MirrorDamaged:  # the engine meets it next, and the window offers Rebuild
                return []
        return await asyncio.to_thread(self._mirror.rows, filter_text)

    async def changes(self, since: int | None, filter_text: str, limit: int) -> MirrorChanges:
        """What changed since `since` (`Mirror.changes_since`), read as `rows` reads."""
        if self._mirror is None:
            read = read_mirror_changes
            got = await asyncio.to_thread(read, self.path, since, filter_text, limit)
            if got is not None:
                return got
            try:
                self._mirror = await asyncio.to_thread(open_mirror, self.path)
            except MirrorDamaged:  # the engine meets it next, and the window offers Rebuild
                return MirrorChanges(0, [], [], whole=True)
        return await asyncio.to_thread(self._mirror.changes_since, since, filter_text, limit)

    async def close(self) -> None:
        mirror, self._mirror = self._mirror, None
        if mirror is not None:
            await asyncio.to_thread(mirror.close)


class RowsPainted(QObject):
    """Set at the sidebar's first paint with rows (the viewport's paint event, just before
    Qt draws it)."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self._window = window
        self._painted = asyncio.Event()
        self._viewport = window.list.viewport()
        self._viewport.installEventFilter(self)

    async def wait(self, timeout: float) -> None:
        """Until the rows are painted, `timeout` seconds at most."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._painted.wait(), timeout)

    def stop(self) -> None:
        self._viewport.removeEventFilter(self)
        self.deleteLater()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and self._window.model.rowCount() > 0:
            self._painted.set()
        return False


async def paint_first_rows(window: MainWindow, path: Path) -> MirrorRows:
    """Show the first rows of the mirror at `path`, grouped by date as the sidebar groups
    them, and wait until they are painted. The returned source stays the sidebar's until an
    engine is attached (`show_all_rows`); close it then."""
    source = MirrorRows(path)
    watch = RowsPainted(window)
    try:
        rows = await source.first_rows("")
        if rows:
            await window.model.update(group_rows(rows, server_now().astimezone()))
            await watch.wait(PAINT_WAIT)
    finally:
        watch.stop()
    return source


async def show_all_rows(controller: WindowController, source: MirrorRows) -> None:
    """Every row of `source`'s mirror in the sidebar, with the change sequence they are at.
    The model's diffed update keeps the selection and the scroll made since the first paint."""
    controller.set_row_source(source.rows, source.changes)
    await controller.refresh_now()
