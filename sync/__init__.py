"""The sync engine: API client, SQLite mirror, reconciler, server-first delete, CLI.

No Qt here. The window (`ui`, `app`) imports only the names in `__all__`: the engine
facade, its events and outcomes, the typed errors it raises, and the few helpers a screen
needs (`tests/test_imports.py` fails on any other import). What is not listed (the mirror's
internals, the planner, the HTTP client) may change without the window noticing.

The packages, by job: `api` talks to the server, `wire` holds the contract's values,
`mirror` is the local SQLite copy, `reconcile` converges it with the index, `delete` is the
server-first delete, `files` what the client writes to disk, `profile` the local account,
`cli` the headless commands; `engine.SyncEngine` joins them for the window and the CLI.

The names whose modules load httpx (the engine, the rebuild, the command line) load on
first use, so that the window paints its first rows before that (docs/performance.md).
`tests/sync/test_public_api.py` checks that every name resolves and that importing `sync`
loads no httpx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sync import wording
from sync.api.tls import plain_http_warning
from sync.cli.terminal import InertFormatter
from sync.cli.token_input import add_token_arguments, token_from_arguments
from sync.delete.outcome import DeleteOutcome, DeleteStatus
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
from sync.files.private_files import (
    PrivateRotatingFileHandler,
    copy_private,
    private_dir,
    write_private,
)
from sync.files.safe_names import safe_file_name
from sync.mirror.reader import MirrorChanges, read_mirror_changes, read_mirror_rows
from sync.mirror.search import SearchHit
from sync.mirror.search_text import Snippet
from sync.mirror.store import Mirror
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
from sync.reconcile.gc_pause import full_collections_deferred
from sync.wire.memories import memory_texts
from sync.wire.models import Event, RunView, SessionView
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
    from sync.cli.main import main as run_command
    from sync.engine import SyncEngine
    from sync.repair import RepairResult, repair_mirror

#: The heavy names: (home module, name there), loaded on first use (PEP 562).
_HEAVY = {
    "RepairResult": ("sync.repair", "RepairResult"),
    "SyncEngine": ("sync.engine", "SyncEngine"),
    "repair_mirror": ("sync.repair", "repair_mirror"),
    "run_command": ("sync.cli.main", "main"),
}


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
