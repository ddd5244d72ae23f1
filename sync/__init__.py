"""The sync engine: API client, SQLite mirror, reconciler, server-first delete, CLI.

No Qt here. The window (`ui`, `app`) imports only the names below: the engine facade, its
events and outcomes, the typed errors it raises, and the few helpers a screen needs. What
is not exported (the mirror's internals, the planner, the HTTP client) may change without
the window noticing.
"""

from sync import wording
from sync.engine import (
    DeleteOutcome,
    DeleteStatus,
    EngineEvent,
    EngineState,
    EngineStatus,
    IndexChanged,
    SessionRow,
    StatusChanged,
    SyncEngine,
    TriggerReason,
)
from sync.errors import (
    ConversationGone,
    NetworkError,
    NotFound,
    RunInProgress,
    ServerError,
    SyncError,
    loggable,
)
from sync.export import export_conversation, safe_name
from sync.gc_pause import full_collections_deferred
from sync.memories import memory_texts
from sync.mirror import Mirror
from sync.mirror_schema import matches_filter
from sync.models import Event, SessionView
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
from sync.profile import ENV_PROFILE, Profile, default_profile_dir, read_settings

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
    "NetworkError",
    "NotFound",
    "Profile",
    "RunCancelled",
    "RunCompleted",
    "RunFailed",
    "RunInProgress",
    "RunStarted",
    "ServerError",
    "SessionRow",
    "SessionView",
    "SkillPublished",
    "StatusChanged",
    "SyncEngine",
    "SyncError",
    "TextBlock",
    "ToolInvocation",
    "TriggerReason",
    "UnknownPayload",
    "UserMessage",
    "default_profile_dir",
    "export_conversation",
    "full_collections_deferred",
    "loggable",
    "matches_filter",
    "memory_texts",
    "payload_of",
    "read_settings",
    "safe_name",
    "wording",
]
