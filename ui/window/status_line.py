"""The window's bottom line: what sync is doing in one sentence, the technical words behind
a "Details" button (a user never reads a traceback or a URL in the sentence itself), and
where the window is signed in (account, server, profile; two profiles are two devices).

An outcome the user waits for (a delete's success) is held for `HOLD_MS`: sync's routine
words ("Syncing…", "Synced just now"), which every pass rewrites within a second, wait until
it has been readable that long; anything else (an error, another outcome) replaces it.

Its strings keep the translation context "MainWindow" they had when this was part of the
window, so a translation made for the window still applies.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, Qt, QTimer
from PySide6.QtWidgets import QLabel, QMainWindow, QMessageBox, QToolButton

from ui.text.plain import isolate, neutral, set_plain_tip

# How long a held outcome stays before routine sync words may replace it: time to read it.
HOLD_MS = 6_000


def _tr(text: str) -> str:
    return QCoreApplication.translate("MainWindow", text)


class StatusLine:
    """The status bar of `window`: the sync status with its Details, and the account."""

    def __init__(self, window: QMainWindow) -> None:
        self._window = window
        self.status = QLabel("")
        self.status.setObjectName("syncStatus")
        self.status.setAccessibleName(QCoreApplication.translate("MainWindow", "Sync status"))
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.details_button = QToolButton()
        self.details_button.setObjectName("statusDetails")
        self.details_button.setText(QCoreApplication.translate("MainWindow", "Details"))
        self.details_button.setAccessibleName(
            QCoreApplication.translate("MainWindow", "Show the details")
        )
        self.details_button.setAutoRaise(True)
        self.details_button.hide()
        self.details_button.clicked.connect(self._show_details)
        self.details = ("", "")  # (the sentence, the technical words behind "Details")
        self.details_box: QMessageBox | None = None
        self.where = QLabel("")
        self.where.setObjectName("whereLabel")
        self.where.setTextFormat(Qt.TextFormat.PlainText)
        self.where.setAccessibleName(QCoreApplication.translate("MainWindow", "Account and server"))
        bar = window.statusBar()
        bar.addWidget(self.status, 1)
        bar.addWidget(self.details_button)
        bar.addPermanentWidget(self.where)
        bar.setSizeGripEnabled(False)
        self.hold_timer = QTimer(window)
        self.hold_timer.setSingleShot(True)
        self.hold_timer.setInterval(HOLD_MS)
        self.hold_timer.timeout.connect(self._release)
        self._waiting: str | None = None  # routine words that came while an outcome was held

    def set_status(
        self,
        text: str,
        *,
        error: bool = False,
        details: str = "",
        hold: bool = False,
        routine: bool = False,
    ) -> None:
        """The status line; `details` (technical words) sit behind a "Details" button. A
        sentence may quote the server: its bidi controls are dropped (`ui.text.plain`).
        `hold`: an outcome kept for `HOLD_MS` against `routine` words, which wait."""
        if routine and self.hold_timer.isActive():
            self._waiting = text
            return
        self._waiting = None
        if hold:
            self.hold_timer.start()
        elif not routine:
            self.hold_timer.stop()
        self.status.setText(neutral(_tr(text)))  # a known sentence is translated, others kept
        self.status.setProperty("error", error)
        self.status.style().unpolish(self.status)
        self.status.style().polish(self.status)
        self.details = (neutral(text), neutral(details))
        self.details_button.setVisible(bool(details))

    def _release(self) -> None:
        """The held outcome has been readable long enough: the latest routine words now."""
        self.hold_timer.stop()  # over, also when its timeout is emitted by hand
        waiting, self._waiting = self._waiting, None
        if waiting is not None:
            self.set_status(waiting, routine=True)

    def _show_details(self) -> None:
        from ui.dialogs.dialogs import build_details_box

        text, details = self.details
        box = build_details_box(
            self._window, QCoreApplication.translate("MainWindow", "Details"), text, details
        )
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        box.show()  # non-modal: no nested event loop, the window stays usable
        self.details_box = box

    def set_where(self, account: str, server: str, profile: str = "") -> None:
        """Name the account, the server and the profile in the title bar and the status
        bar; the profile's whole path is in the tooltip. Each name is isolated: an
        account or a host cannot reorder the sentence around it (`ui.text.plain`)."""
        account, server = isolate(account), isolate(server)
        title = QCoreApplication.translate("MainWindow", "Converge — {0} on {1}").format(
            account, server
        )
        text = QCoreApplication.translate("MainWindow", "{0} · {1}").format(account, server)
        tip = QCoreApplication.translate("MainWindow", "Signed in as {0} on {1}").format(
            account, server
        )
        if profile:
            name = profile.rstrip("/").rsplit("/", 1)[-1] or profile
            # Two profiles on one account are two devices: their titles must differ.
            title = QCoreApplication.translate("MainWindow", "{0} · profile {1}").format(
                title, isolate(name)
            )
            text = QCoreApplication.translate("MainWindow", "{0} · profile {1}").format(
                text, isolate(name)
            )
            tip = QCoreApplication.translate("MainWindow", "{0}\nProfile: {1}").format(
                tip, isolate(profile)
            )
        # The app's name once: no application display name is set, which Qt would append.
        self._window.setWindowTitle(title)
        self.where.setText(text)
        set_plain_tip(self.where, tip)
