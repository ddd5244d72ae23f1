"""Returning to the foreground: non-Active → Active, debounced (PITFALLS §6).

`ForegroundWatcher` is plain Qt (a signal and a single-shot timer), so these tests wait with
pytest-qt's own event processing, not through an asyncio loop: nothing else scheduled on a
loop can delay or swallow the debounce (the flapping test timed out once in a full run
while it waited on the qasync loop).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from ui.window.foreground import ForegroundWatcher

ACTIVE = Qt.ApplicationState.ApplicationActive
INACTIVE = Qt.ApplicationState.ApplicationInactive


def test_flapping_state_gives_one_return(qapp: QApplication, qtbot: QtBot) -> None:
    qapp.applicationStateChanged.emit(ACTIVE)
    watcher = ForegroundWatcher(qapp, debounce_ms=80)
    qapp.applicationStateChanged.emit(ACTIVE)
    fired: list[None] = []
    watcher.returned.connect(lambda: fired.append(None))
    with qtbot.waitSignal(watcher.returned, timeout=5000):
        for state in (INACTIVE, ACTIVE, INACTIVE, ACTIVE, INACTIVE, ACTIVE):
            qapp.applicationStateChanged.emit(state)
    qtbot.wait(200)  # would a second one come? (a bounded observation window)
    assert fired == [None]
    watcher.stop()


def test_active_to_active_is_not_a_return(qapp: QApplication, qtbot: QtBot) -> None:
    watcher = ForegroundWatcher(qapp, debounce_ms=10)
    qapp.applicationStateChanged.emit(ACTIVE)
    fired: list[None] = []
    watcher.returned.connect(lambda: fired.append(None))
    qapp.applicationStateChanged.emit(ACTIVE)
    qtbot.wait(100)
    assert fired == []
    watcher.stop()


def test_leaving_again_before_the_debounce_cancels(qapp: QApplication, qtbot: QtBot) -> None:
    watcher = ForegroundWatcher(qapp, debounce_ms=50)
    qapp.applicationStateChanged.emit(ACTIVE)
    fired: list[None] = []
    watcher.returned.connect(lambda: fired.append(None))
    qapp.applicationStateChanged.emit(INACTIVE)
    qapp.applicationStateChanged.emit(ACTIVE)
    qapp.applicationStateChanged.emit(INACTIVE)
    qtbot.wait(150)
    assert fired == []
    qapp.applicationStateChanged.emit(ACTIVE)  # leave the app Active for the next tests
    watcher.stop()


def test_the_first_activation_after_launch_is_not_a_return(
    qapp: QApplication, qtbot: QtBot
) -> None:
    qapp.applicationStateChanged.emit(INACTIVE)
    watcher = ForegroundWatcher(qapp, debounce_ms=10)
    fired: list[None] = []
    watcher.returned.connect(lambda: fired.append(None))
    qapp.applicationStateChanged.emit(ACTIVE)
    qtbot.wait(100)
    assert fired == []
    watcher.stop()
