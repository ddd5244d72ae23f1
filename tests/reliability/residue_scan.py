"""Plant unique markers in every kind of conversation content, then look for them on disk.

CONTRACT §9.2: after the 204 and one maintenance pass, no file the server writes (database,
WAL or journal, object store, logs) and no file of a client profile (mirror, WAL, artifact
cache, log) holds any byte of a deleted conversation. The scan reads every byte of every file
under the given folders and looks for each marker in UTF-8, UTF-16-LE and UTF-16-BE.

A second conversation gets markers of its own and is NOT deleted: the scan must find those,
which proves it can see content where content is (a scan that finds nothing anywhere proves
nothing).
"""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from sync.wire.models import Event
from tests.sync.helpers import Server

#: The kinds of content a conversation leaves, each planted as its own marker.
KINDS = (
    "title",  # the first user message's first 64 code points
    "message",  # user message text beyond the title
    "artifact_name",  # /artifact NAME (also the knowledge document's title)
    "artifact_bytes",  # /artifact NAME TEXT
    "memory",  # /remember TEXT (memory text, consolidation, recall)
    "tool",  # /approve TOOL (approval, tool invocation input and output)
)

ENCODINGS = ("utf-8", "utf-16-le", "utf-16-be")


@dataclass
class Markers:
    """One conversation's markers, by kind."""

    by_kind: dict[str, str] = field(default_factory=dict)

    @classmethod
    def fresh(cls, label: str) -> Markers:
        tag = secrets.token_hex(6)
        return cls({kind: f"Zq{label}{kind.replace('_', '')}{tag}" for kind in KINDS})

    def values(self) -> list[str]:
        return list(self.by_kind.values())


@dataclass
class Planted:
    session_id: str
    artifact_ids: list[str]
    markers: Markers


async def plant_conversation(server: Server, markers: Markers) -> Planted:
    """A session whose runs write every kind of content the scripted agent can write."""
    m = markers.by_kind
    view = await server.api.create_session()
    texts = [
        f"{m['title']} opens the conversation, then {m['message']} follows.",
        f"/artifact {m['artifact_name']}.txt {m['artifact_bytes']} is the whole file",
        f"/remember {m['memory']} is worth keeping",
        f"does {m['memory']} come back when recalled?",
    ]
    for text in texts:
        run_id = await server.start(view.id, text)
        await server.wait_run(run_id)
    # An approval and a tool invocation that names the tool.
    run_id = await server.start(view.id, f"/approve {m['tool']}")
    approval_id = await _pending_approval(server, run_id)
    await server.api.decide_approval(approval_id, "approve")
    await server.wait_run(run_id)
    artifact_ids = [
        event.data["artifact_id"]
        for event in await _all_events(server, view.id)
        if event.type == "artifact.created"
    ]
    return Planted(view.id, artifact_ids, markers)


async def _pending_approval(server: Server, run_id: str) -> str:
    """Poll the run's events until its approval is requested (bounded by the test's deadline)."""
    while True:
        for event in await server.api.run_events(run_id):
            if event.type == "approval.requested":
                return str(event.data["approval_id"])
        await asyncio.sleep(0.02)


async def _all_events(server: Server, session_id: str) -> list[Event]:
    out: list[Event] = []
    after: int | None = None
    while True:
        page = await server.api.session_events(session_id, after=after)
        out.extend(page.items)
        if page.next_after is None:
            return out
        after = page.next_after


def scan(folders: list[Path], needles: list[str]) -> dict[str, list[str]]:
    """For each needle, the files (and encodings) that hold it: `path [encoding]`."""
    patterns = {needle: [(enc, needle.encode(enc)) for enc in ENCODINGS] for needle in needles}
    found: dict[str, list[str]] = {needle: [] for needle in needles}
    for folder in folders:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            try:
                data = path.read_bytes()
            except OSError:
                continue  # a file that vanished while we walked (a WAL truncated meanwhile)
            for needle, encoded in patterns.items():
                for enc, raw in encoded:
                    if raw in data:
                        found[needle].append(f"{path} [{enc}]")
    return found


def holders(found: dict[str, list[str]]) -> dict[str, list[str]]:
    """Only the needles that were found somewhere."""
    return {needle: where for needle, where in found.items() if where}
