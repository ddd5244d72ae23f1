"""The heap policy lives as long as its window: a stopped Desktop leaves no handler on the
application's state signal. Each leftover handler ran a full
collection whenever the application went inactive, so after a few dozen windows (the test
suite) one state change cost seconds of blocked loop and later tests timed out."""

from __future__ import annotations

import asyncio
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
