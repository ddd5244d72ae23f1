"""Pydantic models of the wire contract, used to describe the API in `/openapi.json`.

Routes build their JSON by hand (exact timestamp strings, no coercion) and return it directly;
these models document the shapes and are checked against real responses in the tests.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

#: A message's text blocks together, in code points (decision 0193): past any paste a person
#: sends, and always within the 1 MiB body as compact JSON that escapes only what it must (6
#: bytes a code point at worst, `\u0000`). It bounds what one run stores (the input, its
#: event, the echo) and what the title rule normalises.
MAX_MESSAGE_CHARACTERS = 100_000
#: A memory rejection's reason, in code points: a paragraph, stored as given (decision 0193).
MAX_REASON_CHARACTERS = 4_000


class ErrorBody(BaseModel):
    code: str
    message: str
    details: dict[str, Any] | None = None


class ErrorEnvelope(BaseModel):
    error: ErrorBody


class SessionView(BaseModel):
    id: str
    title: str | None
    created_at: str
    updated_at: str
    active_run_id: str | None
    last_run_id: str | None


class SessionPage(BaseModel):
    items: list[SessionView]
    next_cursor: str | None


class TextBlock(BaseModel):
    type: Literal["text"]
    text: str = Field(
        max_length=MAX_MESSAGE_CHARACTERS,
        description=f"a message's text blocks hold at most {MAX_MESSAGE_CHARACTERS:,} code "
        "points together",
    )


class ImageBlock(BaseModel):
    type: Literal["image"]
    media_type: str
    data: str


class Message(BaseModel):
    role: Literal["user"]
    content: list[TextBlock | ImageBlock] = Field(min_length=1)


class RunRequest(BaseModel):
    input: Message


class RunView(BaseModel):
    id: str
    session_id: str
    status: Literal["queued", "running", "waiting_for_approval", "completed", "failed", "cancelled"]
    created_at: str
    updated_at: str
    completed_at: str | None
    cancel_requested: bool


class Event(BaseModel):
    session_id: str
    run_id: str | None
    sequence: int
    type: str
    created_at: str
    data: dict[str, Any]


class EventPage(BaseModel):
    items: list[Event]
    next_after: int | None


class RunEvents(BaseModel):
    items: list[Event]


class DecisionRequest(BaseModel):
    decision: Literal["approve", "deny"]


class Approval(BaseModel):
    id: str
    run_id: str
    tool: str
    status: Literal["pending", "approved", "denied", "cancelled"]


class Artifact(BaseModel):
    id: str
    session_id: str
    run_id: str | None
    name: str
    media_type: str
    size: int
    sha256: str
    created_at: str


class Memory(BaseModel):
    id: str
    text: str
    source_session_id: str
    source_run_id: str | None
    reinforcement_count: int
    rejected: bool
    created_at: str


class MemoryPage(BaseModel):
    items: list[Memory]
    next_cursor: str | None


class RejectionRequest(BaseModel):
    session_id: str | None = None
    reason: str | None = Field(default=None, max_length=MAX_REASON_CHARACTERS)


class Rejection(BaseModel):
    id: str
    memory_id: str
    session_id: str | None


class KnowledgeDocument(BaseModel):
    id: str
    title: str
    source_artifact_id: str
    source_session_id: str
    created_at: str


class KnowledgePage(BaseModel):
    items: list[KnowledgeDocument]
    next_cursor: str | None


class SkillRevision(BaseModel):
    id: str
    revision: int
    authoring_run_id: str | None
    published_at: str


class Skill(BaseModel):
    id: str
    name: str
    revisions: list[SkillRevision]


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` entries for error statuses, all in the envelope."""
    return {s: {"model": ErrorEnvelope} for s in statuses}


EXTRA_COMPONENTS: dict[str, Any] = {}


def param(name: str, where: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    """One optional OpenAPI parameter (query or header) that a route reads by hand."""
    return {
        "name": name,
        "in": where,
        "required": False,
        "schema": schema,
        "description": description,
    }


def limit(default: int, maximum: int) -> dict[str, Any]:
    """The `limit` query parameter of a paginated route."""
    schema = {"type": "integer", "minimum": 1, "maximum": maximum, "default": default}
    return param("limit", "query", schema, f"page size, 1..{maximum} (default {default})")


CURSOR = param(
    "cursor",
    "query",
    {"type": "string"},
    "the `next_cursor` of the previous page, verbatim (empty: the first page)",
)
IF_NONE_MATCH = param(
    "If-None-Match",
    "header",
    {"type": "string"},
    "an `ETag` from an earlier answer: 304 when unchanged (ignored with a `cursor`)",
)
PREFER_WAIT = param(
    "Prefer",
    "header",
    {"type": "string", "example": "wait=55"},
    "`wait=N` (whole seconds, above 60 counts as 60) on a first page whose `If-None-Match` "
    "matches: the request is held until the caller's index changes (200, the new first page "
    "and `ETag`) or N seconds pass (304). Such a response carries `Preference-Applied: "
    "wait=N`. A malformed or other preference is ignored (RFC 7240).",
)
ETAG_HEADER = {"description": "the first page's version tag", "schema": {"type": "string"}}
PREFERENCE_APPLIED_HEADER = {
    "description": "`wait=N` when the request's `Prefer: wait=N` was applied",
    "schema": {"type": "string"},
}
AFTER = param(
    "after",
    "query",
    {"type": "integer", "minimum": 0, "maximum": 2**62, "default": 0},
    "return the events whose sequence is greater than this",
)
LAST_EVENT_ID = param(
    "Last-Event-ID",
    "header",
    {"type": "string"},
    "SSE only: resume after this event sequence (digits; 400 otherwise); ignored for JSON",
)


def parameters(*items: dict[str, Any]) -> dict[str, Any]:
    """`openapi_extra` describing parameters read by hand (never validated by FastAPI, so that
    authentication and scope are checked before their syntax)."""
    return {"parameters": list(items)}


OPTIONAL_OBJECT_BODY: dict[str, Any] = {
    "requestBody": {
        "required": False,
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
}


def body(model: type[BaseModel]) -> dict[str, Any]:
    """`openapi_extra` describing a JSON request body read by hand (not by FastAPI, so that
    authentication is checked before the body's syntax)."""
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    EXTRA_COMPONENTS.update(schema.pop("$defs", {}))
    EXTRA_COMPONENTS[model.__name__] = schema
    return {
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}
            },
        }
    }
