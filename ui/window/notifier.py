"""A desktop notification when something the user waits for happens while the window is not
in front: a reply finished, or the open conversation was deleted on another device.

Through Qt only: `QSystemTrayIcon.showMessage` (the desktop's notification service on Linux
through StatusNotifierItem, the notification centre on macOS and Windows). Where there is no
tray or it cannot show messages (offscreen, a bare window manager) nothing is shown and
nothing fails: the window still says it when the user comes back. The tray icon is made on
the first notification only, so a window that never notifies adds nothing to the tray.
`show` is the seam the tests replace.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QSystemTrayIcon, QWidget

# How long the desktop keeps the message, where it lets the application choose.
SHOWN_MS = 8_000


class DesktopNotifier(QObject):
    """Notifies for `window` while it is not the active window."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        self._tray: QSystemTrayIcon | None = None
        #: Whether the user is looking at the window (tests replace it: offscreen it is).
        self.in_front: Callable[[], bool] = window.isActiveWindow
        #: Shows (title, message) on the desktop; tests replace it.
        self.show: Callable[[str, str], None] = self._show_in_tray

    def notify(self, title: str, message: str) -> bool:
        """Show `title` and `message` unless the window is in front; whether it was sent."""
        if self.in_front():
            return False
        self.show(title, message)
        return True

    @staticmethod
    def available() -> bool:
        """A tray that shows messages exists on this desktop."""
        return QSystemTrayIcon.isSystemTrayAvailable() and QSystemTrayIcon.supportsMessages()

    def _show_in_tray(self, title: str, message: str) -> None:
        if not self.available():
            return
        if self._tray is None:
            self._tray = QSystemTrayIcon(self._window.windowIcon(), self)
            self._tray.setToolTip(self._window.windowTitle())
            self._tray.messageClicked.connect(self._bring_to_front)
            self._tray.activated.connect(lambda _reason: self._bring_to_front())
        self._tray.show()
        self._tray.showMessage(title, message, QSystemTrayIcon.MessageIcon.Information, SHOWN_MS)

    def _bring_to_front(self) -> None:
        self._window.showNormal()
        self._window.raise_()
        self._window.activateWindow()

    def stop(self) -> None:
        """No tray icon is left behind when the window closes."""
        if self._tray is not None:
            self._tray.hide()
