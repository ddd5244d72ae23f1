"""The Markdown export reads events through their typed payloads: each kind it writes, and an
event it cannot read is left out rather than written as "None" or fetched as artifact "None"."""

from __future__ import annotations

from typing import Any

from sync.files.export import artifact_ids, to_markdown
from sync.wire.models import Artifact, Event, SessionView
from tests.hostile_content import HOSTILE, unsafe_chars

SESSION = SessionView(
    "ses_1", "Trip", "2026-11-30T05:00:00.000000Z", "2026-11-30T06:00:00.000000Z", None, None
)


def events(*kinds: tuple[str, dict[str, Any]]) -> list[Event]:
    at = "2026-11-30T05:14:13.123456Z"
    return [Event("ses_1", "run_1", n, t, at, d) for n, (t, d) in enumerate(kinds, start=1)]


def text(role: str, words: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": words}]}


def test_markdown_writes_messages_tools_approvals_files_and_run_ends() -> None:
    transcript = events(
        ("run.started", {}),
        ("message.user", text("user", "Pack?")),
        ("message.assistant.delta", {"text": "Echo"}),
        ("message.assistant", text("assistant", "Echo: Pack?")),
        ("tool.invocation", {"tool": "search", "status": "succeeded", "output": "ok"}),
        ("approval.resolved", {"approval_id": "apr_1", "decision": "approved"}),
        ("artifact.created", {"artifact_id": "art_1", "name": "notes.txt"}),
        ("artifact.created", {"artifact_id": "art_2", "name": "gone.txt"}),
        ("memory.formed", {"memory_id": "mem_1"}),
        ("run.failed", {"error": "scripted failure"}),
        ("run.cancelled", {}),
    )
    meta = Artifact("art_1", "ses_1", "run_1", "notes.txt", "text/plain", 3, "00", "t")
    body = to_markdown(SESSION, transcript, {"art_1": (meta, "trip files/notes.txt")})
    assert body.split("\n")[3:] == [
        "",
        "**You:**",
        "",
        "Pack?",
        "",
        "**Assistant:**",
        "",
        "Echo: Pack?",
        "",
        "> Tool `search`: succeeded",
        "",
        "> Approval: approved",
        "",
        "📎 [notes.txt](trip%20files/notes.txt)",
        "",
        "📎 gone.txt (not available)",
        "",
        "> The reply failed.",
        "",
        "> Stopped.",
        "",
    ]


def test_markdown_leaves_out_what_it_cannot_read() -> None:
    transcript = events(
        ("message.user", {"content": [{"type": "text", "text": None}, {"type": "image"}]}),
        ("artifact.created", {"name": "no-id.txt"}),
        ("tool.invocation", {"tool": None}),
        ("brand.new.kind", {"text": "?"}),
    )
    body = to_markdown(SESSION, transcript, {})
    assert "None" not in body and "no-id.txt" not in body and "?" not in body
    assert "[image]" in body and "> Tool `tool`:" in body


def test_an_export_fetches_each_named_artifact_once_and_never_one_without_an_id() -> None:
    transcript = events(
        ("artifact.created", {"artifact_id": "art_2", "name": "b"}),
        ("artifact.created", {"name": "no id"}),
        ("artifact.created", {"artifact_id": None, "name": "null id"}),
        ("artifact.created", {"artifact_id": "art_1", "name": "a"}),
        ("artifact.created", {"artifact_id": "art_2", "name": "b again"}),
    )
    assert artifact_ids(transcript) == ["art_2", "art_1"]


def test_markdown_is_inert_text_whatever_the_server_sent() -> None:
    """A Markdown export is read with `cat` and `less` as often as in an editor: a terminal
    escape in a message, a tool's name, a file's name or the title was written as itself
    (CONTRACT §10.1). Each is now its visible escape; line feeds and tabs are kept."""
    hostile = SessionView(
        "ses_1",
        f"Trip {HOSTILE}",
        "2026-11-30T05:00:00.000000Z",
        "2026-11-30T06:00:00.000000Z",
        None,
        None,
    )
    transcript = events(
        ("message.user", text("user", f"line one\n\tindented {HOSTILE}")),
        ("message.assistant", text("assistant", HOSTILE)),
        ("tool.invocation", {"tool": HOSTILE, "status": HOSTILE}),
        ("approval.resolved", {"approval_id": "apr_1", "decision": HOSTILE}),
        ("artifact.created", {"artifact_id": "art_1", "name": HOSTILE}),
        ("artifact.created", {"artifact_id": "art_2", "name": HOSTILE}),
    )
    meta = Artifact("art_1", "ses_1", "run_1", HOSTILE, "text/plain", 3, "00", "t")
    body = to_markdown(hostile, transcript, {"art_1": (meta, "trip files/x.txt")})
    assert [c for c in unsafe_chars(body) if c != "\t"] == []
    assert "line one\n\tindented \\u001b]0;pwned" in body
    assert body.count("\\u202e") == 8  # every field, escaped once


def test_markdown_keeps_windows_line_ends_as_line_ends() -> None:
    transcript = events(("message.user", text("user", "one\r\ntwo\rthree")))
    body = to_markdown(SESSION, transcript, {})
    assert "one\ntwo\\u000dthree" in body  # a lone CR could overwrite a line: still escaped
