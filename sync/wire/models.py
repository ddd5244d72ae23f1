"""Wire dataclasses parsed from the contract's JSON (CONTRACT §2).

Parsing is strict about the fields the engine relies on (a missing `id` is a broken server,
reported as `UnexpectedResponse`) and lenient about everything else (unknown keys ignored), so
that a newer server does not break an older client.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from sync.api.bounds import JSON_DEPTH, json_depth_ok
from sync.errors import UnexpectedResponse


def _str(obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise UnexpectedResponse(
            f"The server sent a malformed object (field {key!r} missing).", status=200
        )
    return value


def _opt_str(obj: Mapping[str, Any], key: str) -> str | None:
    value = obj.get(key)
    return value if isinstance(value, str) else None


def _int(obj: Mapping[str, Any], key: str) -> int:
    value = obj.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise UnexpectedResponse(
            f"The server sent a malformed object (field {key!r} is not an integer).", status=200
        )
    return value


#: Builds a named tuple from its fields' tuple without the keyword parsing of its `__new__`.
_new_tuple = tuple.__new__


def _mapping(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise UnexpectedResponse(f"The server sent a malformed {what}.", status=200)
    return value


class SessionView(NamedTuple):
    """One session as the server's index shows it.

    A named tuple: immutable, and built without the `object.__setattr__` a frozen dataclass
    makes for each field; a walk of a big index, and a read of the whole mirror, build one
    a row."""

    id: str
    title: str | None
    created_at: str
    updated_at: str
    active_run_id: str | None
    last_run_id: str | None

    @classmethod
    def from_json(cls, raw: Any) -> SessionView:
        # An index page holds thousands: the checks of `_str` and `_opt_str`, inline.
        obj = raw if type(raw) is dict else _mapping(raw, "session")
        get = obj.get
        sid, created, updated = get("id"), get("created_at"), get("updated_at")
        if not (type(sid) is str and type(created) is str and type(updated) is str):
            sid, created, updated = (_str(obj, key) for key in ("id", "created_at", "updated_at"))
        title, active, last = get("title"), get("active_run_id"), get("last_run_id")
        return _new_tuple(
            cls,
            (
                sid,
                title if isinstance(title, str) else None,
                created,
                updated,
                active if isinstance(active, str) else None,
                last if isinstance(last, str) else None,
            ),
        )

    def to_view_json(self) -> dict[str, str | None]:
        """The whole SessionView of CONTRACT §2, as the server sends it (`converge show
        --json`, §11)."""
        return {
            "id": self.id,
            "title": self.title,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "active_run_id": self.active_run_id,
            "last_run_id": self.last_run_id,
        }

    def to_json(self) -> dict[str, str | None]:
        """The `converge ls --json` shape (CONTRACT §8): the SessionView without
        `created_at`."""
        return {
            "id": self.id,
            "title": self.title,
            "updated_at": self.updated_at,
            "active_run_id": self.active_run_id,
            "last_run_id": self.last_run_id,
        }


@dataclass(frozen=True, slots=True)
class SessionPage:
    """One page of `GET /v1/sessions`; `etag` is set on the first page only."""

    items: list[SessionView]
    next_cursor: str | None
    etag: str | None = None
    nbytes: int = 0  # the page's body size: a walk's byte budget counts it


TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})


@dataclass(frozen=True, slots=True)
class RunView:
    """One run; `is_terminal` tells whether everything it did is now visible."""

    id: str
    session_id: str
    status: str
    created_at: str
    updated_at: str
    completed_at: str | None
    cancel_requested: bool

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES

    @classmethod
    def from_json(cls, raw: Any) -> RunView:
        obj = _mapping(raw, "run")
        return cls(
            id=_str(obj, "id"),
            session_id=_str(obj, "session_id"),
            status=_str(obj, "status"),
            created_at=_str(obj, "created_at"),
            updated_at=_str(obj, "updated_at"),
            completed_at=_opt_str(obj, "completed_at"),
            cancel_requested=bool(obj.get("cancel_requested", False)),
        )


TERMINAL_EVENT_TYPES = frozenset({"run.completed", "run.failed", "run.cancelled"})


@dataclass(frozen=True, slots=True)
class Event:
    """One event of a session's log, ordered by `sequence` (per session, from 1, no gaps)."""

    session_id: str
    run_id: str | None
    sequence: int
    type: str
    created_at: str
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def is_terminal(self) -> bool:
        return self.type in TERMINAL_EVENT_TYPES

    @classmethod
    def from_json(cls, raw: Any) -> Event:
        obj = _mapping(raw, "event")
        data = obj.get("data")
        if not json_depth_ok(data, JSON_DEPTH):
            # Whatever reads `data` later (the pane, export, the mirror) may recurse.
            raise UnexpectedResponse("The server sent an event nested too deeply.", status=200)
        return cls(
            session_id=_str(obj, "session_id"),
            run_id=_opt_str(obj, "run_id"),
            sequence=_int(obj, "sequence"),
            type=_str(obj, "type"),
            created_at=_str(obj, "created_at"),
            data=dict(data) if isinstance(data, Mapping) else {},
        )


@dataclass(frozen=True, slots=True)
class EventPage:
    """One page of `GET /v1/sessions/{id}/events`."""

    items: list[Event]
    next_after: int | None
    nbytes: int = 0  # the page's body size: a transcript's byte budget counts it


@dataclass(frozen=True, slots=True)
class Artifact:
    """Artifact metadata; `sha256` is what the cached bytes are checked against."""

    id: str
    session_id: str
    run_id: str | None
    name: str
    media_type: str
    size: int
    sha256: str
    created_at: str

    @classmethod
    def from_json(cls, raw: Any) -> Artifact:
        obj = _mapping(raw, "artifact")
        return cls(
            id=_str(obj, "id"),
            session_id=_str(obj, "session_id"),
            run_id=_opt_str(obj, "run_id"),
            name=_str(obj, "name"),
            media_type=_str(obj, "media_type"),
            size=_int(obj, "size"),
            sha256=_str(obj, "sha256"),
            created_at=_str(obj, "created_at"),
        )


@dataclass(frozen=True, slots=True)
class Approval:
    """The answer of `POST /v1/approvals/{id}/decision`."""

    id: str
    run_id: str
    tool: str
    status: str

    @classmethod
    def from_json(cls, raw: Any) -> Approval:
        obj = _mapping(raw, "approval")
        return cls(
            id=_str(obj, "id"),
            run_id=_str(obj, "run_id"),
            tool=_str(obj, "tool"),
            status=_str(obj, "status"),
        )


#: The longest message text this client sends, in code points: the bundled server's bound
#: (decision 0193; the contract states none, and another server may refuse less with a 400).
MAX_MESSAGE_CHARACTERS = 100_000


def text_message(text: str) -> dict[str, Any]:
    """A user Message with one text block, the `input` of `POST /v1/sessions/{id}/runs`."""
    return {"role": "user", "content": [{"type": "text", "text": text}]}
