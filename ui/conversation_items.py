"""The widgets of a transcript: message bubbles, cards (tool, approval, file) and notes.

Each card is built from its typed payload (`sync.payloads`), so the pane only decides where
an item goes; what an item says and which buttons it offers live here. Object names are the
stylesheet's hooks (`ui/style.py`). Strings use the pane's translation context.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QVBoxLayout

from sync import ApprovalRequested, ArtifactCreated, ToolInvocation
from ui.plain import isolate


def tr(text: str) -> str:
    """A known sentence in the user's language (context "ConversationPane")."""
    return QCoreApplication.translate("ConversationPane", text)


def text_label(text: str, name: str, *, selectable: bool = True) -> QLabel:
    """A word-wrapped plain-text label (never rich text: the words are the server's)."""
    label = QLabel(text)
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    if selectable:
        # Mouse only: keyboard selection would make every bubble a Tab stop.
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
    return label


def note(text: str, name: str = "note") -> QLabel:
    """A quiet line in the transcript ("Stopped.", "Skill published")."""
    return text_label(text, name, selectable=False)


class Bubble(QFrame):
    """One message: "You" on the right, the assistant on the left.

    A word-wrapped QLabel asks for a narrow width, so a bubble sets its own: the text's
    natural width, capped by what the transcript has room for (`fit`)."""

    def __init__(self, role: str, text: str) -> None:
        super().__init__()
        self.role = role
        self.setObjectName("userBubble" if role == "user" else "assistantBubble")
        self.body = text_label(text, "bubbleText")
        self.body.setAccessibleName(
            tr("Your message") if role == "user" else tr("Assistant's reply")
        )
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
        self.heading = text_label(heading, "cardHeading")
        self.detail = text_label(detail, "cardDetail")
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

    def set_detail(self, text: str) -> None:
        self.detail.setText(text)
        self.detail.setVisible(bool(text))


def tool_card(payload: ToolInvocation) -> Card:
    """A tool that ran: its name and status, then its output (JSON shown as JSON)."""
    # The names are the server's, inside our words: isolated (`ui.plain`).
    tool = isolate(payload.tool) if payload.tool else "tool"
    status = isolate(payload.status) if payload.status else ""
    heading = f"{tr('Tool')}: {tool} — {status}".rstrip(" —")
    card = Card(heading, "", "toolCard")
    output = payload.output_text
    if output:
        card.detail.setText(output)
        card.detail.setObjectName("toolOutput")
        card.detail.show()
    return card


DECISION_WORDS = {"approve": "Approved", "approved": "Approved", "deny": "Denied"}
DECISION_WORDS |= {"denied": "Denied", "cancelled": "Cancelled"}


class ApprovalCard(Card):
    """A tool waiting for the user's decision: Approve and Deny, until the approval is
    resolved or its run ends without one (then no button is left to post a stale decision)."""

    decided = Signal(str, str)  # approval id, "approve" | "deny"

    def __init__(self, payload: ApprovalRequested, run_id: str | None) -> None:
        tool = isolate(payload.tool) if payload.tool else tr("a tool")
        super().__init__(
            tr("Approval needed: run “{0}”?").format(tool),
            tr("The reply is waiting for your decision."),
            "approvalCard",
        )
        self.approval_id = payload.approval_id
        self.run_id = run_id
        approve = self.add_button(tr("Approve"), tr("Approve running {0}").format(tool))
        deny = self.add_button(tr("Deny"), tr("Deny running {0}").format(tool))
        approve.clicked.connect(lambda: self.decided.emit(self.approval_id, "approve"))
        deny.clicked.connect(lambda: self.decided.emit(self.approval_id, "deny"))

    @property
    def is_open(self) -> bool:
        """Still offering Approve and Deny."""
        return self.buttons.count() > 1

    def resolve(self, decision: str | None) -> None:
        self.clear_buttons()
        word = DECISION_WORDS.get(decision or "", (decision or "").capitalize() or "Decided")
        self.set_detail(tr(word) + ".")

    def close_unanswered(self, words: str) -> None:
        """The run ended while this waited: say so, once."""
        if self.is_open:
            self.clear_buttons()
            self.set_detail(words)


class ArtifactCard(Card):
    """A file the reply made: Open and Save…"""

    open_requested = Signal(str, str)  # artifact id, name
    save_requested = Signal(str, str)

    def __init__(self, payload: ArtifactCreated) -> None:
        name = payload.name or "file"
        super().__init__(tr("File: {0}").format(isolate(name)), "", "artifactCard")
        self.artifact_id = payload.artifact_id
        self.name = name
        open_button = self.add_button(tr("Open"), tr("Open {0}").format(name))
        save_button = self.add_button(tr("Save…"), tr("Save {0}").format(name))
        open_button.clicked.connect(lambda: self.open_requested.emit(self.artifact_id, self.name))
        save_button.clicked.connect(lambda: self.save_requested.emit(self.artifact_id, self.name))
