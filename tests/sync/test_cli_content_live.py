"""`converge show` and `converge search` (CONTRACT §11) as a user runs them: offline, after a
sync, with the server stopped; JSON shapes exact, output for people inert."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.hostile_content import HOSTILE, unsafe_chars
from tests.sync.helpers import Server, run
from tests.sync.test_cli_live import conn, converge
from tests.sync.test_cli_offline_cost import one_conversation


def test_show_and_search_answer_offline_in_the_contract_shapes_and_stay_inert(
    live_server: Any, tmp_path: Path
) -> None:
    async def setup() -> tuple[str, str, dict[str, Any]]:
        async with Server(live_server.url) as server:
            plain = await server.control_session("Quarterly Réunion notes")
            hostile = await server.control_session(f"hostile {HOSTILE} marmalade")
            auth = {"Authorization": f"Bearer {server.token}"}
            view = await server.http.get(f"/v1/sessions/{plain.id}", headers=auth)
            events = await server.http.get(f"/v1/sessions/{plain.id}/events", headers=auth)
            served = {"session": view.json(), "events": events.json()["items"]}
            return plain.id, hostile.id, served

    plain_id, hostile_id, served = run(setup())
    profile = tmp_path / "p"
    assert converge("sync", *conn(live_server.url, profile)).returncode == 0
    live_server.stop()  # show and search never use the network
    offline = ["--profile", str(profile)]

    shown = converge("show", plain_id, "--json", *offline)
    assert shown.returncode == 0 and shown.stderr == ""
    document = json.loads(shown.stdout)
    assert set(document) == {"session", "events"}
    assert document == served  # the server's SessionView and events, field for field
    (event,) = document["events"]
    assert set(event) == {"session_id", "run_id", "sequence", "type", "created_at", "data"}
    assert event["data"]["content"][0]["text"] == "Quarterly Réunion notes"

    found = converge("search", "reunion", "--json", *offline)
    assert found.returncode == 0 and found.stderr == ""
    (hit,) = json.loads(found.stdout)
    assert set(hit) == {"id", "title", "updated_at", "snippet"}
    assert hit["id"] == plain_id and "Réunion" in hit["snippet"]

    assert json.loads(converge("search", "no-such-word", "--json", *offline).stdout) == []
    for command in (["show", hostile_id], ["search", "marmalade"]):
        result = converge(*command, *offline)
        assert result.returncode == 0, result.stderr
        assert "marmalade" in result.stdout
        assert unsafe_chars(result.stdout) == [], command

    missing = converge("show", "ses_nowhere", *offline)
    assert missing.returncode == 1 and "ses_nowhere" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_search_prints_every_match_unless_limited_and_says_when_it_cut(
    live_server: Any, tmp_path: Path
) -> None:
    """The engine's search stops at the sidebar's 50 hits; `converge search` printed those 50
    as if they were all. It prints every match, and `--limit N` cuts with a word on stderr."""

    async def setup() -> None:
        async with Server(live_server.url) as server:
            for n in range(60):
                await server.control_session(f"gooseberry {n}")

    run(setup())
    profile = tmp_path / "p"
    assert converge("sync", *conn(live_server.url, profile)).returncode == 0
    offline = ["--profile", str(profile)]
    every = converge("search", "gooseberry", "--json", *offline)
    assert every.returncode == 0 and every.stderr == ""
    assert len(json.loads(every.stdout)) == 60
    cut = converge("search", "gooseberry", "--limit", "7", *offline)
    assert cut.returncode == 0
    assert cut.stdout.count("gooseberry") == 14  # each hit: its line and its snippet
    assert "first 7 matches" in cut.stderr
    refused = converge("search", "gooseberry", "--limit", "0", *offline)
    assert refused.returncode == 2 and "--limit" in refused.stderr
    pasted = converge("search", *(f"word{n}" for n in range(1000)), *offline)
    assert pasted.returncode == 2 and pasted.stdout == ""
    assert pasted.stderr.strip().endswith("A search can hold at most 32 words.")


def test_words_and_ids_that_are_not_utf8_find_nothing_and_say_so_in_words(
    tmp_path: Path,
) -> None:
    """Bytes of the command line that are not UTF-8 (a "café" typed in Latin-1) reach the
    program as lone surrogates, which no mirrored text can hold: `search` finds nothing and
    `show` names no such conversation, as for any other text (an "unexpected error"
    before)."""
    one_conversation(tmp_path)
    offline = ["--profile", str(tmp_path)]
    for words in (["caf\udce9"], ["budget", "caf\udce9"], ["budg\udce9t"]):
        found = converge("search", *words, *offline)
        assert (found.returncode, found.stdout, found.stderr) == (
            0,
            "(no matches in the mirror)\n",
            "",
        ), words
    shown = converge("show", "ses_1\udce9", *offline)
    assert shown.returncode == 1, shown
    assert shown.stderr.startswith("converge: No conversation ses_1\\udce9 in the mirror")
