"""The composer bar under a transcript: the message box, Send or Stop, and the run indicator.

It knows nothing of conversations: it says when the user wants to send or stop, and shows
what the pane tells it (input allowed, offline, a run active). Strings use the pane's
translation context ("ConversationPane").
"""

from __future__ import annotations

from PySide6.QtCore import (
    QT_TRANSLATE_NOOP,
    QCoreApplication,
    QElapsedTimer,
    QEvent,
    QObject,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout

from ui.pane.transcript_model import tr

SEND_TIP = str(
    QT_TRANSLATE_NOOP("ConversationPane", "Send the message (Enter; Shift+Enter for a new line)")
)
SEND_OFFLINE_TIP = str(
    QT_TRANSLATE_NOOP(
        "ConversationPane", "Can't send while offline: the message would not reach the server."
    )
)


class ComposerBar(QFrame):
    """Message box with Send (Stop while a run is active) and "Replying… N s" above it."""

    send_requested = Signal(str)
    stop_requested = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("composerBar")
        self._offline = False
        self._input_enabled = True
        self._sending = False
        self.enter_sends = True  # False: Enter is a new line, Ctrl+Enter sends
        self._elapsed = QElapsedTimer()
        self._tick = QTimer(self)
        self._tick.setInterval(1000)
        self._tick.timeout.connect(self._update_indicator)

        self.editor = QPlainTextEdit()
        self.editor.setObjectName("composer")
        self.editor.installEventFilter(self)
        self.editor.setAccessibleName(QCoreApplication.translate("ConversationPane", "Message"))
        self.editor.setTabChangesFocus(True)
        self.editor.setFixedHeight(76)
        self.set_enter_sends(True)
        self.send_button = QPushButton(QCoreApplication.translate("ConversationPane", "Send"))
        self.send_button.setObjectName("sendButton")
        self.send_button.setAccessibleName(
            QCoreApplication.translate("ConversationPane", "Send message")
        )
        self.send_button.setToolTip(tr(SEND_TIP))
        self.send_button.clicked.connect(self._send)
        self.stop_button = QPushButton(QCoreApplication.translate("ConversationPane", "Stop"))
        self.stop_button.setObjectName("stopButton")
        self.stop_button.setAccessibleName(
            QCoreApplication.translate("ConversationPane", "Stop the running reply")
        )
        self.stop_button.clicked.connect(self.stop_requested)
        self.stop_button.hide()
        self.indicator = QLabel("")
        self.indicator.setObjectName("runIndicator")
        self.indicator.setAccessibleName(
            QCoreApplication.translate("ConversationPane", "Reply status")
        )
        self.indicator.hide()

        buttons = QVBoxLayout()
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(10)
        row.addWidget(self.editor, 1)
        row.addLayout(buttons)
        column = QVBoxLayout(self)
        column.setContentsMargins(24, 8, 24, 14)
        column.setSpacing(6)
        column.addWidget(self.indicator)
        column.addLayout(row)

    def set_input_enabled(self, enabled: bool) -> None:
        self._input_enabled = enabled
        self.editor.setEnabled(enabled)
        self.send_button.setEnabled(enabled and not self._offline)

    def set_sending(self, sending: bool) -> None:
        """While a message goes: the box is read-only and Send waits, but the box keeps the
        keyboard focus (disabling it moved the focus on, to the sidebar's search box, so
        the next keystrokes filtered the list)."""
        self._sending = sending
        self.editor.setReadOnly(sending)
        self.send_button.setEnabled(self._input_enabled and not self._offline and not sending)

    def set_offline(self, offline: bool) -> None:
        """Offline: the box keeps the draft, Send waits (its tooltip says why)."""
        self._offline = offline
        self.send_button.setToolTip(tr(SEND_OFFLINE_TIP if offline else SEND_TIP))
        self.send_button.setEnabled(self._input_enabled and not offline and not self._sending)

    def set_running(self, running: bool) -> None:
        """While a run is active: Stop instead of Send, and "Replying… N s" above the box
        (a steady indicator, not a bubble of growing dots)."""
        self.stop_button.setVisible(running)
        self.stop_button.setEnabled(running)
        self.send_button.setVisible(not running)
        if running and not self.indicator.isVisible():
            self._elapsed.start()
            self._tick.start()
        elif not running:
            self._tick.stop()
        self.indicator.setVisible(running)
        self._update_indicator()

    def _update_indicator(self) -> None:
        seconds = self._elapsed.elapsed() // 1000 if self._elapsed.isValid() else 0
        if seconds < 2:
            self.indicator.setText(QCoreApplication.translate("ConversationPane", "●  Replying…"))
        else:
            self.indicator.setText(
                QCoreApplication.translate("ConversationPane", "●  Replying… {0} s").format(seconds)
            )

    def set_enter_sends(self, enter_sends: bool) -> None:
        """Enter sends and Shift+Enter breaks the line (the default), or the other way."""
        self.enter_sends = enter_sends
        self.editor.setPlaceholderText(
            QCoreApplication.translate(
                "ConversationPane", "Write a message…  (Enter to send, Shift+Enter for a new line)"
            )
            if enter_sends
            else QCoreApplication.translate(
                "ConversationPane", "Write a message…  (Ctrl+Enter to send)"
            )
        )

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            watched is self.editor
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        ):
            modifiers = event.modifiers()
            if modifiers & Qt.KeyboardModifier.ShiftModifier:
                self.editor.insertPlainText("\n")
                return True
            if self.enter_sends or modifiers & Qt.KeyboardModifier.ControlModifier:
                self._send()
                return True
        return super().eventFilter(watched, event)

    def _send(self) -> None:
        text = self.editor.toPlainText().strip()
        if not text or not self.send_button.isEnabled() or not self.send_button.isVisible():
            return
        self.send_requested.emit(text)
