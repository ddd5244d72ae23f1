"""Export one conversation before an irreversible delete: Markdown or JSON, with its files.

Everything is read through the existing routes (the session, its event log, each
artifact's metadata and its sha256-verified bytes through the engine's artifact cache);
nothing new is asked of the server. Markdown is for people: the transcript as text and the
files written next to it in a folder it links to. JSON is for tools: the session, every
event as the server sent it, and each artifact with its bytes in base64.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sync.models import Artifact, Event, SessionView

if TYPE_CHECKING:
    from sync.engine import SyncEngine

FORMAT_VERSION = 1
_UNSAFE = re.compile(r"[^\w.\- ]+")


def safe_name(name: str, fallback: str = "file") -> str:
    """A file name that cannot leave its folder or upset a file system."""
    cleaned = _UNSAFE.sub("_", name).strip(" .")
    return cleaned[:120] or fallback


def _text(data: dict[str, Any]) -> str:
    content = data.get("content")
    if isinstance(content, str):
        return content
    parts: list[str] = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, dict) and block.get("type") == "image":
                parts.append("[image]")
    return "\n".join(parts)


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
        data = event.data
        if event.type == "message.user":
            lines += ["", "**You:**", "", _text(data)]
        elif event.type == "message.assistant":
            lines += ["", "**Assistant:**", "", _text(data)]
        elif event.type == "tool.invocation":
            lines += ["", f"> Tool `{data.get('tool', 'tool')}`: {data.get('status', '')}"]
        elif event.type == "approval.resolved":
            lines += ["", f"> Approval: {data.get('decision', '')}"]
        elif event.type == "artifact.created":
            artifact_id = str(data.get("artifact_id", ""))
            entry = files.get(artifact_id)
            name = str(data.get("name", "file"))
            if entry is not None:
                lines += ["", f"📎 [{name}]({entry[1].replace(' ', '%20')})"]
            else:
                lines += ["", f"📎 {name} (not available)"]
        elif event.type == "run.failed":
            lines += ["", "> The reply failed."]
        elif event.type == "run.cancelled":
            lines += ["", "> Stopped."]
    return "\n".join(lines).rstrip() + "\n"


async def export_conversation(engine: SyncEngine, session_id: str, target: Path, fmt: str) -> Path:
    """Write the conversation to `target` as "markdown" or "json"; returns the file."""
    if fmt not in ("markdown", "json"):
        raise ValueError(f"unknown export format {fmt!r}")
    session = await engine.api.get_session(session_id)
    events = await engine.transcript(session_id)
    artifact_ids = [str(e.data.get("artifact_id")) for e in events if e.type == "artifact.created"]
    artifacts: list[tuple[Artifact, Path]] = []
    for artifact_id in dict.fromkeys(artifact_ids):
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
        await asyncio.to_thread(target.write_text, text, encoding="utf-8")
        return target
    folder_name = f"{target.stem} files"
    files: dict[str, tuple[Artifact, str]] = {}

    def write_markdown() -> None:
        used: set[str] = set()
        if artifacts:
            (target.parent / folder_name).mkdir(parents=True, exist_ok=True)
        for meta, path in artifacts:
            name = safe_name(meta.name)
            while name in used:
                name = f"{meta.id}-{name}"
            used.add(name)
            shutil.copyfile(path, target.parent / folder_name / name)
            files[meta.id] = (meta, f"{folder_name}/{name}")
        target.write_text(to_markdown(session, events, files), encoding="utf-8")

    await asyncio.to_thread(write_markdown)
    return target
