"""The `data` of each event kind (CONTRACT §2) as a typed value, parsed in one place.

An event's `data` is whatever the server wrote; screens (the conversation pane, the Markdown
export) should not each dig through dicts and guess. `payload_of(event)` turns an `Event`
into one of the frozen payloads below, and a screen `match`es on the type.

It never raises. A buggy or newer server must not crash or blank a transcript, so what
cannot be read becomes `UnknownPayload`, which screens skip:
- an unknown event type (a newer server), or a `data` that is not an object;
- a known type without the id a screen would act on (an approval to decide, an artifact to
  open): a card whose button posts "None" is worse than no card.
Words that are only shown (a tool's or a file's name, a decision) are optional instead
(`None` when missing or not a string), so an approval card still appears with a default.
Unknown keys are ignored, as everywhere in the client (`sync.wire.models`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sync.wire.models import Event

type JsonValue = str | int | float | bool | list[JsonValue] | dict[str, JsonValue] | None

# --- messages (the `data` of `message.user` and `message.assistant`) --------------------


@dataclass(frozen=True, slots=True)
class TextBlock:
    text: str


@dataclass(frozen=True, slots=True)
class ImageBlock:
    """An image block; its base64 `data` stays out of `repr` (and so out of any log)."""

    media_type: str | None
    data: str | None = field(default=None, repr=False)


type ContentBlock = TextBlock | ImageBlock


@dataclass(frozen=True, slots=True)
class Message:
    """A Message (CONTRACT §2): a role and its content blocks (unknown block types dropped)."""

    role: str | None
    content: tuple[ContentBlock, ...]

    @property
    def text(self) -> str:
        """The text blocks joined by new lines, an image named "[image]" where it stands."""
        return "\n".join(
            block.text if isinstance(block, TextBlock) else "[image]" for block in self.content
        )


# --- one payload per event kind ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunStarted:
    """`run.started`: nothing to draw (the user's message follows)."""


@dataclass(frozen=True, slots=True)
class UserMessage:
    """`message.user`: the message the user sent."""

    message: Message


@dataclass(frozen=True, slots=True)
class AssistantDelta:
    """`message.assistant.delta`: a piece of the reply being written ("" when unreadable)."""

    text: str


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    """`message.assistant`: the whole reply (it replaces what the deltas drew)."""

    message: Message


@dataclass(frozen=True, slots=True)
class ToolInvocation:
    """`tool.invocation`: a tool ran; `output` is any JSON value."""

    tool: str | None
    status: str | None
    output: JsonValue = None

    @property
    def output_text(self) -> str:
        """The output for people: a string as it is, other JSON as JSON (not Python's repr),
        nothing for null."""
        if self.output is None:
            return ""
        if isinstance(self.output, str):
            return self.output
        try:
            return json.dumps(self.output, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            return ""


@dataclass(frozen=True, slots=True)
class ApprovalRequested:
    """`approval.requested`: the run waits for the user to approve or deny `tool`."""

    approval_id: str
    tool: str | None


@dataclass(frozen=True, slots=True)
class ApprovalResolved:
    """`approval.resolved`: `decision` is "approved", "denied" or "cancelled" (the stub's
    words; the request's "approve"/"deny" are read the same way by screens)."""

    approval_id: str
    decision: str | None


@dataclass(frozen=True, slots=True)
class ArtifactCreated:
    """`artifact.created`: a file the user can open or save."""

    artifact_id: str
    name: str | None


@dataclass(frozen=True, slots=True)
class MemoryFormed:
    """`memory.formed`: `reinforced` only when the server says `true` (CONTRACT §4)."""

    memory_id: str | None
    reinforced: bool = False


@dataclass(frozen=True, slots=True)
class SkillPublished:
    """`skill.published`: `name` is the stub's extra, not a contract field."""

    skill_id: str | None
    revision_id: str | None
    name: str | None = None


@dataclass(frozen=True, slots=True)
class RunCompleted:
    """`run.completed`."""


@dataclass(frozen=True, slots=True)
class RunFailed:
    """`run.failed`: `error` is the server's own words, when it gives any."""

    error: str | None = None


@dataclass(frozen=True, slots=True)
class RunCancelled:
    """`run.cancelled`."""


@dataclass(frozen=True, slots=True)
class UnknownPayload:
    """An event a screen skips: an unknown type, or a known one missing what it needs.
    `reason` names the problem, never the content (it may be logged)."""

    type: str
    reason: str


type EventPayload = (
    RunStarted
    | UserMessage
    | AssistantDelta
    | AssistantMessage
    | ToolInvocation
    | ApprovalRequested
    | ApprovalResolved
    | ArtifactCreated
    | MemoryFormed
    | SkillPublished
    | RunCompleted
    | RunFailed
    | RunCancelled
    | UnknownPayload
)


# --- parsing ----------------------------------------------------------------------------


class _Missing(Exception):
    """A required field is absent or not a non-empty string (caught in `payload_of`)."""


def _opt_str(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None


def _id(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise _Missing(key)
    return value


def _block(raw: object) -> ContentBlock | None:
    if not isinstance(raw, Mapping):
        return None
    kind = raw.get("type")
    if kind == "text":
        text = raw.get("text")
        return TextBlock(text) if isinstance(text, str) else None
    if kind == "image":
        return ImageBlock(_opt_str(raw, "media_type"), _opt_str(raw, "data"))
    return None


def message_of(data: Mapping[str, Any]) -> Message:
    """A Message from an event's `data`; lenient, as the pane always was: a `content` that is
    a plain string, or a bare `text`, is read as one text block."""
    content = data.get("content")
    blocks: tuple[ContentBlock, ...]
    if isinstance(content, str):
        blocks = (TextBlock(content),)
    elif isinstance(content, list):
        blocks = tuple(b for b in map(_block, content) if b is not None)
    else:
        text = data.get("text")
        blocks = (TextBlock(text),) if isinstance(text, str) else ()
    return Message(_opt_str(data, "role"), blocks)


def _json(value: object) -> JsonValue:
    """`value` if it is JSON as `json.loads` makes it (the wire's data always is)."""
    if value is None or isinstance(value, str | int | float | bool | list | dict):
        return value
    return None


_PARSERS: dict[str, Callable[[Mapping[str, Any]], EventPayload]] = {
    "run.started": lambda d: RunStarted(),
    "message.user": lambda d: UserMessage(message_of(d)),
    "message.assistant.delta": lambda d: AssistantDelta(_opt_str(d, "text") or ""),
    "message.assistant": lambda d: AssistantMessage(message_of(d)),
    "tool.invocation": lambda d: ToolInvocation(
        _opt_str(d, "tool"), _opt_str(d, "status"), _json(d.get("output"))
    ),
    "approval.requested": lambda d: ApprovalRequested(_id(d, "approval_id"), _opt_str(d, "tool")),
    "approval.resolved": lambda d: ApprovalResolved(_id(d, "approval_id"), _opt_str(d, "decision")),
    "artifact.created": lambda d: ArtifactCreated(_id(d, "artifact_id"), _opt_str(d, "name")),
    "memory.formed": lambda d: MemoryFormed(
        _opt_str(d, "memory_id") or None, d.get("reinforced") is True
    ),
    "skill.published": lambda d: SkillPublished(
        _opt_str(d, "skill_id"), _opt_str(d, "revision_id"), _opt_str(d, "name")
    ),
    "run.completed": lambda d: RunCompleted(),
    "run.failed": lambda d: RunFailed(_opt_str(d, "error")),
    "run.cancelled": lambda d: RunCancelled(),
}

EVENT_TYPES = frozenset(_PARSERS)
"""The event types of CONTRACT §2, each with its payload class."""


def payload_of(event: Event) -> EventPayload:
    """The typed payload of `event`; `UnknownPayload` for what cannot be read. Never raises."""
    return payload_from(event.type, event.data)


def payload_from(kind: object, data: object) -> EventPayload:
    """The typed payload of an event of this type and `data` (`payload_of`, for a reader
    holding the two without an `Event`). Never raises."""
    kind = kind if isinstance(kind, str) else ""
    parse = _PARSERS.get(kind)
    if parse is None:
        return UnknownPayload(kind, "unknown event type")
    if not isinstance(data, Mapping):
        return UnknownPayload(kind, "data is not an object")
    try:
        return parse(data)
    except _Missing as missing:
        return UnknownPayload(kind, f"data.{missing} missing")
