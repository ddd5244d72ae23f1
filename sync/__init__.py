"""The sync engine: API client, SQLite mirror, reconciler, server-first delete, CLI.

No Qt here. The window (`ui`, `app`) imports only the names below: the engine facade, its
events and outcomes, the typed errors it raises, and the few helpers a screen needs. What
is not exported (the mirror's internals, the planner, the HTTP client) may change without
the window noticing.

Every name is imported normally except the heavy two, `SyncEngine` and `Mirror`: their
modules load SQLAlchemy and httpx (about 1.9 s and 0.65 s of `python -X importtime` on a
loaded 2-core machine, against about 0.5 s for all the others together), so they load on
first use and the window paints its first rows before that (docs/performance.md, first
paint). `tests/sync/test_public_api.py` checks that every name resolves and that importing
`sync` loads neither SQLAlchemy nor httpx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sync import wording as wording
from sync.delete_outcome import DeleteOutcome as DeleteOutcome
from sync.delete_outcome import DeleteStatus as DeleteStatus
from sync.engine_events import EngineEvent as EngineEvent
from sync.engine_events import EngineState as EngineState
from sync.engine_events import EngineStatus as EngineStatus
from sync.engine_events import IndexChanged as IndexChanged
from sync.engine_events import StatusChanged as StatusChanged
from sync.engine_events import TranscriptChanged as TranscriptChanged
from sync.engine_events import TriggerReason as TriggerReason
from sync.errors import ConversationGone as ConversationGone
from sync.errors import MirrorDamaged as MirrorDamaged
from sync.errors import NetworkError as NetworkError
from sync.errors import NotFound as NotFound
from sync.errors import RunInProgress as RunInProgress
from sync.errors import ServerError as ServerError
from sync.errors import SyncError as SyncError
from sync.errors import loggable as loggable
from sync.export import export_conversation as export_conversation
from sync.gc_pause import full_collections_deferred as full_collections_deferred
from sync.memories import memory_texts as memory_texts
from sync.mirror_reader import read_mirror_rows as read_mirror_rows
from sync.mirror_search import SearchHit as SearchHit
from sync.models import Event as Event
from sync.models import SessionView as SessionView
from sync.payloads import EVENT_TYPES as EVENT_TYPES
from sync.payloads import ApprovalRequested as ApprovalRequested
from sync.payloads import ApprovalResolved as ApprovalResolved
from sync.payloads import ArtifactCreated as ArtifactCreated
from sync.payloads import AssistantDelta as AssistantDelta
from sync.payloads import AssistantMessage as AssistantMessage
from sync.payloads import ContentBlock as ContentBlock
from sync.payloads import EventPayload as EventPayload
from sync.payloads import ImageBlock as ImageBlock
from sync.payloads import MemoryFormed as MemoryFormed
from sync.payloads import Message as Message
from sync.payloads import RunCancelled as RunCancelled
from sync.payloads import RunCompleted as RunCompleted
from sync.payloads import RunFailed as RunFailed
from sync.payloads import RunStarted as RunStarted
from sync.payloads import SkillPublished as SkillPublished
from sync.payloads import TextBlock as TextBlock
from sync.payloads import ToolInvocation as ToolInvocation
from sync.payloads import UnknownPayload as UnknownPayload
from sync.payloads import UserMessage as UserMessage
from sync.payloads import payload_of as payload_of
from sync.private_files import copy_private as copy_private
from sync.profile import ENV_PROFILE as ENV_PROFILE
from sync.profile import Profile as Profile
from sync.profile import default_profile_dir as default_profile_dir
from sync.profile import read_settings as read_settings
from sync.safe_names import safe_file_name as safe_file_name
from sync.search_text import Snippet as Snippet
from sync.title_filter import matches_filter as matches_filter
from sync.tls import plain_http_warning as plain_http_warning

#: One sidebar row is the very value the server's index sends.
SessionRow = SessionView

if TYPE_CHECKING:
    from sync.engine import SyncEngine as SyncEngine
    from sync.mirror import Mirror as Mirror

#: The heavy two, by home module: loaded on first use (PEP 562), then plain globals.
_HEAVY = {"SyncEngine": "sync.engine", "Mirror": "sync.mirror"}


def __getattr__(name: str) -> object:
    if name not in _HEAVY:
        raise AttributeError(f"module 'sync' has no attribute {name!r}")
    import importlib

    value: object = getattr(importlib.import_module(_HEAVY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HEAVY))
