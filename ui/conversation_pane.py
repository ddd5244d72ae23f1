"""The right-hand pane: a conversation's header, transcript and composer.

The pane is a view: it renders events (`sync.Event`) as they come (a whole transcript, then
streamed ones) and reports what the user asks for through signals; the controller does the
work. It reads no event's raw `data`: `sync.payload_of` gives each event a typed payload,
and the pane matches on it (CONTRACT §2): user and assistant messages (assistant deltas
stream into one bubble), tool invocations, approvals with Approve/Deny, artifacts with
Open/Save, memories and skills as quiet notes, and a run's end. The items themselves are
`ui/conversation_items.py`; the composer bar is `ui/composer.py`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from sync import (
    ApprovalRequested,
    ApprovalResolved,
    ArtifactCreated,
    AssistantDelta,
    AssistantMessage,
    Event,
    MemoryFormed,
    RunCancelled,
    RunCompleted,
    RunFailed,
    RunStarted,
    SkillPublished,
    ToolInvocation,
    UnknownPayload,
    UserMessage,
    payload_of,
)
from ui.composer import ComposerBar
from ui.conversation_items import ApprovalCard, ArtifactCard, Bubble, note, text_label, tool_card
from ui.elided_label import ElidedLabel
from ui.failure_words import Failure, Fix
from ui.pane_notice import PaneNotice
from ui.plain import isolate
from ui.relative_time import full_time

log = logging.getLogger(__name__)

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
        self._approvals: dict[str, ApprovalCard] = {}
        self._follow = True
        self._memories: dict[str, QLabel] = {}
        self._reinforced: set[str] = set()
        self._batch: list[str] | None = None  # memory ids seen while rendering a transcript

        self.title = ElidedLabel("")
        self.title.setObjectName("paneTitle")
        self.subtitle = QLabel("")
        self.subtitle.setObjectName("paneSubtitle")
        self.subtitle.setTextFormat(Qt.TextFormat.PlainText)
        self.notice = PaneNotice()  # the banner: a sentence, or a failure with its fixes
        self.banner = self.notice.label
        self.banner_box = self.notice

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

        self.empty = note(self.tr(EMPTY_STATE), "emptyState")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)

        self.composer_bar = ComposerBar()
        self.composer_bar.send_requested.connect(self.send_requested)
        self.composer_bar.stop_requested.connect(self.stop_requested)
        # The bar's widgets, named as the controller and the tests know them.
        self.composer = self.composer_bar.editor
        self.send_button = self.composer_bar.send_button
        self.stop_button = self.composer_bar.stop_button
        self.indicator = self.composer_bar.indicator

        header = QVBoxLayout()
        header.setContentsMargins(24, 14, 24, 10)
        header.setSpacing(2)
        header.addWidget(self.title)
        header.addWidget(self.subtitle)
        header_frame = QFrame()
        header_frame.setObjectName("paneHeader")
        header_frame.setLayout(header)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(header_frame)
        layout.addWidget(self.banner_box)
        layout.addWidget(self.scroll_area, 1)
        layout.addWidget(self.empty, 1)
        layout.addWidget(self.composer_bar)
        self.show_nothing()

    # --- what the pane shows ------------------------------------------------------------

    def show_nothing(self) -> None:
        """No conversation open: the empty state, composer ready for a new conversation."""
        self.session_id = None
        self._reset(
            self.tr("Converge"),
            self.tr("Your conversation history, the same on every device."),
        )
        self.scroll_area.hide()
        self.empty.show()
        self.set_composer_enabled(True)

    def show_new(self) -> None:
        """A new conversation: sending creates it."""
        self.session_id = None
        self._reset(
            self.tr("New conversation"),
            self.tr("Your first message becomes the title."),
        )
        self.scroll_area.hide()
        self.empty.setText(self.tr("Write your first message below."))
        self.empty.show()
        self.set_composer_enabled(True)
        self.composer.setFocus()

    def show_session(self, session_id: str, title: str, updated_at: str) -> None:
        """Open a conversation; its events follow through `set_events`."""
        self.session_id = session_id
        self._reset(title, self._activity(updated_at))
        self.empty.hide()
        self.scroll_area.show()
        self.set_composer_enabled(True)

    def update_header(self, title: str, updated_at: str) -> None:
        self.title.setText(title)
        self.subtitle.setText(self._activity(updated_at))

    def _activity(self, updated_at: str) -> str:
        return self.tr("Last activity {0}").format(full_time(updated_at)) if updated_at else ""

    def show_banner(self, text: str) -> None:
        """One sentence at the top ("" hides it); it replaces a failure shown there."""
        text = self.tr(text) if text else text  # a known sentence is translated, others kept
        self.notice.show_text(text)

    def show_failure(
        self,
        failure: Failure,
        actions: Mapping[Fix, Callable[[], object]] | None = None,
        owner: str = "",
    ) -> None:
        """A failed request named in place, with the buttons that fix it (`ui.pane_notice`)."""
        self.notice.show_failure(failure, actions, owner)

    def clear_failure(self, owner: str | None = None) -> None:
        """An action succeeded: a failure shown at the top goes (only `owner`'s, when
        given); a sentence stays."""
        if self.notice.failure is not None and owner in (None, self.notice.owner):
            self.notice.show_text("")

    def clear_sentence(self) -> None:
        """A sentence at the top ("Loading…", offline) goes; a failure stays."""
        if self.notice.failure is None:
            self.notice.show_text("")

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
        self.composer_bar.set_input_enabled(enabled)

    def set_sending(self, sending: bool) -> None:
        """A message is on its way: the composer waits, keeping its focus."""
        self.composer_bar.set_sending(sending)

    def set_offline(self, offline: bool) -> None:
        """Offline: the composer keeps the draft, Send waits (its tooltip says why)."""
        self.composer_bar.set_offline(offline)

    def set_running(self, running: bool) -> None:
        """While a run is active: Stop instead of Send, and "Replying… 12 s"."""
        self.composer_bar.set_running(running)

    @property
    def enter_sends(self) -> bool:
        return self.composer_bar.enter_sends

    def set_enter_sends(self, enter_sends: bool) -> None:
        """Enter sends and Shift+Enter breaks the line (the default), or the other way."""
        self.composer_bar.set_enter_sends(enter_sends)

    def clear_composer(self) -> None:
        self.composer.clear()

    def set_memory_text(self, memory_id: str, text: str) -> None:
        """Say what a memory holds, under the reply that formed it."""
        label = self._memories.get(memory_id)
        if label is None:
            return
        if memory_id in self._reinforced:
            label.setText(self.tr("Remembered again: “{0}”").format(isolate(text)))
        else:
            label.setText(self.tr("Remembered: “{0}”").format(isolate(text)))

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
        """Draw one event from its typed payload (`sync.payloads`); what this client cannot
        read (an unknown type, a card without its id) is skipped, never drawn half-way."""
        run_id = event.run_id
        match payload_of(event):
            case UserMessage(message=message):
                self._add(Bubble("user", message.text), right=True)
            case AssistantDelta(text=text):
                self._stream(run_id, text)
            case AssistantMessage(message=message):
                bubble = self._streaming.pop(run_id, None)
                if bubble is not None:
                    bubble.set_text(message.text)
                else:
                    self._add(Bubble("assistant", message.text))
            case ToolInvocation() as tool:
                self._add(tool_card(tool))
            case ApprovalRequested() as request:
                self._add_approval(request, run_id)
            case ApprovalResolved(approval_id=approval_id, decision=decision):
                if approval_id in self._approvals:
                    self._approvals[approval_id].resolve(decision)
            case ArtifactCreated() as artifact:
                card = ArtifactCard(artifact)
                card.open_requested.connect(self.artifact_open_requested)
                card.save_requested.connect(self.artifact_save_requested)
                self._add(card)
            case MemoryFormed(memory_id=memory_id, reinforced=reinforced):
                self._add_memory(memory_id, reinforced)
            case SkillPublished():
                self._add(note(self.tr("Skill published")))
            case RunCompleted() | RunFailed() | RunCancelled() as end:
                self._end_run(run_id, end)
            case UnknownPayload(reason=reason):
                log.debug("event #%d not drawn: %s", event.sequence, reason)  # no content
            case RunStarted():
                pass  # nothing to draw: the user's message follows

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

    def _stream(self, run_id: str | None, text: str) -> None:
        """A piece of the reply, appended to the run's streaming bubble."""
        bubble = self._streaming.get(run_id)
        if bubble is None:
            if not text.strip(". \n"):
                return  # a "still working" tick: the indicator says that, not a bubble
            bubble = Bubble("assistant", "")
            self._streaming[run_id] = bubble
            self._add(bubble)
        bubble.set_text(bubble.body.text() + text)  # once begun, dots are the reply's own

    def _end_run(self, run_id: str | None, end: RunCompleted | RunFailed | RunCancelled) -> None:
        """A run's terminal event: its bubble is final, and an approval it still waited for
        loses its buttons (a decision would only get a 409 now)."""
        self._streaming.pop(run_id, None)
        words = self.tr("The reply ended before a decision.")
        if isinstance(end, RunFailed):
            self._add(note(self.tr("The reply failed."), "errorNote"))
        elif isinstance(end, RunCancelled):
            self._add(note(self.tr("Stopped.")))
            words = self.tr("Cancelled: the reply was stopped.")
        for card in self._approvals.values():
            if card.run_id == run_id:
                card.close_unanswered(words)

    def _add_approval(self, request: ApprovalRequested, run_id: str | None) -> None:
        card = ApprovalCard(request, run_id)
        card.decided.connect(self.approval_decided)
        self._approvals[request.approval_id] = card
        self._add(card)

    def _add_memory(self, memory_id: str | None, reinforced: bool) -> None:
        """One note per memory, however often its event is seen (a replay, a catch-up)."""
        if memory_id in self._memories:
            return
        label = text_label(
            self.tr("Memory reinforced") if reinforced else self.tr("Memory formed"), "note"
        )
        label.setAccessibleName(self.tr("Memory"))
        if memory_id:
            if reinforced:
                self._reinforced.add(memory_id)
            self._memories[memory_id] = label
            if self._batch is None:
                self.memories_shown.emit([memory_id])
            else:
                self._batch.append(memory_id)
        self._add(label)

    def _track_follow(self, value: int) -> None:
        bar = self.scroll_area.verticalScrollBar()
        self._follow = value >= bar.maximum() - 24

    def _keep_at_bottom(self, _minimum: int, maximum: int) -> None:
        if self._follow:
            self.scroll_area.verticalScrollBar().setValue(maximum)

    def _scroll_to_end(self) -> None:
        bar = self.scroll_area.verticalScrollBar()
        bar.setValue(bar.maximum())
