"""Export one conversation before an irreversible delete: Markdown or JSON, with its files.

Everything is read through the existing routes (the session, its event log, each
artifact's metadata and its sha256-verified bytes through the engine's artifact cache);
nothing new is asked of the server. Markdown is for people: the transcript as text and the
files written next to it in a folder it links to. JSON is for tools: the session, every
event as the server sent it, and each artifact with its bytes in base64.

Every name written comes from `sync.safe_names` and every write goes through
`sync.private_files` (CONTRACT §10.1): an artifact's name or id can never place a file
outside the folder the user chose, two files of one name become `notes.txt` and
`notes (2).txt`, and what is written is readable by its owner only.
"""

from __future__ import annotations

import asyncio
import base64
import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from sync.models import Artifact, Event, SessionView
from sync.payloads import (
    ApprovalResolved,
    ArtifactCreated,
    AssistantMessage,
    RunCancelled,
    RunFailed,
    ToolInvocation,
    UserMessage,
    payload_of,
)
from sync.private_files import copy_private, inside, private_dir, write_private
from sync.safe_names import safe_file_name, unique_name

if TYPE_CHECKING:
    from sync.engine import SyncEngine

FORMAT_VERSION = 1


def _link_text(name: str) -> str:
    """A name as Markdown link text: brackets and backslashes escaped, so it cannot close
    the link and start another one."""
    return name.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def to_markdown(
    session: SessionView, events: list[Event], files: dict[str, tuple[Artifact, str]]
) -> str:
    """The transcript as Markdown; `files` maps artifact ids to (metadata, relative path)."""
    lines = [f"# {session.title or 'Untitled conversation'}", ""]
    lines.append(
        f"*Conversation {session.id}, created {session.created_at}, "
        f"last activity {session.updated_at}.*"
    )
    for event in events:
        match payload_of(event):
            case UserMessage(message=message):
                lines += ["", "**You:**", "", message.text]
            case AssistantMessage(message=message):
                lines += ["", "**Assistant:**", "", message.text]
            case ToolInvocation(tool=tool, status=status):
                lines += ["", f"> Tool `{tool or 'tool'}`: {status or ''}"]
            case ApprovalResolved(decision=decision):
                lines += ["", f"> Approval: {decision or ''}"]
            case ArtifactCreated(artifact_id=artifact_id, name=name):
                entry = files.get(artifact_id)
                if entry is not None:
                    link = quote(entry[1], safe="/")
                    lines += ["", f"📎 [{_link_text(name or 'file')}]({link})"]
                else:
                    lines += ["", f"📎 {name or 'file'} (not available)"]
            case RunFailed():
                lines += ["", "> The reply failed."]
            case RunCancelled():
                lines += ["", "> Stopped."]
            case _:
                pass  # deltas (the whole message follows), notes, unknown events
    return "\n".join(lines).rstrip() + "\n"


def artifact_ids(events: list[Event]) -> list[str]:
    """The artifacts a transcript names, once each, in order; an event without a readable
    id is skipped (it would be a request for the artifact "None")."""
    named = (payload_of(e) for e in events)
    return list(dict.fromkeys(p.artifact_id for p in named if isinstance(p, ArtifactCreated)))


async def export_conversation(engine: SyncEngine, session_id: str, target: Path, fmt: str) -> Path:
    """Write the conversation to `target` as "markdown" or "json"; returns the file."""
    if fmt not in ("markdown", "json"):
        raise ValueError(f"unknown export format {fmt!r}")
    session = await engine.api.get_session(session_id)
    events = await engine.transcript(session_id)
    artifacts: list[tuple[Artifact, Path]] = []
    for artifact_id in artifact_ids(events):
        meta = await engine.api.get_artifact(artifact_id)
        artifacts.append((meta, await engine.artifact_file(artifact_id)))
    if fmt == "json":
        document = {
            "format": "converge.conversation",
            "version": FORMAT_VERSION,
            "session": asdict(session),
            "events": [asdict(e) for e in events],
            "artifacts": [
                {**asdict(meta), "content_base64": base64.b64encode(path.read_bytes()).decode()}
                for meta, path in artifacts
            ],
        }
        text = json.dumps(document, ensure_ascii=False, indent=2)
        return await asyncio.to_thread(write_private, target.parent, target.name, text)
    # The folder's name follows the document's (the user's choice), made one safe component.
    folder_name = safe_file_name(f"{target.stem} files", "files")
    files: dict[str, tuple[Artifact, str]] = {}

    def write_markdown() -> Path:
        private_dir(target.parent)
        document = inside(target.parent, target.name)
        if artifacts:
            folder = private_dir(inside(target.parent, folder_name))
            used: set[str] = set()
            for meta, path in artifacts:
                name = unique_name(safe_file_name(meta.name), used)
                copy_private(path, folder, name)
                files[meta.id] = (meta, f"{folder_name}/{name}")
        write_private(document.parent, document.name, to_markdown(session, events, files))
        return target

    return await asyncio.to_thread(write_markdown)
