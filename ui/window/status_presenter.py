"""Turns the engine's status into what the window says: the status line ("Syncing…",
"Synced 3 min ago", "Offline – showing saved history", "The server is having trouble…"),
the offline banner, the sidebar's placeholder (and why the list could not be read, with
Open Settings in an empty pane), and what the pane says while it shows the saved copy. The
words for a failed request are `ui.window.failure_words`'.

It also owns the two clocks that status needs: the words "Synced N min ago" age, so they
are rewritten every 30 s; and while offline (or while the server is having trouble: a 503)
the server is probed again after 2, 5, 10, then every 30 s (CONNECT triggers), so
"reachable again" becomes a reconcile within seconds rather than at the next timer tick.
Nothing here talks to the engine except through the `trigger` callable it is given.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QObject, QTimer

from sync import EngineState, EngineStatus, SyncError, TriggerReason
from ui.sidebar.relative_time import relative_time
from ui.text.plain import isolate
from ui.window.action import WindowAction
from ui.window.failure_words import Failure, Fix, index_unread, network_down
from ui.window.main_window import DAMAGED_STATUS, EMPTY, LOADING, MainWindow

if TYPE_CHECKING:
    from sync import MirroredTranscript

# Shown through MainWindow.set_status, which translates known sentences ("MainWindow").
SYNCING = str(QT_TRANSLATE_NOOP("MainWindow", "Syncing…"))
OFFLINE = str(QT_TRANSLATE_NOOP("MainWindow", "Offline – showing saved history"))
UNREACHED = str(QT_TRANSLATE_NOOP("MainWindow", "Can't reach {host} – showing saved history"))
TROUBLE = str(
    QT_TRANSLATE_NOOP("MainWindow", "The server is having trouble; Converge will try again.")
)
SETTINGS_HINT = str(
    QT_TRANSLATE_NOOP("MainWindow", "Open Settings to check the server address and token.")
)
NOT_LISTED = str(
    QT_TRANSLATE_NOOP(
        "MainWindow",
        "The conversations can't be listed until the server can be reached; "
        "Converge will try again.",
    )
)
RETRY_OFFLINE_MS = (2_000, 5_000, 10_000, 30_000)
MANUAL = TriggerReason.MANUAL


async def _nothing() -> None:
    """The op of the list's pseudo-action (the pass already ran; Retry runs another)."""


#: States whose sentence stays on the status line while the next pass runs.
_LAST_WORD_STAYS = (EngineState.TROUBLE, EngineState.WALKING)


def offline_words(saved: MirroredTranscript | None, lead: str = "") -> str:
    """What the pane shows while the server can't be reached: the copy saved on this device
    and how recent it is, or that there is none to show until the connection is back.
    `lead` names why ("Offline", "Can't reach chat.example.org": `ui.window.failure_words`)."""
    lead = lead or QCoreApplication.translate("MainWindow", "Offline")
    if saved is None or saved.state is None or not saved.events:
        return QCoreApplication.translate(
            "MainWindow",
            "{0} – this conversation isn't saved on this device, so it can't be shown "
            "until the connection is back.",
        ).format(lead)
    when = relative_time(saved.events[-1].created_at) or QCoreApplication.translate(
        "MainWindow", "earlier"
    )
    words = QCoreApplication.translate(
        "MainWindow", "{0} – showing the copy saved on this device (last message: {1})."
    ).format(lead, when)
    if not saved.state.current:
        words += " " + QCoreApplication.translate("MainWindow", "It may lack the latest messages.")
    return words


