"""`payload_of` reads every event kind of CONTRACT §2 into its typed payload, and whatever a
server sends (unknown types, wrong shapes, missing ids) never makes it raise."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sync import (
    EVENT_TYPES,
    ApprovalRequested,
    ApprovalResolved,
    ArtifactCreated,
    AssistantDelta,
    AssistantMessage,
    Event,
    ImageBlock,
    MemoryFormed,
    Message,
    RunCancelled,
    RunCompleted,
    RunFailed,
    RunStarted,
    SkillPublished,
    TextBlock,
    ToolInvocation,
    UnknownPayload,
    UserMessage,
    payload_of,
)

CONTRACT_TYPES = {
    "run.started",
    "message.user",
    "message.assistant.delta",
    "message.assistant",
    "tool.invocation",
    "approval.requested",
    "approval.resolved",
    "artifact.created",
    "memory.formed",
    "skill.published",
    "run.completed",
    "run.failed",
    "run.cancelled",
}
FIELD_NAMES = [
    "role",
    "content",
    "text",
    "tool",
    "status",
    "output",
    "approval_id",
    "decision",
    "artifact_id",
    "name",
    "memory_id",
    "reinforced",
    "skill_id",
    "revision_id",
    "error",
    "type",
    "media_type",
    "data",
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(FIELD_NAMES) | st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)
datas = st.dictionaries(st.sampled_from(FIELD_NAMES) | st.text(max_size=8), json_values)
ids = st.text(min_size=1, max_size=20)
words = st.text(max_size=30)
extra_keys = st.dictionaries(  # keys the contract does not name, which every parse ignores
    st.text(min_size=1, max_size=6).map(lambda k: "x_" + k),
    st.none() | st.integers() | st.text(max_size=5),
    max_size=2,
)


def event(type_: str, data: Any) -> Event:
    return Event("ses_1", "run_1", 1, type_, "2026-11-30T05:14:13.123456Z", data)


def test_every_contract_event_type_has_a_payload() -> None:
    assert EVENT_TYPES == CONTRACT_TYPES


@given(st.sampled_from(sorted(CONTRACT_TYPES)) | st.text(max_size=20), datas)
def test_arbitrary_json_data_never_raises(type_: str, data: dict[str, Any]) -> None:
    payload = payload_of(event(type_, data))
    if type_ not in CONTRACT_TYPES:
        assert payload == UnknownPayload(type_, "unknown event type")
    if isinstance(payload, ToolInvocation):
        assert isinstance(payload.output_text, str)
    if isinstance(payload, UserMessage | AssistantMessage):
        assert isinstance(payload.message.text, str)


@given(st.sampled_from(sorted(CONTRACT_TYPES)), json_values)
def test_data_that_is_not_an_object_is_unknown(type_: str, data: Any) -> None:
    if isinstance(data, dict):
        return
    assert payload_of(event(type_, data)) == UnknownPayload(type_, "data is not an object")


text_blocks = words.map(lambda t: {"type": "text", "text": t})
image_blocks = st.builds(
    lambda m, d: {"type": "image", "media_type": m, "data": d}, words, st.text(max_size=12)
)


@given(st.sampled_from(["message.user", "message.assistant"]), st.lists(text_blocks | image_blocks))
def test_a_message_round_trips_its_content_blocks(type_: str, blocks: list[dict[str, str]]) -> None:
    role = "user" if type_ == "message.user" else "assistant"
    payload = payload_of(event(type_, {"role": role, "content": blocks}))
    expected = Message(
        role,
        tuple(
            TextBlock(b["text"]) if b["type"] == "text" else ImageBlock(b["media_type"], b["data"])
            for b in blocks
        ),
    )
    assert payload == (UserMessage(expected) if role == "user" else AssistantMessage(expected))
    assert expected.text == "\n".join(
        b["text"] if b["type"] == "text" else "[image]" for b in blocks
    )


def test_a_message_drops_unknown_blocks_and_keeps_the_old_lenient_shapes() -> None:
    odd = {"content": [{"type": "audio"}, 7, {"type": "text", "text": 3}, {"type": "text"}]}
    assert payload_of(event("message.user", odd)) == UserMessage(Message(None, ()))
    plain = payload_of(event("message.assistant", {"content": "just text"}))
    assert plain == AssistantMessage(Message(None, (TextBlock("just text"),)))
    bare = payload_of(event("message.assistant", {"text": "bare"}))
    assert bare == AssistantMessage(Message(None, (TextBlock("bare"),)))


def test_an_image_blocks_bytes_stay_out_of_its_repr() -> None:
    block = ImageBlock("image/png", "c2VjcmV0IHBpeGVscw==")
    assert "c2VjcmV0" not in repr(block)


@given(words, extra_keys)
def test_a_delta_round_trips_its_text(text: str, extra: dict[str, Any]) -> None:
    assert payload_of(event("message.assistant.delta", {**extra, "text": text})) == (
        AssistantDelta(text)
    )


@given(words, words, json_values, extra_keys)
def test_a_tool_invocation_round_trips_tool_status_and_output(
    tool: str, status: str, output: Any, extra: dict[str, Any]
) -> None:
    data = {**extra, "tool": tool, "status": status, "output": output}
    assert payload_of(event("tool.invocation", data)) == ToolInvocation(tool, status, output)


@pytest.mark.parametrize(
    ("output", "shown"),
    [
        ("search ran", "search ran"),
        (None, ""),
        ({"rows": 3}, '{"rows": 3}'),
        ([1, "é"], '[1, "é"]'),
    ],
)
def test_a_tool_output_is_shown_as_text_or_json_never_as_a_python_repr(
    output: Any, shown: str
) -> None:
    assert ToolInvocation("t", "succeeded", output).output_text == shown


@given(ids, words, extra_keys)
def test_an_approval_request_round_trips_its_id_and_tool(
    approval_id: str, tool: str, extra: dict[str, Any]
) -> None:
    data = {**extra, "approval_id": approval_id, "tool": tool}
    assert payload_of(event("approval.requested", data)) == ApprovalRequested(approval_id, tool)


@given(ids, st.sampled_from(["approved", "denied", "cancelled", "approve", "deny"]), extra_keys)
def test_an_approval_resolution_round_trips_its_id_and_decision(
    approval_id: str, decision: str, extra: dict[str, Any]
) -> None:
    data = {**extra, "approval_id": approval_id, "decision": decision}
    assert payload_of(event("approval.resolved", data)) == ApprovalResolved(approval_id, decision)


@given(ids, words, extra_keys)
def test_an_artifact_round_trips_its_id_and_name(
    artifact_id: str, name: str, extra: dict[str, Any]
) -> None:
    data = {**extra, "artifact_id": artifact_id, "name": name}
    assert payload_of(event("artifact.created", data)) == ArtifactCreated(artifact_id, name)


@given(ids, st.booleans(), extra_keys)
def test_a_memory_round_trips_its_id_and_reinforcement(
    memory_id: str, reinforced: bool, extra: dict[str, Any]
) -> None:
    data = {**extra, "memory_id": memory_id, "reinforced": reinforced}
    assert payload_of(event("memory.formed", data)) == MemoryFormed(memory_id, reinforced)


def test_a_memory_is_reinforced_only_when_the_server_says_true() -> None:
    for value in ("false", 1, "true", None):
        payload = payload_of(event("memory.formed", {"memory_id": "mem_1", "reinforced": value}))
        assert payload == MemoryFormed("mem_1", False)
    assert payload_of(event("memory.formed", {"memory_id": "mem_1"})) == MemoryFormed("mem_1")


@given(ids, ids, st.none() | words, extra_keys)
def test_a_skill_round_trips_its_skill_and_revision(
    skill_id: str, revision_id: str, name: str | None, extra: dict[str, Any]
) -> None:
    data = {**extra, "skill_id": skill_id, "revision_id": revision_id, "name": name}
    assert payload_of(event("skill.published", data)) == SkillPublished(skill_id, revision_id, name)


@pytest.mark.parametrize(
    ("type_", "data", "payload"),
    [
        ("run.started", {}, RunStarted()),
        ("run.completed", {}, RunCompleted()),
        ("run.failed", {"error": "scripted failure"}, RunFailed("scripted failure")),
        ("run.failed", {}, RunFailed()),
        ("run.cancelled", {"x": 1}, RunCancelled()),
    ],
)
def test_run_lifecycle_events_have_their_payloads(
    type_: str, data: dict[str, Any], payload: object
) -> None:
    assert payload_of(event(type_, data)) == payload


@pytest.mark.parametrize(
    ("type_", "field"),
    [
        ("approval.requested", "approval_id"),
        ("approval.resolved", "approval_id"),
        ("artifact.created", "artifact_id"),
    ],
)
@pytest.mark.parametrize("value", [None, "", 7, ["apr_1"]])
def test_an_event_without_the_id_a_screen_acts_on_is_unknown(
    type_: str, field: str, value: object
) -> None:
    data = {"tool": "search", "decision": "approved", "name": "a.txt", field: value}
    assert payload_of(event(type_, data)) == UnknownPayload(type_, f"data.{field} missing")


def test_shown_words_that_are_missing_are_none_not_the_string_none() -> None:
    assert payload_of(event("approval.requested", {"approval_id": "apr_1", "tool": None})) == (
        ApprovalRequested("apr_1", None)
    )
    assert payload_of(event("tool.invocation", {"tool": 3})) == ToolInvocation(None, None, None)
    assert payload_of(event("memory.formed", {"memory_id": ""})) == MemoryFormed(None)
