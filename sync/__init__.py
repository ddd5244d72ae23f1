"""The sync engine: API client, SQLite mirror, reconciler, server-first delete, CLI.

No Qt here. The window (`ui`, `app`) imports only the names in `__all__`: the engine
facade, its events and outcomes, the typed errors it raises, and the few helpers a screen
needs (`tests/test_imports.py` fails on any other import). What is not listed (the mirror's
internals, the planner, the HTTP client) may change without the window noticing.

The packages, by job: `api` talks to the server, `wire` holds the contract's values,
`mirror` is the local SQLite copy, `reconcile` converges it with the index, `delete` is the
server-first delete, `files` what the client writes to disk, `profile` the local account,
`cli` the headless commands; `engine.SyncEngine` joins them for the window and the CLI.

The names whose modules load httpx (the engine, the rebuild, the command line), and those the
window's first paint does not use, load on first use (`_LATER`), so that the window paints
its first rows before their modules are imported (docs/performance.md, first paint).
`tests/sync/test_public_api.py` checks that every name resolves and that importing `sync`
loads no httpx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sync import wording
from sync.cli.terminal import InertFormatter
from sync.cli.token_input import add_token_arguments, token_from_arguments
from sync.errors import (
    ApiError,
    CertificateError,
    Conflict,
    ConnectionFailed,
    ConversationGone,
    DeadlineExceeded,
    Forbidden,
    InvalidRequest,
    LocalFileError,
    MessageTooLong,
    MirrorDamaged,
    MirrorError,
    NetworkError,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    RunInProgress,
    SearchTooLong,
    ServerError,
    SyncError,
    TlsError,
    Unauthenticated,
    Unavailable,
    loggable,
)
from sync.files.private_files import (
    PrivateRotatingFileHandler,
    copy_private,
    private_dir,
    write_private,
)
from sync.mirror.reader import MirrorChanges, read_mirror_changes, read_mirror_rows
from sync.mirror.search_text import Snippet
from sync.mirror.title_filter import matches_filter
from sync.mirror.transcripts import MirroredTranscript
from sync.profile.profile import (
    ENV_PROFILE,
    ENV_TOKEN,
    Profile,
    default_profile_dir,
    read_settings,
    server_url_problem,
)
from sync.profile.token_store import TokenLocation
from sync.wire.models import Event, RunView, SessionView

__all__ = [
    "ENV_PROFILE",
    "ENV_TOKEN",
    "EVENT_TYPES",
    "ApiError",
    "ApprovalRequested",
    "ApprovalResolved",
    "ArtifactCreated",
    "AssistantDelta",
    "AssistantMessage",
    "CertificateError",
    "Conflict",
    "ConnectionFailed",
    "ContentBlock",
    "ConversationGone",
    "DeadlineExceeded",
    "DeleteOutcome",
    "DeleteStatus",
    "EngineEvent",
    "EngineState",
    "EngineStatus",
    "Event",
    "EventPayload",
    "Forbidden",
    "ImageBlock",
    "IndexChanged",
    "InertFormatter",
    "InvalidRequest",
    "LocalFileError",
    "MemoryFormed",
    "Message",
    "MessageTooLong",
    "Mirror",
    "MirrorChanges",
    "MirrorDamaged",
    "MirrorError",
    "MirroredTranscript",
    "NetworkError",
    "NotFound",
    "PayloadTooLarge",
    "PrivateRotatingFileHandler",
    "Profile",
    "RateLimited",
    "RepairResult",
    "RunCancelled",
    "RunCompleted",
    "RunFailed",
    "RunInProgress",
    "RunStarted",
    "RunView",
    "SearchHit",
    "SearchTooLong",
    "ServerError",
    "SessionView",
    "SkillPublished",
    "Snippet",
    "StatusChanged",
    "SyncEngine",
    "SyncError",
    "TextBlock",
    "TlsError",
    "TokenLocation",
    "ToolInvocation",
    "TranscriptChanged",
    "TriggerReason",
    "Unauthenticated",
    "Unavailable",
    "UnknownPayload",
    "UserMessage",
    "add_token_arguments",
    "copy_private",
    "default_profile_dir",
    "export_conversation",
    "full_collections_deferred",
    "loggable",
    "matches_filter",
    "memory_texts",
    "payload_of",
    "plain_http_warning",
    "private_dir",
    "read_mirror_changes",
    "read_mirror_rows",
    "read_settings",
    "repair_mirror",
    "run_command",
    "safe_file_name",
    "server_url_problem",
    "token_from_arguments",
    "wording",
    "write_private",
]

if TYPE_CHECKING:
    from sync.api.tls import plain_http_warning
    from sync.cli.main import main as run_command
    from sync.delete.outcome import DeleteOutcome, DeleteStatus
    from sync.engine import SyncEngine
    from sync.events import (
        EngineEvent,
        EngineState,
        EngineStatus,
        IndexChanged,
        StatusChanged,
        TranscriptChanged,
        TriggerReason,
    )
    from sync.files.export import export_conversation
    from sync.files.safe_names import safe_file_name
    from sync.mirror.search import SearchHit
    from sync.mirror.store import Mirror
    from sync.reconcile.gc_pause import full_collections_deferred
    from sync.repair import RepairResult, repair_mirror
    from sync.wire.memories import memory_texts
    from sync.wire.payloads import (
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

#: The names loaded on first use (PEP 562), by home module: those whose modules load httpx
#: (the engine, the rebuild, the command line), and those the window's first paint does not
#: use (the engine's events, the transcript's payloads, the mirror's writer, the exporter …),
#: so that it imports none of their modules (`tests/ui/test_first_paint.py`).
_LATER: dict[str, tuple[str, ...]] = {
    "sync.api.tls": ("plain_http_warning",),
    "sync.delete.outcome": ("DeleteOutcome", "DeleteStatus"),
    "sync.engine": ("SyncEngine",),
    "sync.events": (
        "EngineEvent",
        "EngineState",
        "EngineStatus",
        "IndexChanged",
        "StatusChanged",
        "TranscriptChanged",
        "TriggerReason",
    ),
    "sync.files.export": ("export_conversation",),
    "sync.files.safe_names": ("safe_file_name",),
    "sync.mirror.search": ("SearchHit",),
    "sync.mirror.store": ("Mirror",),
    "sync.reconcile.gc_pause": ("full_collections_deferred",),
    "sync.repair": ("RepairResult", "repair_mirror"),
    "sync.wire.memories": ("memory_texts",),
    "sync.wire.payloads": (
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
}
#: Each such name: (home module, name there).
_HEAVY = {name: (module, name) for module, names in _LATER.items() for name in names}
_HEAVY["run_command"] = ("sync.cli.main", "main")


def __getattr__(name: str) -> object:
    if name not in _HEAVY:
        raise AttributeError(f"module 'sync' has no attribute {name!r}")
    import importlib

    module, attr = _HEAVY[name]
    value: object = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HEAVY))
