"""Events into transcript rows: the pane's reading of a conversation's log (CONTRACT §2).

`TranscriptBuilder` matches each event's typed payload (`sync.payload_of`): user and
assistant messages (assistant deltas stream into one row), tool invocations, approvals with
Approve/Deny, files with Open/Save, memories and skills as quiet notes, and a run's end.
It never reads an event's raw `data`; what this client cannot read (an unknown type, a card
without its id) is skipped, never drawn half-way.

A whole transcript is opened in steps, none of them long (decision 0178): the events are
folded into rows in slices of `SLICE` events, the pass yielding to the event loop between
slices (nothing is shown yet); then the model is reset to the last `TAIL` rows, so the view
shows the newest messages at once, at its bottom; then the older rows go in above them in
chunks (row inserts at the top, each chunk as large as what is already in, so a 20,000-row
transcript takes about nine). Opening another transcript or clearing cancels what is left.
An event appended while the events are still being folded is queued behind them; once
they are folded, it goes to the model's end (the newest row), the older rows still coming
in above. `on_loaded` is told when the last row is in. Later events are row inserts, and a
delta changes only its own row.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterable

from PySide6.QtCore import QCoreApplication, QTimer

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
from ui.pane.items import (
    approval_item,
    artifact_item,
    decision_words,
    message_item,
    note_item,
    tool_item,
)
from ui.pane.transcript_model import Kind, TranscriptItem, TranscriptModel
from ui.text.plain import isolate

log = logging.getLogger(__name__)

SLICE = 1_000  # events folded into rows per step of an open (a short step)
TAIL = 40  # rows shown at once when a transcript opens: more than a screenful
FIRST_PAINT_MS = 16  # the view lays out and paints those before older rows come in
#: A streaming reply keeps at most this many characters; the rest of its pieces is dropped
#: and the row says so, until the whole message comes (it is then shown as any message).
#: Each piece lays the row's document out again, so this bounds what one piece costs.
MAX_STREAMED_CHARS = 20_000


class TranscriptBuilder:
    """Folds one conversation's events into `model`'s rows."""

    def __init__(
        self,
        model: TranscriptModel,
        on_loaded: Callable[[list[str]], None] | None = None,
    ) -> None:
        self.model = model
        self.on_loaded = on_loaded  # told (with the memory ids shown) when all rows are in
        self.streaming: dict[str | None, TranscriptItem] = {}
        self.approvals: dict[str, TranscriptItem] = {}
        self.memories: dict[str, TranscriptItem] = {}
        self.reinforced: set[str] = set()
        self._pending: list[TranscriptItem] | None = None  # rows of a transcript being read
        self._todo: deque[Event] = deque()  # its events not folded yet
        self._older: list[TranscriptItem] = []  # its rows folded but not in the model yet
        self._wanted: list[str] = []
        self._step = QTimer()
        self._step.setSingleShot(True)
        self._step.setInterval(0)
        self._step.timeout.connect(self._next)

    @property
    def loading(self) -> bool:
        """Whether an open is still under way (rows still to come in above)."""
        return self._pending is not None or bool(self._older)

    def clear(self) -> None:
        self._step.stop()  # what is left of an open is cancelled
        self._pending, self._older, self._wanted = None, [], []
        self._todo.clear()
        self.streaming.clear()
        self.approvals.clear()
        self.memories.clear()
        self.reinforced.clear()
        self.model.reset([])

    def set_events(self, events: Iterable[Event]) -> None:
        """Open a whole transcript, in steps (its first one now); `on_loaded` follows."""
        self.clear()
        self._todo.extend(events)
        self._pending = []
        self._next()

    def _next(self) -> None:
        """One step of an open: fold a slice of events, or show rows."""
        if self._pending is not None:
            for _ in range(min(SLICE, len(self._todo))):
                self._wanted.extend(self._fold(self._todo.popleft()))
            if self._todo:
                self._step.start(0)
                return
            rows, self._pending = self._pending, None
            self._older = rows[: max(0, len(rows) - TAIL)]
            self.model.reset(rows[len(self._older) :])  # the newest rows, at the bottom
            if self._older:
                self._step.start(FIRST_PAINT_MS)
                return
        elif self._older:
            count = max(TAIL, self.model.rowCount())
            chunk, self._older = self._older[-count:], self._older[:-count]
            self.model.prepend(chunk)
        if self._older:
            self._step.start(0)
        elif self.on_loaded is not None:
            wanted, self._wanted = self._wanted, []
            self.on_loaded(wanted)

    def append_event(self, event: Event) -> list[str]:
        """One event; returns the memory ids it newly shows (their words are looked up)."""
        if self._pending is not None:
            self._todo.append(event)  # an open is folding older events: after them
            return []
        return self._fold(event)

    def _fold(self, event: Event) -> list[str]:
        run_id, at = event.run_id, event.created_at
        match payload_of(event):
            case UserMessage(message=message):
                self._add(message_item(Kind.USER, message.text, at, run_id))
            case AssistantDelta(text=text):
                self._stream(run_id, text, at)
            case AssistantMessage(message=message):
                item = self.streaming.pop(run_id, None)
                if item is not None:
                    self._set_text(item, message.text, truncated=False)  # rendered whole, once
                    self._end_stream(item)
                else:
                    self._add(message_item(Kind.ASSISTANT, message.text, at, run_id))
            case ToolInvocation() as tool:
                self._add(tool_item(tool, at))
            case ApprovalRequested() as request:
                item = approval_item(request, run_id, at)
                self.approvals[request.approval_id] = item
                self._add(item)
            case ApprovalResolved(approval_id=approval_id, decision=decision):
                if approval_id in self.approvals:
                    item = self.approvals[approval_id]
                    self._set_detail(item, decision_words(decision), buttons=False)
            case ArtifactCreated() as artifact:
                self._add(artifact_item(artifact, at))
            case MemoryFormed(memory_id=memory_id, reinforced=reinforced):
                return self._add_memory(memory_id, reinforced, at)
            case SkillPublished():
                self._add(
                    note_item(QCoreApplication.translate("ConversationPane", "Skill published"), at)
                )
            case RunCompleted() | RunFailed() | RunCancelled() as end:
                self._end_run(run_id, end, at)
            case UnknownPayload(reason=reason):
                log.debug("event #%d not drawn: %s", event.sequence, reason)  # no content
            case RunStarted():
                pass  # nothing to draw: the user's message follows
        return []

    def set_memory_text(self, memory_id: str, text: str) -> None:
        """Say what a memory holds, under the reply that formed it."""
        item = self.memories.get(memory_id)
        if item is None:
            return
        if memory_id in self.reinforced:
            words = QCoreApplication.translate(
                "ConversationPane", "Remembered again: “{0}”"
            ).format(isolate(text))
        else:
            words = QCoreApplication.translate("ConversationPane", "Remembered: “{0}”").format(
                isolate(text)
            )
        self._set_text(item, words)

    def close_cards(self) -> None:
        """The conversation is gone: no button is left to act on it."""
        for item in [*self._older, *(self._pending or ())]:
            item.buttons = False
        for row in range(self.model.rowCount()):
            item = self.model.item(row)
            if item.buttons:
                self.model.set_detail(item, item.detail, buttons=False)

    # --- internals ----------------------------------------------------------------------

    def _add(self, item: TranscriptItem) -> None:
        if self._pending is not None:
            self._pending.append(item)
        else:
            self.model.append(item)

    def _set_text(self, item: TranscriptItem, text: str, truncated: bool | None = None) -> None:
        if self._pending is not None:
            cut = item.truncated if truncated is None else truncated
            if text != item.text or cut != item.truncated:
                item.text, item.truncated = text, cut
                item.version += 1
        else:
            self.model.set_text(item, text, truncated=truncated)

    def _end_stream(self, item: TranscriptItem) -> None:
        if self._pending is not None:
            if item.streaming:
                item.streaming = False
                item.version += 1
        else:
            self.model.end_stream(item)

    def _set_detail(self, item: TranscriptItem, detail: str, *, buttons: bool) -> None:
        if self._pending is not None:
            item.detail, item.buttons = detail, buttons
            item.version += 1
        else:
            self.model.set_detail(item, detail, buttons=buttons)

    def _stream(self, run_id: str | None, text: str, at: str) -> None:
        """A piece of the reply, appended to the run's streaming row."""
        item = self.streaming.get(run_id)
        if item is None:
            if not text.strip(". \n"):
                return  # a "still working" tick: the indicator says that, not a bubble
            item = message_item(Kind.ASSISTANT, "", at, run_id)
            item.streaming = True
            self.streaming[run_id] = item
            self._add(item)
        if item.truncated:
            return  # past the bound: the rest of the reply is not kept
        room = MAX_STREAMED_CHARS - len(item.text)
        # Once begun, dots are the reply's own.
        self._set_text(item, item.text + text[:room], len(text) > room)

    def _end_run(
        self, run_id: str | None, end: RunCompleted | RunFailed | RunCancelled, at: str
    ) -> None:
        """A run's terminal event: its reply is final, and an approval it still waited for
        loses its buttons (a decision would only get a 409 now)."""
        item = self.streaming.pop(run_id, None)
        if item is not None:
            self._end_stream(item)
        words = QCoreApplication.translate("ConversationPane", "The reply ended before a decision.")
        if isinstance(end, RunFailed):
            self._add(
                note_item(
                    QCoreApplication.translate("ConversationPane", "The reply failed."),
                    at,
                    Kind.ERROR,
                )
            )
        elif isinstance(end, RunCancelled):
            self._add(note_item(QCoreApplication.translate("ConversationPane", "Stopped."), at))
            words = QCoreApplication.translate(
                "ConversationPane", "Cancelled: the reply was stopped."
            )
        for item in self.approvals.values():
            if item.run_id == run_id and item.buttons:
                self._set_detail(item, words, buttons=False)

    def _add_memory(self, memory_id: str | None, reinforced: bool, at: str) -> list[str]:
        """One note per memory, however often its event is seen (a replay, a catch-up)."""
        if memory_id in self.memories:
            return []
        words = (
            QCoreApplication.translate("ConversationPane", "Memory reinforced")
            if reinforced
            else QCoreApplication.translate("ConversationPane", "Memory formed")
        )
        item = note_item(words, at, Kind.MEMORY)
        self._add(item)
        if not memory_id:
            return []
        if reinforced:
            self.reinforced.add(memory_id)
        self.memories[memory_id] = item
        return [memory_id]
