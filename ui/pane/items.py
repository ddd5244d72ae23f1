"""What each transcript row says, and the few real widgets a row may carry: its buttons.

Rows are built from their typed payloads (`sync.wire.payloads`) as `TranscriptItem`s, so the
pane only decides when a row comes; what a card says lives here. Names from the server are
isolated inside our sentences (`ui.text.plain.isolate`). Strings use the pane's translation
context.

The buttons of an approval (Approve, Deny) and of a file (Open, Save…) are real
`QPushButton`s on a small bar the view places over its card (`QAbstractItemView.
setIndexWidget`, decision 0172): such rows are few, and real buttons keep the keyboard,
focus and accessible names for free. Every other row is painted.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QWidget

from sync import ApprovalRequested, ArtifactCreated, ToolInvocation
from ui.pane.transcript_model import Kind, TranscriptItem, tr
from ui.text.plain import isolate

DECISION_WORDS = {"approve": "Approved", "approved": "Approved", "deny": "Denied"}
DECISION_WORDS |= {"denied": "Denied", "cancelled": "Cancelled"}


def text_label(text: str, name: str) -> QLabel:
    """A word-wrapped plain-text label (never rich text: the words may be the server's);
    the pane's banner and empty state."""
    label = QLabel(text)
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
    return label


def note(text: str, name: str = "note") -> QLabel:
    """A quiet line outside the transcript (the empty state)."""
    return text_label(text, name)


def message_item(kind: Kind, text: str, created_at: str, run_id: str | None) -> TranscriptItem:
    return TranscriptItem(kind, text, created_at=created_at, run_id=run_id)


def note_item(text: str, created_at: str = "", kind: Kind = Kind.NOTE) -> TranscriptItem:
    """A quiet line ("Stopped.", "Skill published")."""
    return TranscriptItem(kind, text, created_at=created_at)


def tool_item(payload: ToolInvocation, created_at: str = "") -> TranscriptItem:
    """A tool that ran: its name and status, then its output (JSON shown as JSON)."""
    tool = isolate(payload.tool) if payload.tool else "tool"
    status = isolate(payload.status) if payload.status else ""
    heading = f"{QCoreApplication.translate('ConversationPane', 'Tool')}: {tool} — {status}".rstrip(
        " —"
    )
    return TranscriptItem(Kind.TOOL, heading, payload.output_text or "", created_at)


def approval_item(
    payload: ApprovalRequested, run_id: str | None, created_at: str = ""
) -> TranscriptItem:
    """A tool waiting for the user's decision: Approve and Deny until it is resolved."""
    tool = (
        isolate(payload.tool)
        if payload.tool
        else QCoreApplication.translate("ConversationPane", "a tool")
    )
    return TranscriptItem(
        Kind.APPROVAL,
        QCoreApplication.translate("ConversationPane", "Approval needed: run “{0}”?").format(tool),
        QCoreApplication.translate("ConversationPane", "The reply is waiting for your decision."),
        created_at,
        run_id=run_id,
        key=payload.approval_id,
        name=tool,
        buttons=True,
    )


def decision_words(decision: str | None) -> str:
    word = DECISION_WORDS.get(decision or "", (decision or "").capitalize() or "Decided")
    return tr(word) + "."


def artifact_item(payload: ArtifactCreated, created_at: str = "") -> TranscriptItem:
    """A file the reply made: Open and Save…"""
    name = payload.name or "file"
    return TranscriptItem(
        Kind.ARTIFACT,
        QCoreApplication.translate("ConversationPane", "File: {0}").format(isolate(name)),
        created_at=created_at,
        key=payload.artifact_id,
        name=name,
        buttons=True,
    )


class CardButtons(QWidget):
    """The buttons of one card, right-aligned; `chosen` says which (the card's key and
    the button's action)."""

    chosen = Signal(str, str, str)  # key, name, action

    def __init__(self, item: TranscriptItem, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("cardButtons")
        self.key = item.key or ""
        self.name = item.name
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(8)
        row.addStretch(1)
        if item.kind == Kind.APPROVAL:
            actions = [
                (
                    "approve",
                    QCoreApplication.translate("ConversationPane", "Approve"),
                    QCoreApplication.translate("ConversationPane", "Approve running {0}").format(
                        item.name
                    ),
                ),
                (
                    "deny",
                    QCoreApplication.translate("ConversationPane", "Deny"),
                    QCoreApplication.translate("ConversationPane", "Deny running {0}").format(
                        item.name
                    ),
                ),
            ]
        else:
            actions = [
                (
                    "open",
                    QCoreApplication.translate("ConversationPane", "Open"),
                    QCoreApplication.translate("ConversationPane", "Open {0}").format(item.name),
                ),
                (
                    "save",
                    QCoreApplication.translate("ConversationPane", "Save…"),
                    QCoreApplication.translate("ConversationPane", "Save {0}").format(item.name),
                ),
            ]
        for action, text, accessible in actions:
            button = QPushButton(text)
            button.setAccessibleName(accessible)
            button.setAutoDefault(False)
            button.clicked.connect(lambda _=False, a=action: self._choose(a))
            row.addWidget(button)

    def _choose(self, action: str) -> None:
        self.chosen.emit(self.key, self.name, action)
