"""The pane draws each event kind from its typed payload (`sync.wire.payloads`), and an event from
a buggy server never crashes or blanks the transcript."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtWidgets import QApplication, QPushButton

from sync import Event
from ui.pane.pane import ConversationPane
from ui.pane.transcript_model import TranscriptModel
from ui.text.plain import isolate

_sequence = iter(range(1, 1_000_000))


def event(type_: str, data: Any = None, run_id: str | None = "run_1") -> Event:
    return Event("ses_1", run_id, next(_sequence), type_, "2026-11-30T05:14:13.123456Z", data or {})


def user(text: str) -> Event:
    return event("message.user", {"role": "user", "content": [{"type": "text", "text": text}]})


@pytest.fixture
def pane(qapp: QApplication) -> Iterator[ConversationPane]:
    widget = ConversationPane()
    widget.show_session("ses_1", "Trip", "")
    try:
        yield widget
    finally:
        widget.close()
        widget.deleteLater()


def bubbles(pane: ConversationPane) -> list[tuple[str, str]]:
    """The messages, as the model gives them (kind, display text)."""
    model = pane.model
    rows = [model.index(row, 0) for row in range(model.rowCount())]
    return [
        (index.data(TranscriptModel.KindRole), index.data())
        for index in rows
        if index.data(TranscriptModel.KindRole) in ("user", "assistant")
    ]


def detail(pane: ConversationPane, item: object) -> str:
    """A card's second line, through the model."""
    for row in range(pane.model.rowCount()):
        index = pane.model.index(row, 0)
        if index.data(TranscriptModel.ItemRole) is item:
            return str(index.data(TranscriptModel.DetailRole))
    raise AssertionError("no such row")


def buttons(pane: ConversationPane) -> list[str]:
    """The transcript's buttons, once the ones a card let go of are really gone."""
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    return [b.text() for b in pane.transcript.findChildren(QPushButton)]


def test_a_transcript_draws_the_users_message_and_the_whole_reply(
    pane: ConversationPane,
) -> None:
    reply = {"role": "assistant", "content": [{"type": "text", "text": "Echo: hi"}]}
    pane.set_events(
        [
            event("run.started"),
            user("hi"),
            event("message.assistant.delta", {"text": "Echo"}),
            event("message.assistant", reply),
            event("run.completed"),
        ]
    )
    assert bubbles(pane) == [("user", "hi"), ("assistant", "Echo: hi")]


def test_a_reply_streams_its_dots_once_it_has_begun(pane: ConversationPane) -> None:
    pane.append_event(user("Wait..."))
    pane.append_event(event("message.assistant.delta", {"text": "."}))  # a /wait tick
    assert bubbles(pane) == [("user", "Wait...")]
    for chunk in ("Echo:", " Wait", "..."):
        pane.append_event(event("message.assistant.delta", {"text": chunk}))
    assert bubbles(pane) == [("user", "Wait..."), ("assistant", "Echo: Wait...")]


def test_an_approval_is_decided_from_its_card_then_resolved(pane: ConversationPane) -> None:
    decided: list[tuple[str, str]] = []
    pane.approval_decided.connect(lambda *args: decided.append(args))
    pane.append_event(event("approval.requested", {"approval_id": "apr_1", "tool": "search"}))
    next(b for b in pane.transcript.findChildren(QPushButton) if b.text() == "Approve").click()
    assert decided == [("apr_1", "approve")]
    pane.append_event(event("approval.resolved", {"approval_id": "apr_1", "decision": "approved"}))
    assert buttons(pane) == []
    assert detail(pane, pane._approvals["apr_1"]) == "Approved."


@pytest.mark.parametrize(
    ("terminal", "words"),
    [
        ("run.cancelled", "Cancelled: the reply was stopped."),
        ("run.failed", "The reply ended before a decision."),
    ],
)
def test_a_run_that_ends_while_waiting_for_approval_takes_its_buttons_away(
    pane: ConversationPane, terminal: str, words: str
) -> None:
    pane.append_event(event("approval.requested", {"approval_id": "apr_1", "tool": "search"}))
    assert buttons(pane) == ["Approve", "Deny"]
    pane.append_event(event(terminal, {"error": "the server process died"}))
    assert buttons(pane) == []
    assert detail(pane, pane._approvals["apr_1"]) == words


