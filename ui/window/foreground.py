""" "The application returned to the foreground", as one debounced signal (PITFALLS §6).

`QGuiApplication.applicationStateChanged` is the right source (window activation and focus
changes also fire when moving between our own windows). Only a change from a non-Active
state to Active counts, and it is debounced: menus, popups and tray clicks make the state
flap on Linux, and one return to the foreground must cause one reconcile. The first
activation after launch is not a return (the reconcile on connect already covers it).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication

DEFAULT_DEBOUNCE_MS = 500


class ForegroundWatcher(QObject):
    """Emits `returned` once per return to the foreground, after `debounce_ms` of calm."""

    returned = Signal()

    def __init__(
        self,
        app: QGuiApplication,
        debounce_ms: int = DEFAULT_DEBOUNCE_MS,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._state = app.applicationState()
        # Becoming active at launch is not a return: the connect pass covers it.
        self._seen_active = self._state == Qt.ApplicationState.ApplicationActive
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self._fire)
        self._app = app
        self._listening = True
        app.applicationStateChanged.connect(self._on_state)

    def stop(self) -> None:
        """Stop listening (at shutdown; a second call does nothing)."""
        self._timer.stop()
        if self._listening:
            self._listening = False
            self._app.applicationStateChanged.disconnect(self._on_state)

    def _on_state(self, state: Qt.ApplicationState) -> None:
        active = Qt.ApplicationState.ApplicationActive
        previous, self._state = self._state, state
        if state == active and not self._seen_active:
            self._seen_active = True
        elif state == active and previous != active:
            self._timer.start()  # restarts: a flapping state fires once, after it settles
        elif state != active:
            self._timer.stop()

    def _fire(self) -> None:
        if self._state == Qt.ApplicationState.ApplicationActive:
            self.returned.emit()
