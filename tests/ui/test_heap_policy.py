"""The heap policy lives as long as its window: a stopped Desktop leaves no handler on the
application's state signal. Each leftover handler ran a full
collection whenever the application went inactive, so after a few dozen windows (the test
suite) one state change cost seconds of blocked loop and later tests timed out."""

from __future__ import annotations

import asyncio
import gc
import sys
import weakref
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app import heap
from app.desktop import Desktop, DesktopOptions
from app.loop import ConvergeEventLoop
from bench.first_paint_child import TOKEN, UNREACHABLE
from tests.ui.conftest import run, until


def _go_inactive_and_back() -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.applicationStateChanged.emit(Qt.ApplicationState.ApplicationInactive)
    app.applicationStateChanged.emit(Qt.ApplicationState.ApplicationActive)


def test_a_stopped_desktop_no_longer_collects_when_the_app_goes_inactive(
    loop: ConvergeEventLoop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    collections: list[None] = []
    real = heap.collect_while_idle

    def counted() -> None:
        collections.append(None)
        real()

    monkeypatch.setattr(heap, "collect_while_idle", counted)
    desktop = Desktop(DesktopOptions(tmp_path / "profile", UNREACHABLE, TOKEN, 0.0))

    async def scenario() -> int:
        main = asyncio.ensure_future(desktop.main())
        await until(lambda: "showing saved history" in desktop.window.status.text(), what="offline")
        _go_inactive_and_back()
        assert len(collections) == 1, "one collection per departure while the window runs"
        desktop.window.close()
        return await main

    assert run(loop, scenario()) == 0
    _go_inactive_and_back()
    assert len(collections) == 1, "the stopped window's handler is gone"


class _Cycle:
    """Cyclic garbage, the kind only the collector frees (a retry state, an error's frames)."""

    def __init__(self) -> None:
        self.me = self


def test_cyclic_garbage_from_before_a_refresh_is_still_collected(
    loop: ConvergeEventLoop, tmp_path: Path
) -> None:
    """A freeze after a sidebar refresh would send whatever garbage is pending then (the
    cycles here) to the permanent generation, where no collection could free it until the
    application left the foreground. Freezing happens once, at start."""
    desktop = Desktop(DesktopOptions(tmp_path / "profile", UNREACHABLE, TOKEN, 0.0))
    try:
        gc.disable()  # the cycles are pending when the refresh comes, as between collections
        cycles = [_Cycle() for _ in range(1_000)]
        refs = [weakref.ref(cycle) for cycle in cycles]
        del cycles
        desktop.controller.rows_applied.emit()
        gc.enable()
        gc.collect()
        survivors = sum(ref() is not None for ref in refs)
        assert survivors == 0, f"{survivors} of 1,000 cycles pinned by a freeze"
    finally:
        gc.enable()
        run(loop, desktop.stop())


def test_a_desktop_collects_its_young_objects_in_small_pieces_and_gives_the_rule_back(
    loop: ConvergeEventLoop, tmp_path: Path
) -> None:
    """While a window runs, a generation-1 collection follows every second young one (it
    scanned ~20,000 new rows at once after ten, 6-9 ms of one loop step); a stopped window
    leaves the interpreter's rule as it found it."""
    before = gc.get_threshold()
    desktop = Desktop(DesktopOptions(tmp_path / "profile", UNREACHABLE, TOKEN, 0.0))
    try:
        assert gc.get_threshold() == (before[0], heap.YOUNG_PER_OLDER, before[2])
        assert before[1] > heap.YOUNG_PER_OLDER
    finally:
        run(loop, desktop.stop())
    assert gc.get_threshold() == before


def test_the_start_up_collection_waits_for_the_first_rows_painted(
    loop: ConvergeEventLoop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The full collection and freeze of start-up's heap come once the sidebar has painted
    rows, not before: the first paint does not wait for them. Once, however the start goes
    on (the connection after it, a reconnect)."""
    from PySide6.QtCore import QEvent, QObject

    from tests.ui.test_first_paint import fill, mirror_path

    profile = tmp_path / "profile"
    fill(mirror_path(profile), 20)
    painted: list[int] = []
    at_collection: list[int] = []
    real = heap.collect_then_freeze

    def counted() -> None:
        at_collection.append(len(painted))
        real()

    monkeypatch.setattr(heap, "collect_then_freeze", counted)
    desktop = Desktop(DesktopOptions(profile, UNREACHABLE, TOKEN, 0.0))

    class Paints(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint and desktop.window.model.rowCount():
                painted.append(1)
            return False

    paints = Paints()
    desktop.window.list.viewport().installEventFilter(paints)

    async def scenario() -> int:
        main = asyncio.ensure_future(desktop.main())
        await until(lambda: "showing saved history" in desktop.window.status.text(), what="offline")
        desktop.window.close()
        return await main

    assert run(loop, scenario()) == 0
    assert len(at_collection) == 1 and at_collection[0] >= 1, at_collection


def test_the_start_up_gives_back_what_its_reads_freed_once_connected(
    loop: ConvergeEventLoop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first paint's and the full read's rows pass through the C heap, which keeps what
    they freed (5-7 MB at 100,000 rows, `python -m bench ui`). It goes back to the system once
    the start-up is done (all rows shown, the engine attached), and after each idle
    collection."""
    from tests.ui.test_first_paint import fill, mirror_path

    profile = tmp_path / "profile"
    fill(mirror_path(profile), 20)
    desktop = Desktop(DesktopOptions(profile, UNREACHABLE, TOKEN, 0.0))
    released: list[bool] = []
    monkeypatch.setattr(
        heap, "release_free_memory", lambda: released.append(desktop.engine is not None)
    )

    async def scenario() -> int:
        main = asyncio.ensure_future(desktop.main())
        await until(lambda: "showing saved history" in desktop.window.status.text(), what="offline")
        await until(lambda: bool(released), what="the start-up's release")
        assert released == [True]
        assert desktop.window.model.rowCount() > 20  # the rows and their date sections
        _go_inactive_and_back()
        assert released == [True, True]
        desktop.window.close()
        return await main

    assert run(loop, scenario()) == 0
    heap.release_free_memory()  # the real one: this C library has it, or it does nothing


def test_giving_memory_back_is_skipped_where_the_c_library_cannot_be_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Windows refuses `CDLL(None)`: the release is a no-op there, never a failed start or
    an error at every idle collection."""
    import ctypes

    def refuse(name: object, *args: object, **kwargs: object) -> object:
        raise TypeError("LoadLibrary() argument 1 must be str, not None")

    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(ctypes, "CDLL", refuse)
    heap.release_free_memory()
