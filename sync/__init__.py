"""The sync engine: API client, SQLite mirror, reconciler, server-first delete, CLI.

No Qt here. The window (`ui`, `app`) imports only the names below: the engine facade, its
events and outcomes, the typed errors it raises, and the few helpers a screen needs. What
is not exported (the mirror's internals, the planner, the HTTP client) may change without
the window noticing.

The names are loaded on first use (PEP 562 `__getattr__`), each from its home module: the
window imports the light ones (events, errors, profile, wording, the read-only mirror
reader) and paints its first rows before the first use of `SyncEngine` or `Mirror` loads
SQLAlchemy and httpx (docs/performance.md, first paint). `tests/sync/test_public_api.py`
checks that every name resolves and that the light ones stay light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sync import wording
    from sync.delete_outcome import DeleteOutcome, DeleteStatus
    from sync.engine import SyncEngine
    from sync.engine_events import (
        EngineEvent,
        EngineState,
        EngineStatus,
        IndexChanged,
        StatusChanged,
        TranscriptChanged,
        TriggerReason,
    )
    from sync.errors import (
        ConversationGone,
        MirrorDamaged,
        NetworkError,
        NotFound,
        RunInProgress,
        ServerError,
        SyncError,
        loggable,
    )
    from sync.export import export_conversation
    from sync.gc_pause import full_collections_deferred
    from sync.memories import memory_texts
    from sync.mirror import Mirror
    from sync.mirror_reader import read_mirror_rows
    from sync.mirror_search import SearchHit
    from sync.models import Event, SessionView
    from sync.models import SessionView as SessionRow
    from sync.payloads import (
        EVENT_TYPES,
        ApprovalRequested,
        ApprovalResolved,
        ArtifactCreated,
        AssistantDelta,
        AssistantMessage,
        ContentBlock,
        EventPayload,
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
    from sync.private_files import copy_private
    from sync.profile import ENV_PROFILE, Profile, default_profile_dir, read_settings
    from sync.safe_names import safe_file_name
    from sync.search_text import Snippet
    from sync.title_filter import matches_filter
    from sync.tls import plain_http_warning

__all__ = [
    "ENV_PROFILE",
    "EVENT_TYPES",
    "ApprovalRequested",
    "ApprovalResolved",
    "ArtifactCreated",
    "AssistantDelta",
    "AssistantMessage",
    "ContentBlock",
    "ConversationGone",
    "DeleteOutcome",
    "DeleteStatus",
    "EngineEvent",
    "EngineState",
    "EngineStatus",
    "Event",
    "EventPayload",
    "ImageBlock",
    "IndexChanged",
    "MemoryFormed",
    "Message",
    "Mirror",
    "MirrorDamaged",
    "NetworkError",
    "NotFound",
    "Profile",
    "RunCancelled",
    "RunCompleted",
    "RunFailed",
    "RunInProgress",
    "RunStarted",
    "SearchHit",
    "ServerError",
    "SessionRow",
    "SessionView",
    "SkillPublished",
    "Snippet",
    "StatusChanged",
    "SyncEngine",
    "SyncError",
    "TextBlock",
    "ToolInvocation",
    "TranscriptChanged",
    "TriggerReason",
    "UnknownPayload",
    "UserMessage",
    "copy_private",
    "default_profile_dir",
    "export_conversation",
    "full_collections_deferred",
    "loggable",
    "matches_filter",
    "memory_texts",
    "payload_of",
    "plain_http_warning",
    "read_mirror_rows",
    "read_settings",
    "safe_file_name",
    "wording",
]

#: Where each public name lives. Only `engine` and `mirror` load SQLAlchemy or httpx.
_HOMES = {
    "sync.delete_outcome": ("DeleteOutcome", "DeleteStatus"),
    "sync.engine": ("SyncEngine",),
    "sync.errors": (
        "ConversationGone",
        "MirrorDamaged",
        "NetworkError",
        "NotFound",
        "RunInProgress",
        "ServerError",
        "SyncError",
        "loggable",
    ),
    "sync.engine_events": (
        "EngineEvent",
        "EngineState",
        "EngineStatus",
        "IndexChanged",
        "StatusChanged",
        "TranscriptChanged",
        "TriggerReason",
    ),
    "sync.export": ("export_conversation",),
    "sync.private_files": ("copy_private",),
    "sync.safe_names": ("safe_file_name",),
    "sync.mirror_reader": ("read_mirror_rows",),
    "sync.mirror_search": ("SearchHit",),
    "sync.search_text": ("Snippet",),
    "sync.gc_pause": ("full_collections_deferred",),
    "sync.memories": ("memory_texts",),
    "sync.mirror": ("Mirror",),
    "sync.models": ("Event", "SessionView"),
    "sync.payloads": (
        "EVENT_TYPES",
        "ApprovalRequested",
        "ApprovalResolved",
        "ArtifactCreated",
        "AssistantDelta",
        "AssistantMessage",
        "ContentBlock",
        "EventPayload",
        "ImageBlock",
        "MemoryFormed",
        "Message",
        "RunCancelled",
        "RunCompleted",
        "RunFailed",
        "RunStarted",
        "SkillPublished",
        "TextBlock",
        "ToolInvocation",
        "UnknownPayload",
        "UserMessage",
        "payload_of",
    ),
    "sync.profile": ("ENV_PROFILE", "Profile", "default_profile_dir", "read_settings"),
    "sync.title_filter": ("matches_filter",),
    "sync.tls": ("plain_http_warning",),
}
_HOME_OF = {name: (module, name) for module, names in _HOMES.items() for name in names}
#: One sidebar row is the very value the server's index sends.
_HOME_OF["SessionRow"] = ("sync.models", "SessionView")


def __getattr__(name: str) -> object:
    """Load a public name from its home module on first use (then it is a plain global)."""
    if name == "wording":
        value: object = importlib.import_module("sync.wording")
    elif name in _HOME_OF:
        module, attribute = _HOME_OF[name]
        value = getattr(importlib.import_module(module), attribute)
    else:
        raise AttributeError(f"module 'sync' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