@pytest.mark.parametrize(
    ("type_", "data"),
    [
        ("approval.requested", {"approval_id": None, "tool": "search"}),
        ("artifact.created", {"artifact_id": None, "name": "notes.txt"}),
        ("artifact.created", {"name": "notes.txt"}),
    ],
)
def test_an_event_without_the_id_its_buttons_need_offers_no_buttons(
    pane: ConversationPane, type_: str, data: dict[str, Any]
) -> None:
    pane.append_event(event(type_, data))
    assert buttons(pane) == []
    assert "None" not in pane._approvals


@pytest.mark.parametrize(
    ("data", "heading", "output"),
    [
        ({"tool": "search", "status": "succeeded", "output": "search ran"}, None, "search ran"),
        ({"tool": "query", "status": "succeeded", "output": {"rows": 3}}, None, '{"rows": 3}'),
        ({"tool": None, "status": "succeeded"}, f"Tool: tool — {isolate('succeeded')}", None),
    ],
)
def test_a_tool_card_shows_its_output_as_text_or_json(
    pane: ConversationPane, data: dict[str, Any], heading: str | None, output: str | None
) -> None:
    pane.append_event(event("tool.invocation", data))
    card = pane.model.index(0, 0)
    assert card.data(TranscriptModel.KindRole) == "tool"
    if heading is not None:
        assert card.data() == heading
    assert (card.data(TranscriptModel.DetailRole) or None) == output


def test_an_artifact_card_opens_and_saves_its_file(pane: ConversationPane) -> None:
    asked: list[tuple[str, str, str]] = []
    pane.artifact_open_requested.connect(lambda a, n: asked.append(("open", a, n)))
    pane.artifact_save_requested.connect(lambda a, n: asked.append(("save", a, n)))
    pane.append_event(event("artifact.created", {"artifact_id": "art_1", "name": "notes.txt"}))
    for button in pane.transcript.findChildren(QPushButton):
        button.click()
    assert asked == [("open", "art_1", "notes.txt"), ("save", "art_1", "notes.txt")]


def test_a_transcripts_memories_are_looked_up_together_once_each(pane: ConversationPane) -> None:
    shown: list[list[str]] = []
    pane.memories_shown.connect(shown.append)
    formed = event("memory.formed", {"memory_id": "mem_1", "reinforced": False})
    again = event("memory.formed", {"memory_id": "mem_2", "reinforced": True})
    pane.set_events([formed, again, formed])
    assert shown == [["mem_1", "mem_2"]]
    pane.set_memory_text("mem_2", "green tea")
    row = pane.model.row_of(pane._memories["mem_2"])
    assert pane.model.index(row, 0).data() == f"Remembered again: “{isolate('green tea')}”"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)
KEYS = ["content", "text", "tool", "status", "output", "approval_id", "artifact_id", "name"]
TYPES = ["message.user", "message.assistant", "message.assistant.delta", "tool.invocation"]
TYPES += ["approval.requested", "approval.resolved", "artifact.created", "memory.formed"]
TYPES += ["skill.published", "run.failed", "run.cancelled", "run.completed", "run.started"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(TYPES) | st.text(max_size=12),
            st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), JSON, max_size=4),
            st.none() | st.sampled_from(["run_1", "run_2"]),
        ),
        max_size=6,
    )
)
def test_events_from_a_buggy_server_never_crash_or_blank_the_transcript(
    qapp: QApplication, junk: list[tuple[str, dict[str, Any], str | None]]
) -> None:
    pane = ConversationPane()
    try:
        pane.show_session("ses_1", "Trip", "")
        pane.set_events([user("kept"), *(event(t, d, r) for t, d, r in junk)])
        for type_, data, run_id in junk:
            pane.append_event(event(type_, data, run_id))
        assert bubbles(pane)[0] == ("user", "kept")
    finally:
        pane.deleteLater()
