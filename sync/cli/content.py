"""`converge show ID` and `converge search WORDS`: mirrored history read offline (CONTRACT
§11), like `converge ls` (`sync.cli.ls`): no network, the account's mirror alone.

Output for people is inert (`sync.cli.terminal`): a message's line feeds are kept, every other
control, format or bidi character is shown as its escape. `--json` prints one JSON value and
nothing else: `show` an object `{"session": SessionView, "events": [Event]}`, `search` an
array of `{"id", "title", "updated_at", "snippet"}` (the snippet as plain text).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TextIO

from sync.cli.ls import open_mirror
from sync.cli.terminal import for_terminal, json_for_terminal
from sync.errors import MirrorError
from sync.mirror.search import SearchHit
from sync.mirror.search_text import is_text
from sync.profile.profile import Profile


def _line(kind: str, text: str) -> str:
    return f"{kind}: {for_terminal(text, multiline=True)}\n"


def show(profile: Profile, session_id: str, *, json: bool, out: TextIO) -> None:
    """`converge show ID`: the mirrored transcript; a conversation not mirrored is an
    error with words (MirrorError), as is one whose transcript was never fetched."""
    mirror = open_mirror(profile)
    if mirror is None:
        raise MirrorError("There is no mirror yet: run `converge sync` first.")
    row, held = None, None
    try:
        if is_text(session_id):  # else no row's id (`sync.mirror.search_text.is_text`)
            row = mirror.get(session_id)
            held = mirror.mirrored_transcript(session_id)
    finally:
        mirror.close()
    if row is None or held is None:
        raise MirrorError(
            f"No conversation {for_terminal(session_id[:80])} in the mirror "
            "(`converge ls` lists them; `converge sync` refreshes them)."
        )
    if json:
        document = {"session": row.to_view_json(), "events": [asdict(e) for e in held.events]}
        out.write(json_for_terminal(document) + "\n")
        return
    from sync.wire.payloads import payload_of  # `show` alone parses events

    title = for_terminal(row.title) if row.title is not None else "(untitled)"
    out.write(f"{title}\n{for_terminal(row.id)}  {for_terminal(row.updated_at)}\n\n")
    if held.state is None or held.state.evicted or (not held.events and not held.state.current):
        out.write("(its transcript is not on this device: open it or run `converge sync`)\n")
    for event in held.events:
        out.write(_render(event.type, payload_of(event)))


def _render(kind: str, payload: object) -> str:
    from sync.wire.payloads import (
        ApprovalRequested,
        ApprovalResolved,
        ArtifactCreated,
        AssistantMessage,
        RunFailed,
        ToolInvocation,
        UserMessage,
    )

    if isinstance(payload, UserMessage):
        return _line("You", payload.message.text)
    if isinstance(payload, AssistantMessage):
        return _line("Assistant", payload.message.text)
    if isinstance(payload, ToolInvocation):
        head = f"Tool {payload.tool or '?'}" + (f" ({payload.status})" if payload.status else "")
        return _line(head, payload.output_text)
    if isinstance(payload, ArtifactCreated):
        return _line("File", payload.name or payload.artifact_id)
    if isinstance(payload, ApprovalRequested):
        return _line("Approval asked", payload.tool or "?")
    if isinstance(payload, ApprovalResolved):
        return _line("Approval", payload.decision or "?")
    if isinstance(payload, RunFailed):
        return _line("Run failed", payload.error or "")
    return ""  # run markers, deltas, memories: the window draws them, a transcript does not


def search(
    profile: Profile, words: list[str], *, json: bool, out: TextIO, limit: int | None = None
) -> bool:
    """`converge search WORDS`: matching conversations, most recently active first; every
    one, or the first `limit`. Returns whether `limit` cut the list (the caller says so)."""
    mirror = open_mirror(profile)
    try:
        query = " ".join(words)
        bound = None if limit is None else limit + 1
        hits = mirror.search(query, bound) if mirror is not None else []
    finally:
        if mirror is not None:
            mirror.close()
    cut = limit is not None and len(hits) > limit
    hits = hits[:limit] if cut else hits
    if json:
        out.write(json_for_terminal([hit.to_json() for hit in hits]) + "\n")
        return cut
    if not hits:
        out.write("(no matches in the mirror)\n")
    # One write: thousands of hits would be as many writes to an unbuffered stdout.
    out.write("".join(map(_hit_lines, hits)))
    return cut


def _hit_lines(hit: SearchHit) -> str:
    # Escaping is per character: the first line's fields made safe at once.
    title = hit.title if hit.title is not None else "(untitled)"
    head = for_terminal(f"{hit.id}  {hit.updated_at}  {title}")
    return f"{head}\n    {for_terminal(hit.snippet.text)}\n"
