"""The sync engine: API client, SQLite mirror, reconciler, server-first delete, CLI.

No Qt here. The window (`ui`, `app`) imports only the names in `__all__`: the engine
facade, its events and outcomes, the typed errors it raises, and the few helpers a screen
needs (`tests/test_imports.py` fails on any other import). What is not listed (the mirror's
internals, the planner, the HTTP client) may change without the window noticing.

The packages, by job: `api` talks to the server, `wire` holds the contract's values,
`mirror` is the local SQLite copy, `reconcile` converges it with the index, `delete` is the
server-first delete, `files` what the client writes to disk, `profile` the local account,
`cli` the headless commands; `engine.SyncEngine` joins them for the window and the CLI.

Every name loads its home module on first use (PEP 562), so a caller pays only for the
names it uses: the window paints its first rows before the modules that load httpx (the
engine, the rebuild, the command line), and `converge search` loads none of them
(docs/performance.md). `tests/sync/test_public_api.py` checks that every name resolves, that
the lazy table and the typed imports agree, and that importing `sync` loads no httpx.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from sync import wording

# httpx imports its own command line (`httpx._main`: click, rich, Pygments' formatters)
# whenever those are installed, and a library never uses it. A None in its place makes that
# optional import fail the way httpx expects, so loading the engine skips it (memory and
# CPU the window's start does not spend: `tests/sync/test_public_api.py`).
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

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
    from sync.cli.terminal import InertFormatter
    from sync.cli.token_input import add_token_arguments, token_from_arguments
    from sync.delete.outcome import DeleteOutcome, DeleteStatus
    from sync.engine import SyncEngine
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
    from sync.files.private_files import copy_private, private_dir, write_private
    from sync.files.private_log import PrivateRotatingFileHandler
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
    from sync.repair import RepairResult, repair_mirror
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

#: Each public name by its home module, imported on the name's first use (PEP 562).
_HOMES = {
    "sync.api.tls": "plain_http_warning",
    "sync.cli.terminal": "InertFormatter",
    "sync.cli.token_input": "add_token_arguments token_from_arguments",
    "sync.delete.outcome": "DeleteOutcome DeleteStatus",
    "sync.errors": (
        "ApiError CertificateError Conflict ConnectionFailed ConversationGone DeadlineExceeded "
        "Forbidden InvalidRequest LocalFileError MessageTooLong MirrorDamaged MirrorError "
        "NetworkError NotFound PayloadTooLarge RateLimited RunInProgress SearchTooLong ServerError "
        "SyncError TlsError Unauthenticated Unavailable loggable"
    ),
    "sync.engine": "SyncEngine",
    "sync.events": (
        "EngineEvent EngineState EngineStatus IndexChanged StatusChanged TranscriptChanged "
        "TriggerReason"
    ),
    "sync.files.export": "export_conversation",
    "sync.files.private_files": "copy_private private_dir write_private",
    "sync.files.private_log": "PrivateRotatingFileHandler",
    "sync.files.safe_names": "safe_file_name",
    "sync.mirror.reader": "MirrorChanges read_mirror_changes read_mirror_rows",
    "sync.mirror.search": "SearchHit",
    "sync.mirror.search_text": "Snippet",
    "sync.mirror.store": "Mirror",
    "sync.mirror.title_filter": "matches_filter",
    "sync.mirror.transcripts": "MirroredTranscript",
    "sync.profile.profile": (
        "ENV_PROFILE ENV_TOKEN Profile default_profile_dir read_settings server_url_problem"
    ),
    "sync.profile.token_store": "TokenLocation",
    "sync.reconcile.gc_pause": "full_collections_deferred",
    "sync.repair": "RepairResult repair_mirror",
    "sync.wire.memories": "memory_texts",
    "sync.wire.models": "Event RunView SessionView",
    "sync.wire.payloads": (
        "EVENT_TYPES ApprovalRequested ApprovalResolved ArtifactCreated AssistantDelta "
        "AssistantMessage ContentBlock EventPayload ImageBlock MemoryFormed Message RunCancelled "
        "RunCompleted RunFailed RunStarted SkillPublished TextBlock ToolInvocation UnknownPayload "
        "UserMessage payload_of"
    ),
}
_HOME = {name: (module, name) for module, names in _HOMES.items() for name in names.split()}
_HOME["run_command"] = ("sync.cli.main", "main")


def __getattr__(name: str) -> object:
    if name not in _HOME:
        raise AttributeError(f"module 'sync' has no attribute {name!r}")
    import importlib

    module, attr = _HOME[name]
    value: object = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOME))
