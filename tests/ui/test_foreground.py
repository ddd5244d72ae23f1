"""Returning to the foreground: non-Active → Active, debounced (PITFALLS §6)."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app.loop import ConvergeEventLoop
from tests.ui.conftest import run, wait_signal
from ui.foreground import ForegroundWatcher

ACTIVE = Qt.ApplicationState.ApplicationActive
INACTIVE = Qt.ApplicationState.ApplicationInactive


def test_flapping_state_gives_one_return(qapp: QApplication, loop: ConvergeEventLoop) -> None:
    qapp.applicationStateChanged.emit(ACTIVE)
    watcher = ForegroundWatcher(qapp, debounce_ms=80)
    qapp.applicationStateChanged.emit(ACTIVE)
    fired: list[None] = []
    watcher.returned.connect(lambda: fired.append(None))

    async def scenario() -> None:
        for state in (INACTIVE, ACTIVE, INACTIVE, ACTIVE, INACTIVE, ACTIVE):
            qapp.applicationStateChanged.emit(state)
        await wait_signal(watcher.returned, timeout=5)
        await asyncio.sleep(0.2)  # would a second one come? (bounded observation window)

    run(loop, scenario())
    assert fired == [None]


def test_active_to_active_is_not_a_return(qapp: QApplication, loop: ConvergeEventLoop) -> None:
    watcher = ForegroundWatcher(qapp, debounce_ms=10)
    qapp.applicationStateChanged.emit(ACTIVE)
    fired: list[None] = []
    watcher.returned.connect(lambda: fired.append(None))
    qapp.applicationStateChanged.emit(ACTIVE)
    run(loop, asyncio.sleep(0.1))
    assert fired == []


def test_leaving_again_before_the_debounce_cancels(
    qapp: QApplication, loop: ConvergeEventLoop
) -> None:
    watcher = ForegroundWatcher(qapp, debounce_ms=50)
    qapp.applicationStateChanged.emit(ACTIVE)
    fired: list[None] = []
    watcher.returned.connect(lambda: fired.append(None))
    qapp.applicationStateChanged.emit(INACTIVE)
    qapp.applicationStateChanged.emit(ACTIVE)
    qapp.applicationStateChanged.emit(INACTIVE)
    run(loop, asyncio.sleep(0.15))
    assert fired == []
    qapp.applicationStateChanged.emit(ACTIVE)  # leave the app Active for the next tests


def test_the_first_activation_after_launch_is_not_a_return(
    qapp: QApplication, loop: ConvergeEventLoop
) -> None:
    qapp.applicationStateChanged.emit(INACTIVE)
    watcher = ForegroundWatcher(qapp, debounce_ms=10)
    fired: list[None] = []
    watcher.returned.connect(lambda: fired.append(None))
    qapp.applicationStateChanged.emit(ACTIVE)
    run(loop, asyncio.sleep(0.1))
    assert fired == []
