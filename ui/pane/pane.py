"""The right-hand pane: a conversation's header, transcript and composer.

The pane is a view: it renders events (`sync.Event`) as they come (a whole transcript, then
streamed ones) and reports what the user asks for through signals; the controller does the
work. It reads no event's raw `data`: `sync.payload_of` gives each event a typed payload,
and the pane's `TranscriptBuilder` matches on it (CONTRACT §2,
`ui/pane/transcript_events.py`) into the rows of a `TranscriptModel`, shown by a virtualised
`TranscriptView` (model/view: nothing is a widget per message; `ui/pane/transcript_view.py`,
`ui/pane/transcript_delegate.py`). The composer bar is `ui/pane/composer.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from sync import Event
from ui.pane.composer import ComposerBar
from ui.pane.copied_flash import CopiedFlash
from ui.pane.items import note
from ui.pane.notice import PaneNotice
from ui.pane.transcript_events import TranscriptBuilder
from ui.pane.transcript_model import TranscriptItem, TranscriptModel
from ui.pane.transcript_view import TranscriptView
from ui.sidebar.relative_time import full_time
from ui.window.elided_label import ElidedLabel
from ui.window.failure_words import Failure, Fix

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
    transcript_loaded = Signal()  # an open's last (oldest) row is in the model

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("conversationPane")
        self.session_id: str | None = None
        self.model = TranscriptModel(self)
        self._builder = TranscriptBuilder(self.model, self._loaded)
        # The rows the controller and the tests look up: approvals and memories by id.
        self._approvals: dict[str, TranscriptItem] = self._builder.approvals
        self._memories: dict[str, TranscriptItem] = self._builder.memories

        self.title = ElidedLabel("")
        self.title.setObjectName("paneTitle")
        self.subtitle = QLabel("")
        self.subtitle.setObjectName("paneSubtitle")
        self.subtitle.setTextFormat(Qt.TextFormat.PlainText)
        self.notice = PaneNotice()  # the banner: a sentence, or a failure with its fixes
        self.banner = self.notice.label
        self.banner_box = self.notice

        self.transcript = TranscriptView(self.model)
        self.transcript.card_action.connect(self._card_action)
        self.copied = CopiedFlash(self.transcript)  # "Copied" after a code block's Copy

        self.empty = note(self.tr(EMPTY_STATE), "emptyState")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)

        self.composer_bar = ComposerBar()
        self.composer_bar.send_requested.connect(self.send_requested)
        self.composer_bar.send_requested.connect(self.transcript.follow_bottom)
        self.composer_bar.stop_requested.connect(self.stop_requested)
        # The bar's widgets, named as the controller and the tests know them.
        self.composer = self.composer_bar.editor
        self.send_button = self.composer_bar.send_button
        self.stop_button = self.composer_bar.stop_button
        self.indicator = self.composer_bar.indicator
        # Stop by keyboard from anywhere in the window, without tabbing to the button.
        self.stop_action = QAction(self.tr("Stop the reply"), self)
        self.stop_action.setShortcut(QKeySequence("Ctrl+."))
        self.stop_action.triggered.connect(self._stop_by_key)
        self.addAction(self.stop_action)

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
        layout.addWidget(self.transcript, 1)
        layout.addWidget(self.empty, 1)
        layout.addWidget(self.composer_bar)
        self.show_nothing()

    def _stop_by_key(self) -> None:
        if self.stop_button.isVisible() and self.stop_button.isEnabled():
            self.stop_button.click()

    # --- what the pane shows ------------------------------------------------------------

    def show_nothing(self) -> None:
        """No conversation open: the empty state, composer ready for a new conversation."""
        self.session_id = None
        self._reset(
            self.tr("Converge"),
            self.tr("Your conversation history, the same on every device."),
        )
        self.transcript.hide()
        self.empty.show()
        self.set_composer_enabled(True)

    def show_new(self) -> None:
        """A new conversation: sending creates it."""
        self.session_id = None
        self._reset(
            self.tr("New conversation"),
            self.tr("Your first message becomes the title."),
        )
        self.transcript.hide()
        self.empty.setText(self.tr("Write your first message below."))
        self.empty.show()
        self.set_composer_enabled(True)
        self.composer.setFocus()

    def show_session(self, session_id: str, title: str, updated_at: str) -> None:
        """Open a conversation; its events follow through `set_events`."""
        self.session_id = session_id
        self._reset(title, self._activity(updated_at))
        self.empty.hide()
        self.transcript.show()
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
        """A failed request named in place, with the buttons that fix it (`ui.pane.notice`)."""
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
        self._builder.close_cards()  # its files are gone from the server and the cache

    def set_composer_enabled(self, enabled: bool) -> None:
        self.composer_bar.set_input_enabled(enabled)

    def set_sending(self, sending: bool) -> None:
        """A message is on its way: the composer waits, keeping its focus."""
        self.composer_bar.set_sending(sending)

    def set_offline(self, offline: bool) -> None:
        """Offline: the composer keeps the draft, Send waits (its tooltip says why)."""
        self.composer_bar.set_offline(offline)

    def set_running(self, running: bool) -> None:
        """While a run is active: Stop instead of Send, and "Replying… N s"."""
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
        self._builder.set_memory_text(memory_id, text)

    # --- events -------------------------------------------------------------------------

    def set_events(self, events: Iterable[Event]) -> None:
        """Show a whole transcript, in steps (decision 0178): its newest rows at once, at the
        bottom, then the older ones above them; `transcript_loaded` says when all are in."""
        self._builder.set_events(events)

    @property
    def loading(self) -> bool:
        """Whether a transcript's older rows are still coming in."""
        return self._builder.loading

    def _loaded(self, wanted: list[str]) -> None:
        if wanted:
            self.memories_shown.emit(wanted)  # one lookup for the whole transcript
        self.transcript_loaded.emit()

    def append_event(self, event: Event) -> None:
        """Show one more event (a row insert, or a streamed delta into its own row)."""
        wanted = self._builder.append_event(event)
        if wanted:
            self.memories_shown.emit(wanted)

    def messages(self) -> list[tuple[str, str]]:
        """The transcript's messages as (kind, plain text): what a reader sees, in order."""
        return [
            (str(item.kind), item.plain)
            for item in self.model.items()
            if item.kind in ("user", "assistant")
        ]

    # --- internals ----------------------------------------------------------------------

    def _reset(self, title: str, subtitle: str) -> None:
        self.title.setText(title)
        self.subtitle.setText(subtitle)
        self.show_banner("")
        self.empty.setText(self.tr(EMPTY_STATE))
        self.set_running(False)
        self._clear_items()

    def _clear_items(self) -> None:
        self._builder.clear()

    def _card_action(self, key: str, name: str, action: str) -> None:
        """A card's button: a decision on an approval, or a file to open or save."""
        if action in ("approve", "deny"):
            self.approval_decided.emit(key, action)
        elif action == "open":
            self.artifact_open_requested.emit(key, name)
        elif action == "save":
            self.artifact_save_requested.emit(key, name)