def synced_words(last_success: float | None, now: float | None = None) -> str:
    """ "Synced just now", "Synced 3 min ago", …"""
    if last_success is None:
        return ""
    age = max(0.0, (now or time.time()) - last_success)
    if age < 60:
        return QCoreApplication.translate("MainWindow", "Synced just now")
    if age < 3600:
        return QCoreApplication.translate("MainWindow", "Synced %Ln min ago", None, int(age // 60))
    return QCoreApplication.translate("MainWindow", "Synced %Ln h ago", None, int(age // 3600))


class StatusPresenter(QObject):
    """The window's words for the engine's state (one per window)."""

    def __init__(
        self,
        window: MainWindow,
        *,
        trigger: Callable[[TriggerReason], None],
        connected: Callable[[], bool],
        filter_text: Callable[[], str],
        on_reconnected: Callable[[], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.window = window
        self._trigger = trigger
        self._connected = connected
        self._filter_text = filter_text
        self._on_reconnected = on_reconnected
        self.status = EngineStatus(EngineState.IDLE)
        self.offline_retry_ms: tuple[int, ...] = RETRY_OFFLINE_MS
        self._offline_retry = 0
        self._concluded = False  # a reconcile has concluded (or failed): emptiness is real
        self._unreached = False  # offline since the last IDLE (reload once it is back)
        #: Why the conversation list could not be read (a refused token, a host it can't
        #: reach): the sidebar's empty state and an empty pane say it, with Open Settings.
        self.index_failure: Failure | None = None
        self.host: Callable[[], str] = lambda: ""
        # The most words a search may hold, when the sidebar's search held more.
        self.search_refused: Callable[[], int | None] = lambda: None
        self.pane_fixes: Callable[[WindowAction[Any]], Mapping[Fix, Callable[[], object]]] = (
            lambda _action: {}
        )

        self._status_timer = QTimer(self)
        self._status_timer.setInterval(30_000)
        self._status_timer.timeout.connect(self.refresh_words)
        self._status_timer.start()
        self._offline_timer = QTimer(self)
        self._offline_timer.setSingleShot(True)
        self._offline_timer.timeout.connect(lambda: self._trigger(TriggerReason.CONNECT))

    def show(self, status: EngineStatus) -> None:
        """The engine's state changed: say so (and schedule the next offline probe)."""
        previous, self.status = self.status, status
        if status.state is not EngineState.SYNCING:
            self._show_index_failure(status)
        if status.state is not EngineState.SYNCING and (
            status.last_success is not None or status.state is not EngineState.IDLE
        ):
            self._concluded = True
            self.update_placeholder()
        if status.state is EngineState.SYNCING and previous.state is EngineState.OFFLINE:
            # No flicker while probing.
            self.window.set_status(
                QCoreApplication.translate("MainWindow", "{0} · reconnecting…").format(
                    self._offline_words(previous)
                )
            )
        elif status.state is EngineState.SYNCING and previous.state in _LAST_WORD_STAYS:
            # Still the last word: the trouble, or the walk's count while it goes on.
            self.window.set_status(previous.message or TROUBLE)
        elif status.state is EngineState.SYNCING and self.window.damaged:
            pass  # the banner's words stay until Rebuild
        elif status.state is EngineState.SYNCING:
            self.window.set_status(SYNCING, routine=True)
        elif status.state is EngineState.OFFLINE:
            self.window.set_status(self._offline_words(status), details=status.message)
            self.window.set_offline(True, status.message, self._unreached_host(status))
            self._schedule_offline_retry()
        elif status.state in _LAST_WORD_STAYS:
            # TROUBLE (CONTRACT §10.2: a 503) is the server having trouble for a while;
            # WALKING, a walk cut by the pass deadline or its budget with its pages kept
            # (the engine's sentence says how far it came). Both in plain words, not an
            # error and not offline (the server answers), probed again on the offline
            # schedule.
            self.window.set_status(status.message or TROUBLE)
            if self.window.offline:  # the server answers again: not "offline" any more
                self.window.set_offline(False)
                self._unreached = True
            self._schedule_offline_retry()
        elif status.state is EngineState.DAMAGED:  # the one way forward is the banner's
            self.window.show_damage(status.message)
        elif status.state is EngineState.ERROR:
            self.window.set_status(status.message or "The server refused the request.", error=True)
        else:
            self.window.status.setToolTip("")
            self.refresh_words()
        if status.state is EngineState.IDLE and (self.window.offline or self._unreached):
            self.window.set_offline(False)
            self._unreached = False
            self._on_reconnected()
        if status.state is EngineState.IDLE and previous.state in (
            EngineState.OFFLINE,
            EngineState.TROUBLE,
            EngineState.WALKING,
            EngineState.ERROR,
        ):
            self._offline_retry = 0
            self._offline_timer.stop()

    def failed(self, headline: str, error: SyncError) -> None:
        """A request of the window failed: one sentence, the technical message behind
        "Details"."""
        self.window.set_status(headline, error=True, details=error.message)

    def _unreached_host(self, status: EngineStatus) -> str:
        """The host when the network is up but the server can't be reached, else "": a
        server that refuses or a name that does not resolve is not "offline";
        only the operating system saying there is no network is."""
        host = self.host()
        if status.problem is None or not host or network_down(status.problem):
            return ""
        return host

    def _offline_words(self, status: EngineStatus) -> str:
        """ "Offline – showing saved history", or "Can't reach <host> – …"."""
        host = self._unreached_host(status)
        if not host:
            return OFFLINE
        return QCoreApplication.translate("MainWindow", UNREACHED).format(host=host)

    def suspect_offline(self) -> None:
        """A request just failed on the network: check now (a reconcile pass soon says
        OFFLINE) rather than at the next 30 s tick."""
        if self.status.state not in (EngineState.OFFLINE, EngineState.SYNCING):
            self._trigger(TriggerReason.MANUAL)

    def refresh_words(self) -> None:
        """Age "Synced N min ago" (the 30 s timer), or say where things stand when idle."""
        if self.status.state is EngineState.IDLE:
            words = synced_words(self.status.last_success)
            words = words or ("Connected" if self._connected() else "Starting…")
            self.window.set_status(words, routine=True)

    def update_placeholder(self) -> None:
        """What an empty sidebar means: no match, really empty, or not loaded yet."""
        text = self._filter_text()
        if self.window.damaged:
            self.window.set_placeholder(DAMAGED_STATUS)
        elif text and (most := self.search_refused()) is not None:
            self.window.sidebar_empty.setText(
                QCoreApplication.translate(
                    "StatusPresenter", "A search can hold at most %n words.", "", most
                )
            )
        elif text:
            # A search of the saved history answers offline too: no hit is "no match", and
            # why the list could not be read stays in the banner, the status line and the pane.
            self.window.sidebar_empty.setText(
                QCoreApplication.translate("MainWindow", "No conversations match “{0}”.").format(
                    isolate(text)
                )
            )
        elif self.index_failure is not None:
            self.window.set_placeholder(f"{self.index_failure.words}\n{SETTINGS_HINT}")
        elif self._concluded and self.status.last_success is None and self.status.problem:
            self.window.set_placeholder(NOT_LISTED)  # never read: not "No conversations yet"
        elif self._concluded:
            self.window.set_placeholder(EMPTY)
        else:
            self.window.set_placeholder(LOADING)

    def _show_index_failure(self, status: EngineStatus) -> None:
        """A pass that could not read the list says why, in the sidebar's empty state and in
        an empty pane ([Open Settings] [Retry]); the next pass that reads it clears both."""
        failure = None
        if status.state in (EngineState.ERROR, EngineState.OFFLINE):
            failure = index_unread(status.problem, self.host())
        previous, self.index_failure = self.index_failure, failure
        pane = self.window.pane
        if failure is not None and pane.session_id is None:
            retry = WindowAction(
                "list the conversations", _nothing, retry=lambda: self._trigger(MANUAL)
            )
            pane.show_failure(failure, self.pane_fixes(retry))
        elif previous is not None and failure is None and pane.notice.failure == previous:
            pane.clear_failure()
        if failure != previous:
            self.update_placeholder()

    def stop_retrying(self) -> None:
        """No offline probe until the next OFFLINE status (the engine is going away)."""
        self._offline_timer.stop()

    def stop(self) -> None:
        """No timer of the presenter fires after this (the window is closing)."""
        self._status_timer.stop()
        self._offline_timer.stop()

    def _schedule_offline_retry(self) -> None:
        """While offline, probe the server more often than the 30 s timer, so that the
        reconcile "when the server becomes reachable again" happens soon after it does."""
        delays = self.offline_retry_ms
        delay = delays[min(self._offline_retry, len(delays) - 1)]
        self._offline_retry += 1
        self._offline_timer.start(delay)
