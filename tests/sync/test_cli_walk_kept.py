"""`converge sync` whose walk stopped after writing pages: the walk writes as it goes and
resumes, so the pages it wrote stay, also on an account's first sync (else a too-big
account could never get past its first pass), and the command says so, never "Nothing was
changed."

A subprocess, as a user runs it, against the hostile server whose second page hands back
the first page's cursor: the walk writes two pages, then the guard stops it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.sync.hostile_server import hostile_server
from tests.sync.test_cli_live import conn, converge


def test_a_walk_stopped_after_writing_pages_keeps_them_and_never_says_nothing_changed(
    tmp_path: Path,
) -> None:
    profile = tmp_path / "p"
    with hostile_server("repeating_cursor") as server:
        result = converge("sync", *conn(server.url, profile))
        assert result.returncode == 1, result
        assert "Nothing was changed" not in result.stderr, result.stderr
        assert "page cursor it gave before" in result.stderr, result.stderr
        assert "kept" in result.stderr, result.stderr
        listed = converge("ls", "--json", *conn(server.url, profile))
    assert listed.returncode == 0, listed
    assert len(json.loads(listed.stdout)) > 0  # the pages walked are in the mirror
