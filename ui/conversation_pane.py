"""The right-hand pane: a conversation's transcript and the composer.

The pane is a view: it renders events (`sync.models.Event`) as they come (a whole transcript,
then streamed ones) and reports what the user asks for through signals; the controller does
the work. Event types it draws (CONTRACT §2): user and assistant messages (assistant deltas
stream into one bubble), tool invocations, approvals with Approve/Deny, artifacts with
Open/Save, memories and skills as quiet notes, and a run's failure or cancellation.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QElapsedTimer, QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from sync import Event
from ui.elided_label import ElidedLabel
from ui.relative_time import full_time

# Source strings, shown through `self.tr()` (context "ConversationPane").
DELETED_ELSEWHERE = str(
    QT_TRANSLATE_NOOP(
        "ConversationPane",
        "This conversation was deleted on another device. "
        "It is no longer on the server or in this device's history.",
    )
)
EMPTY_STATE = str(
    QT_TRANSLATE_NOOP("ConversationPane", "Select a conversation on the left, or start a new one.")
)
SEND_TIP = str(
    QT_TRANSLATE_NOOP("ConversationPane", "Send the message (Enter; Shift+Enter for a new line)")
)
SEND_OFFLINE_TIP = str(
    QT_TRANSLATE_NOOP(
        "ConversationPane", "Can't send while offline: the message would not reach the server."
    )
)


def message_text(data: dict[str, Any]) -> str:
    """The text blocks of a message (`{"role", "content": [...]}`), joined; images named."""
    content = data.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        text = data.get("text")
        return text if isinstance(text, str) else ""
    parts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif block.get("type") == "image":
            parts.append("[image]")
    return "\n".join(parts)


def _label(text: str, name: str, *, selectable: bool = True) -> QLabel:
    label = QLabel(text)
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    if selectable:
        # Mouse only: keyboard selection would make every bubble a Tab stop.
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
    return label


class Bubble(QFrame):
    """One message: "You" on the right, the assistant on the left.

    A word-wrapped QLabel asks for a narrow width, so a bubble sets its own: the text's
    natural width, capped by what the transcript has room for (`fit`)."""

    def __init__(self, role: str, text: str) -> None:
        super().__init__()
        self.role = role
        self.setObjectName("userBubble" if role == "user" else "assistantBubble")
        self.body = _label(text, "bubbleText")
        self.body.setAccessibleName("Your message" if role == "user" else "Assistant's reply")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 9)
        layout.addWidget(self.body)
        self._room = 520

    def set_text(self, text: str) -> None:
        self.body.setText(text)
        self.fit(self._room)

    def fit(self, room: int) -> None:
        """Make the text as wide as it naturally is, up to `room` pixels."""
        self._room = room
        metrics = self.body.fontMetrics()
        lines = self.body.text().splitlines() or [""]
        natural = max(metrics.horizontalAdvance(line) for line in lines) + 6
        self.body.setMinimumWidth(max(40, min(natural, room)))


class Card(QFrame):
    """A bordered box for a tool call, an approval or an artifact."""

    def __init__(self, heading: str, detail: str = "", name: str = "card") -> None:
        super().__init__()
        self.setObjectName(name)
        self.heading = _label(heading, "cardHeading")
        self.detail = _label(detail, "cardDetail")
        self.detail.setVisible(bool(detail))
        self.buttons = QHBoxLayout()
        self.buttons.setSpacing(8)
        self.buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 9, 12, 10)
        layout.setSpacing(4)
        layout.addWidget(self.heading)
        layout.addWidget(self.detail)
        layout.addLayout(self.buttons)

    def add_button(self, text: str, accessible: str) -> QPushButton:
        button = QPushButton(text)
        button.setAccessibleName(accessible)
        button.setAutoDefault(False)
        self.buttons.insertWidget(self.buttons.count() - 1, button)
        return button

    def clear_buttons(self) -> None:
        while self.buttons.count() > 1:
            item = self.buttons.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()


class ConversationPane(QWidget):
    """Transcript + composer for one conversation (or a new one, or nothing)."""

    send_requested = Signal(str)
    stop_requested = Signal()
    approval_decided = Signal(str, str)  # approval id, "approve" | "deny"
    artifact_open_requested = Signal(str, str)  # artifact id, name
    artifact_save_requested = Signal(str, str)
    memories_shown = Signal(list)  # memory ids whose text the pane would like to say

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("conversationPane")
        self.session_id: str | None = None
        self._streaming: dict[str | None, Bubble] = {}
        self._approvals: dict[str, Card] = {}
        self._follow = True
        self._offline = False
        self._composer_enabled = True
        self._memories: dict[str, QLabel] = {}
        self._reinforced: set[str] = set()
        self._batch: list[str] | None = None  # memory ids seen while rendering a transcript
        self._elapsed = QElapsedTimer()
        self._tick = QTimer(self)
        self._tick.setInterval(1000)
        self._tick.timeout.connect(self._update_indicator)

        self.title = ElidedLabel("")
        self.title.setObjectName("paneTitle")
        self.subtitle = QLabel("")
        self.subtitle.setObjectName("paneSubtitle")
        self.banner = _label("", "banner")
        self.banner.setAccessibleName(self.tr("Notice"))
        self.banner.hide()

        self.transcript = QWidget()
        self.transcript.setObjectName("transcript")
        self._items = QVBoxLayout(self.transcript)
        self._items.setContentsMargins(24, 16, 24, 16)
        self._items.setSpacing(10)
        self._items.addStretch(1)
        self.scroll_area = QScrollArea()
        self.scroll_area.setObjectName("transcriptScroll")
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll_area.setWidget(self.transcript)
        self.scroll_area.setAccessibleName(self.tr("Transcript"))
        self.scroll_area.verticalScrollBar().rangeChanged.connect(self._keep_at_bottom)
        self.scroll_area.verticalScrollBar().valueChanged.connect(self._track_follow)

        self.empty = _label(self.tr(EMPTY_STATE), "emptyState", selectable=False)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)

        self.composer = QPlainTextEdit()
        self.composer.setObjectName("composer")
        self.composer.setPlaceholderText(
            self.tr("Write a message…  (Enter to send, Shift+Enter for a new line)")
        )
        self.composer.installEventFilter(self)
        self.enter_sends = True  # False: Enter is a new line, Ctrl+Enter sends
        self.composer.setAccessibleName(self.tr("Message"))
        self.composer.setTabChangesFocus(True)
        self.composer.setFixedHeight(76)
        self.send_button = QPushButton(self.tr("Send"))
        self.send_button.setObjectName("sendButton")
        self.send_button.setAccessibleName(self.tr("Send message"))
        self.send_button.setToolTip(self.tr(SEND_TIP))
        self.send_button.clicked.connect(self._send)
        self.stop_button = QPushButton(self.tr("Stop"))
        self.stop_button.setObjectName("stopButton")
        self.stop_button.setAccessibleName(self.tr("Stop the running reply"))
        self.stop_button.clicked.connect(self.stop_requested)
        self.stop_button.hide()

        header = QVBoxLayout()
        header.setContentsMargins(24, 14, 24, 10)
        header.setSpacing(2)
        header.addWidget(self.title)
        header.addWidget(self.subtitle)
        header_frame = QFrame()
        header_frame.setObjectName("paneHeader")
        header_frame.setLayout(header)

        self.indicator = QLabel("")
        self.indicator.setObjectName("runIndicator")
        self.indicator.setAccessibleName(self.tr("Reply status"))
        self.indicator.hide()

        buttons = QVBoxLayout()
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        composer_row = QHBoxLayout()
        composer_row.setContentsMargins(0, 0, 0, 0)
        composer_row.setSpacing(10)
        composer_row.addWidget(self.composer, 1)
        composer_row.addLayout(buttons)
        composer_column = QVBoxLayout()
        composer_column.setContentsMargins(24, 8, 24, 14)
        composer_column.setSpacing(6)
        composer_column.addWidget(self.indicator)
        composer_column.addLayout(composer_row)
        composer_frame = QFrame()
        composer_frame.setObjectName("composerBar")
        composer_frame.setLayout(composer_column)
        self.composer_frame = composer_frame

        self.banner_box = QWidget()
        self.banner_box.setObjectName("bannerBox")
        banner_row = QHBoxLayout(self.banner_box)
        banner_row.setContentsMargins(24, 10, 24, 4)
        banner_row.addWidget(self.banner)
        self.banner_box.hide()

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(header_frame)
        layout.addWidget(self.banner_box)
        layout.addWidget(self.scroll_area, 1)
        layout.addWidget(self.empty, 1)
        layout.addWidget(composer_frame)
        self.show_nothing()

    # --- what the pane shows ------------------------------------------------------------

    def show_nothing(self) -> None:
        """No conversation open: the empty state, composer ready for a new conversation."""
        self.session_id = None
        self._reset(
            self.tr("Converge"),
            self.tr(self.tr("Your conversation history, the same on every device.")),
        )
        self.scroll_area.hide()
        self.empty.show()
        self.set_composer_enabled(True)

    def show_new(self) -> None:
        """A new conversation: sending creates it."""
        self.session_id = None
        self._reset(
            self.tr(self.tr("New conversation")),
            self.tr(self.tr("Your first message becomes the title.")),
        )
        self.scroll_area.hide()
        self.empty.setText(self.tr(self.tr("Write your first message below.")))
        self.empty.show()
        self.set_composer_enabled(True)
        self.composer.setFocus()

    def show_session(self, session_id: str, title: str, updated_at: str) -> None:
        """Open a conversation; its events follow through `set_events`."""
        self.session_id = session_id
        self._reset(
            title, self.tr("Last activity {0}").format(full_time(updated_at)) if updated_at else ""
        )
        self.empty.hide()
        self.scroll_area.show()
        self.set_composer_enabled(True)

    def update_header(self, title: str, updated_at: str) -> None:
        self.title.setText(title)
        self.subtitle.setText(
            self.tr("Last activity {0}").format(full_time(updated_at)) if updated_at else ""
        )

    def _activity(self, updated_at: str) -> str:
        return self.tr("Last activity {0}").format(full_time(updated_at)) if updated_at else ""

    def show_banner(self, text: str) -> None:
        text = self.tr(text) if text else text  # a known sentence is translated, others kept
        self.banner.setText(text)
        self.banner.setVisible(bool(text))
        self.banner_box.setVisible(bool(text))

    def show_deleted_elsewhere(self) -> None:
        """The open conversation vanished in a reconcile: say so plainly, block sending."""
        self.show_banner(DELETED_ELSEWHERE)
        self.set_running(False)
        self.set_composer_enabled(False)
        for card in self._approvals.values():
            card.clear_buttons()
        for button in self.transcript.findChildren(QPushButton):
            button.setEnabled(False)  # its files are gone from the server and the cache

    def set_composer_enabled(self, enabled: bool) -> None:
        self._composer_enabled = enabled
        self.composer.setEnabled(enabled)
        self.send_button.setEnabled(enabled and not self._offline)

    def set_offline(self, offline: bool) -> None:
        """Offline: the composer keeps the draft, Send waits (its tooltip says why)."""
        self._offline = offline
        self.send_button.setToolTip(self.tr(SEND_OFFLINE_TIP if offline else SEND_TIP))
        self.send_button.setEnabled(self._composer_enabled and not offline)

    def set_running(self, running: bool) -> None:
        """While a run is active: Stop instead of Send, and "Replying… 12 s" above the
        composer (a steady indicator, not a bubble of growing dots)."""
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
            self.indicator.setText(self.tr("●  Replying…"))
        else:
            self.indicator.setText(self.tr("●  Replying… {0} s").format(seconds))

    def set_memory_text(self, memory_id: str, text: str) -> None:
        """Say what a memory holds, under the reply that formed it."""
        label = self._memories.get(memory_id)
        if label is None:
            return
        if memory_id in self._reinforced:
            label.setText(self.tr("Remembered again: “{0}”").format(text))
        else:
            label.setText(self.tr("Remembered: “{0}”").format(text))

    def composer_text(self) -> str:
        return self.composer.toPlainText()

    # --- events -------------------------------------------------------------------------

    def set_events(self, events: Iterable[Event]) -> None:
        """Render a whole transcript."""
        self._clear_items()
        self._batch = []
        try:
            for event in events:
                self.append_event(event)
        finally:
            wanted, self._batch = self._batch, None
        if wanted:
            self.memories_shown.emit(wanted)  # one lookup for the whole transcript
        self._follow = True
        QTimer.singleShot(0, self._scroll_to_end)

    def append_event(self, event: Event) -> None:
        data = event.data
        kind = event.type
        if kind == "message.user":
            self._add(Bubble("user", message_text(data)), right=True)
        elif kind == "message.assistant.delta":
            bubble = self._streaming.get(event.run_id)
            text = data.get("text") if isinstance(data.get("text"), str) else ""
            if not str(text).strip(". \n"):
                return  # a "still working" tick: the indicator says that, not a bubble
            if bubble is None:
                bubble = Bubble("assistant", "")
                self._streaming[event.run_id] = bubble
                self._add(bubble)
            bubble.set_text(bubble.body.text() + str(text))
        elif kind == "message.assistant":
            text = message_text(data)
            bubble = self._streaming.pop(event.run_id, None)
            if bubble is not None:
                bubble.set_text(text)
            else:
                self._add(Bubble("assistant", text))
        elif kind == "tool.invocation":
            status = str(data.get("status", ""))
            output = data.get("output")
            card = Card(f"Tool: {data.get('tool', 'tool')} — {status}".rstrip(" —"), "", "toolCard")
            if output not in (None, ""):
                card.detail.setText(str(output))
                card.detail.setObjectName("toolOutput")
                card.detail.show()
            self._add(card)
        elif kind == "approval.requested":
            self._add_approval(str(data.get("approval_id", "")), str(data.get("tool", "a tool")))
        elif kind == "approval.resolved":
            self._resolve_approval(str(data.get("approval_id", "")), str(data.get("decision", "")))
        elif kind == "artifact.created":
            self._add_artifact(str(data.get("artifact_id", "")), str(data.get("name", "file")))
        elif kind == "memory.formed":
            self._add_memory(str(data.get("memory_id", "")), bool(data.get("reinforced")))
        elif kind == "skill.published":
            self._add(_label(self.tr(self.tr("Skill published")), "note", selectable=False))
        elif kind == "run.failed":
            self._streaming.pop(event.run_id, None)
            self._add(_label(self.tr(self.tr("The reply failed.")), "errorNote", selectable=False))
        elif kind == "run.cancelled":
            self._streaming.pop(event.run_id, None)
            self._add(_label(self.tr(self.tr("Stopped.")), "note", selectable=False))
            self._cancel_open_approvals()
        elif kind == "run.completed":
            self._streaming.pop(event.run_id, None)

    # --- internals ----------------------------------------------------------------------

    def _reset(self, title: str, subtitle: str) -> None:
        self.title.setText(title)
        self.subtitle.setText(subtitle)
        self.show_banner("")
        self.empty.setText(self.tr(EMPTY_STATE))
        self.set_running(False)
        self._clear_items()

    def _clear_items(self) -> None:
        self._streaming.clear()
        self._approvals.clear()
        self._memories.clear()
        self._reinforced.clear()
        while self._items.count() > 1:  # item 0 is the stretch that bottom-aligns the chat
            item = self._items.takeAt(1)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()

    def _bubble_room(self) -> int:
        width = self.scroll_area.viewport().width() or self.width()
        return max(160, min(560, int(width * 0.72) - 60))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        room = self._bubble_room()
        for bubble in self.transcript.findChildren(Bubble):
            bubble.fit(room)

    def _add(self, widget: QWidget, *, right: bool = False) -> None:
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        holder = QWidget()
        holder.setLayout(row)
        if isinstance(widget, Bubble):
            widget.fit(self._bubble_room())
            if right:
                row.addStretch(1)
                row.addWidget(widget, 0)
            else:
                row.addWidget(widget, 0)
                row.addStretch(1)
        else:
            row.addWidget(widget, 1)
        self._items.addWidget(holder)

    def _add_approval(self, approval_id: str, tool: str) -> None:
        card = Card(
            f"Approval needed: run “{tool}”?",
            "The reply is waiting for your decision.",
            "approvalCard",
        )
        approve = card.add_button(self.tr("Approve"), f"Approve running {tool}")
        deny = card.add_button(self.tr(self.tr("Deny")), f"Deny running {tool}")
        approve.clicked.connect(lambda: self.approval_decided.emit(approval_id, "approve"))
        deny.clicked.connect(lambda: self.approval_decided.emit(approval_id, "deny"))
        self._approvals[approval_id] = card
        self._add(card)

    def _resolve_approval(self, approval_id: str, decision: str) -> None:
        card = self._approvals.get(approval_id)
        if card is None:
            return
        card.clear_buttons()
        word = {"approve": "Approved", "approved": "Approved", "deny": "Denied", "denied": "Denied"}
        card.detail.setText(word.get(decision, decision.capitalize() or "Decided") + ".")

    def _cancel_open_approvals(self) -> None:
        for card in self._approvals.values():
            if card.buttons.count() > 1:
                card.clear_buttons()
                card.detail.setText(self.tr(self.tr("Cancelled: the reply was stopped.")))

    def _add_memory(self, memory_id: str, reinforced: bool) -> None:
        """One note per memory, however often its event is seen (a replay, a catch-up)."""
        if memory_id in self._memories:
            return
        note = _label(
            self.tr("Memory reinforced") if reinforced else self.tr("Memory formed"), "note"
        )
        note.setAccessibleName(self.tr("Memory"))
        if reinforced:
            self._reinforced.add(memory_id)
        if memory_id:
            self._memories[memory_id] = note
            if self._batch is None:
                self.memories_shown.emit([memory_id])
            else:
                self._batch.append(memory_id)
        self._add(note)

    def _add_artifact(self, artifact_id: str, name: str) -> None:
        card = Card(f"File: {name}", "", "artifactCard")
        open_button = card.add_button(self.tr("Open"), f"Open {name}")
        save_button = card.add_button(self.tr(self.tr("Save…")), f"Save {name}")
        open_button.clicked.connect(lambda: self.artifact_open_requested.emit(artifact_id, name))
        save_button.clicked.connect(lambda: self.artifact_save_requested.emit(artifact_id, name))
        self._add(card)

    def set_enter_sends(self, enter_sends: bool) -> None:
        """Enter sends and Shift+Enter breaks the line (the default), or the other way."""
        self.enter_sends = enter_sends
        self.composer.setPlaceholderText(
            self.tr("Write a message…  (Enter to send, Shift+Enter for a new line)")
            if enter_sends
            else self.tr("Write a message…  (Ctrl+Enter to send)")
        )

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            watched is self.composer
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        ):
            modifiers = event.modifiers()
            if modifiers & Qt.KeyboardModifier.ShiftModifier:
                self.composer.insertPlainText("\n")
                return True
            if self.enter_sends or modifiers & Qt.KeyboardModifier.ControlModifier:
                self._send()
                return True
        return super().eventFilter(watched, event)

    def _send(self) -> None:
        text = self.composer.toPlainText().strip()
        if not text or not self.send_button.isEnabled() or not self.send_button.isVisible():
            return
        self.send_requested.emit(text)

    def clear_composer(self) -> None:
        self.composer.clear()

    def _track_follow(self, value: int) -> None:
        bar = self.scroll_area.verticalScrollBar()
        self._follow = value >= bar.maximum() - 24

    def _keep_at_bottom(self, _minimum: int, maximum: int) -> None:
        if self._follow:
            self.scroll_area.verticalScrollBar().setValue(maximum)

    def _scroll_to_end(self) -> None:
        bar = self.scroll_area.verticalScrollBar()
        bar.setValue(bar.maximum())
