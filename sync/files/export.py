"""Export one conversation before an irreversible delete: Markdown or JSON, with its files.

Everything is read through the existing routes (the session, its event log, each
artifact's metadata and its sha256-verified bytes through the engine's artifact cache);
nothing new is asked of the server. When the server cannot be reached, the export is this
device's copy (CONTRACT §11): the mirrored row and transcript, and the files whose bytes are
cached; a file not held is marked "(not available)" and counted, never left out silently.

Markdown is for people: the transcript as text and the files written next to it in a
folder it links to; every text from the server in it is inert (`sync.cli.terminal.for_document`:
a terminal escape is written as its visible `\\u001b`, line feeds and tabs kept), since
the file is read with `cat` as often as in an editor. JSON is for tools: the session,
every event as the server sent it, and each artifact with its bytes in base64. A folder as
the target is refused before anything is read, and an export that fails takes back what it
wrote.

Every name written comes from `sync.files.safe_names` and every write goes through
`sync.files.private_files` (CONTRACT §10.1): an artifact's name or id can never place a file
outside the folder the user chose, two files of one name become `notes.txt` and
`notes (2).txt`, and what is written is readable by its owner only.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from sync.cli.terminal import for_document
from sync.errors import (
    LocalFileError,
    MirrorError,
    NetworkError,
    SyncError,
    TlsError,
    Unavailable,
)
from sync.files.private_files import copy_private, inside, private_dir, write_private
from sync.files.safe_names import safe_file_name, unique_name
from sync.wire.models import Artifact, Event, SessionView
from sync.wire.payloads import (
    ApprovalResolved,
    ArtifactCreated,
    AssistantMessage,
    RunCancelled,
    RunFailed,
    ToolInvocation,
    UserMessage,
    payload_of,
)

if TYPE_CHECKING:
    from sync.engine import SyncEngine

log = logging.getLogger(__name__)

FORMAT_VERSION = 1


def _link_text(name: str) -> str:
    """A name as Markdown link text: brackets and backslashes escaped, so it cannot close
    the link and start another one."""
    return name.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _one(text: str) -> str:
    """A title, a name or a word from the server, inert and on one line."""
    return for_document(text, multiline=False)


def to_markdown(
    session: SessionView, events: list[Event], files: dict[str, tuple[Artifact, str]]
) -> str:
    """The transcript as Markdown; `files` maps artifact ids to (metadata, relative path).
    Every text from the server is inert (`sync.cli.terminal.for_document`): a message keeps its
    line feeds and tabs, a title or a name stays on its line."""
    lines = [f"# {_one(session.title or 'Untitled conversation')}", ""]
    lines.append(
        f"*Conversation {_one(session.id)}, created {_one(session.created_at)}, "
        f"last activity {_one(session.updated_at)}.*"
    )
    for event in events:
        match payload_of(event):
            case UserMessage(message=message):
                lines += ["", "**You:**", "", for_document(message.text)]
            case AssistantMessage(message=message):
                lines += ["", "**Assistant:**", "", for_document(message.text)]
            case ToolInvocation(tool=tool, status=status):
                lines += ["", f"> Tool `{_one(tool or 'tool')}`: {_one(status or '')}"]
            case ApprovalResolved(decision=decision):
                lines += ["", f"> Approval: {_one(decision or '')}"]
            case ArtifactCreated(artifact_id=artifact_id, name=name):
                entry = files.get(artifact_id)
                if entry is not None:
                    link = quote(entry[1], safe="/")
                    lines += ["", f"📎 [{_link_text(_one(name or 'file'))}]({link})"]
                else:
                    lines += ["", f"📎 {_one(name or 'file')} (not available)"]
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


@dataclass(frozen=True, slots=True)
class Exported:
    """What an export wrote. `from_device`: the server could not be reached, so the document
    is the mirror's copy (CONTRACT §11), `stale` when the mirror knew the conversation had
    moved on since its transcript was fetched; `missing`: files the transcript names whose
    bytes this device did not hold (marked "(not available)" in Markdown, left out of the
    JSON document's artifacts)."""

    path: Path
    fmt: str = "markdown"
    from_device: bool = False
    stale: bool = False
    missing: int = 0

    def caveats(self) -> str:
        """What the user must know about the document, as one clause ("" when it is the
        server's whole copy)."""
        said = []
        if self.from_device:
            newest = ", which may lack the newest messages" if self.stale else ""
            said.append(f"this device's copy{newest}: the server could not be reached")
        if self.missing:
            files = "1 file was" if self.missing == 1 else f"{self.missing} files were"
            where = "marked (not available)" if self.fmt == "markdown" else "left out"
            said.append(f"{files} not on this device, {where}")
        return "; ".join(said)


@dataclass(frozen=True, slots=True)
class _Content:
    session: SessionView
    events: list[Event]
    artifacts: list[tuple[Artifact, Path]]
    from_device: bool = False
    stale: bool = False
    missing: int = 0


def refuse_folder(target: Path) -> None:
    """A folder as the document would leave a files folder beside it and then fail (or
    replace nothing useful): refused before anything is read or written."""
    if target.is_dir():
        raise LocalFileError(
            f"{target} is a folder: name the file to write in it, such as "
            f"{target / 'conversation.md'}."
        )


async def _from_server(engine: SyncEngine, session_id: str) -> _Content:
    session = await engine.api.get_session(session_id)
    events = await engine.transcript(session_id)
    artifacts: list[tuple[Artifact, Path]] = []
    for artifact_id in artifact_ids(events):
        meta = await engine.api.get_artifact(artifact_id)
        artifacts.append((meta, await engine.artifact_file(artifact_id)))
    return _Content(session, events, artifacts)


async def _from_device(engine: SyncEngine, session_id: str, why: SyncError) -> _Content:
    """The mirror's copy: its row, its transcript when whole, and the files whose verified
    bytes are cached (their metadata from the cache's index and the event that made them)."""
    session = await engine.row(session_id)
    held = await engine.mirrored_transcript(session_id)
    state = held.state
    reason = f"The server could not be reached ({why.message.rstrip('.')})"
    if session is None:
        raise MirrorError(
            f"{reason}, and no conversation {session_id[:80]!r} is on this device; nothing "
            "was exported."
        )
    if state is None or state.evicted or (not held.events and not state.current):
        raise MirrorError(
            f"{reason}, and this conversation's transcript is not on this device; export it "
            "when connected. Nothing was exported."
        )
    creators: dict[str, Event] = {}  # each named artifact, in order: its run, its time
    for event in held.events:
        if isinstance(payload := payload_of(event), ArtifactCreated):
            creators.setdefault(payload.artifact_id, event)
    artifacts: list[tuple[Artifact, Path]] = []
    for artifact_id, event in creators.items():
        if (found := await engine.held_artifact(artifact_id)) is None:
            continue
        entry, path = found
        meta = Artifact(
            artifact_id,
            session_id,
            event.run_id,
            entry.name,
            entry.media_type,
            entry.size,
            entry.sha256,
            event.created_at,
        )
        artifacts.append((meta, path))
    missing = len(creators) - len(artifacts)
    stale = not state.current
    return _Content(session, held.events, artifacts, True, stale, missing)


async def export_conversation(
    engine: SyncEngine, session_id: str, target: Path, fmt: str
) -> Exported:
    """Write the conversation to `target` as "markdown" or "json": the server's copy, or,
    when the server cannot be reached, this device's (`Exported.from_device`)."""
    if fmt not in ("markdown", "json"):
        raise ValueError(f"unknown export format {fmt!r}")
    await asyncio.to_thread(refuse_folder, target)
    try:
        content = await _from_server(engine, session_id)
    except TlsError:
        raise  # a certificate refused is not "offline" (CONTRACT §10.1): said as such
    except (NetworkError, Unavailable) as exc:
        log.info("export of %s from the mirror: %s", session_id, exc.message)
        content = await _from_device(engine, session_id, exc)
    written = await asyncio.to_thread(_write, content, target, fmt)
    return Exported(written, fmt, content.from_device, content.stale, content.missing)


def _write(content: _Content, target: Path, fmt: str) -> Path:
    """The document (and for Markdown its files folder). On failure nothing of this export
    is left: the folders it made on the way are removed again, and what was there before
    (an earlier export of the same name) is untouched (LocalFileError, UnsafePath)."""
    made = _missing_folders(target.parent)
    try:
        if fmt == "json":
            write_private(target.parent, target.name, _json_document(content))
        else:
            _write_markdown(content, target)
    except BaseException:
        for folder in made:  # deepest first; a folder someone filled meanwhile stays
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    return target


def _missing_folders(folder: Path) -> list[Path]:
    """The folders on the way to `folder` that do not exist yet, deepest first."""
    missing: list[Path] = []
    while not folder.exists() and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    return missing


def _json_document(content: _Content) -> str:
    artifacts = []
    for meta, path in content.artifacts:
        try:
            data = path.read_bytes()
        except OSError as exc:  # the cache lost the file since it was verified
            raise LocalFileError(
                f"Could not read the file {meta.name!r}: {exc.strerror or exc}. Nothing was "
                "written."
            ) from exc
        artifacts.append({**asdict(meta), "content_base64": base64.b64encode(data).decode()})
    document = {
        "format": "converge.conversation",
        "version": FORMAT_VERSION,
        "session": content.session.to_view_json(),
        "events": [asdict(e) for e in content.events],
        "artifacts": artifacts,
    }
    return json.dumps(document, ensure_ascii=False, indent=2)


def _write_markdown(content: _Content, target: Path) -> None:
    """Every file and the document are written in a staging folder beside the target first,
    then moved into place: a failure while writing (a cached file gone, a full disk) leaves
    the files folder of an earlier export of the same name as it was."""
    private_dir(target.parent)
    document_path = inside(target.parent, target.name)
    # The folder's name follows the document's (the user's choice), made one safe component.
    folder_name = safe_file_name(f"{target.stem} files", "files")
    folder = inside(target.parent, folder_name) if content.artifacts else None
    staging = Path(tempfile.mkdtemp(prefix=".converge-export-", dir=target.parent))
    try:
        files: dict[str, tuple[Artifact, str]] = {}
        used: set[str] = set()
        for meta, path in content.artifacts:
            name = unique_name(safe_file_name(meta.name), used)
            copy_private(path, staging, name)
            files[meta.id] = (meta, f"{folder_name}/{name}")
        markdown = to_markdown(content.session, content.events, files)
        staged_document = write_private(staging, STAGED_DOCUMENT, markdown)
        try:
            if folder is not None:
                private_dir(folder)
                for _meta, relative in files.values():
                    name = relative.removeprefix(f"{folder_name}/")
                    os.replace(staging / name, inside(folder, name))
            os.replace(staged_document, document_path)
        except OSError as exc:
            raise LocalFileError(
                f"Could not move the export into {target.parent}: {exc.strerror or exc}."
            ) from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)


#: The document's name in the staging folder: a file's name never starts with a dot
#: (`safe_file_name` strips leading dots), so no file of the conversation can take it.
STAGED_DOCUMENT = ".converge-document.tmp"
