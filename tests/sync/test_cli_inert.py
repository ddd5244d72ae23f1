"""What the command line prints is inert (CONTRACT §10.1): every command, run as a user runs
it (a subprocess), against a server that sends terminal escapes, C1 controls and bidi
overrides in ids, titles and error messages. No such byte may reach stdout or stderr, and
the replacement must be visible (`\\u001b`...), so a QA engineer sees what was sent."""

from __future__ import annotations

import json
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sync import wording
from tests.hostile_content import (
    HOSTILE,
    HOSTILE_ID,
    HOSTILE_RUN,
    HostileServer,
    envelope,
    hostile_server,
    session,
    unsafe_chars,
)
from tests.sync.helpers import Server, run
from tests.sync.test_cli_live import REPO, conn, converge

# How the hostile string looks once replaced: each control visible where it was.
SHOWN = "\\u001b]0;pwned\\u0007\\u001b]52;c;ZWNobyBwd25lZA==\\u0007\\u001b[2J\\u009b31m"


@pytest.fixture
def hostile() -> Iterator[HostileServer]:
    with hostile_server() as server:
        yield server


def first_line(proc: subprocess.Popen[str], timeout: float = 30) -> str:
    """The process's first line of stdout; a process that prints none fails the test
    after `timeout` s instead of hanging it."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, f"no line within {timeout:g} s"
    return proc.stdout.readline()


def assert_inert(result: Any) -> None:
    """Neither stream carries a byte a terminal would obey."""
    assert unsafe_chars(result.stdout) == [], result.stdout
    assert unsafe_chars(result.stderr) == [], result.stderr


def test_sync_prints_hostile_ids_inert_and_visible(hostile: HostileServer, tmp_path: Path) -> None:
    hostile.sessions = [session(HOSTILE_ID, HOSTILE)]
    result = converge("sync", *conn(hostile.url, tmp_path / "p"))
    assert result.returncode == 0, result.stderr
    assert_inert(result)
    assert f"inserted 1: ses_{SHOWN}" in result.stdout
    assert "\\u202edef\\u2066\\u200b\\u2028end" in result.stdout
    assert result.stdout.count("\n") == 3  # the ids' CR and U+2028 started no line


def test_sync_json_round_trips_hostile_ids_without_a_control_byte(
    hostile: HostileServer, tmp_path: Path
) -> None:
    hostile.sessions = [session(HOSTILE_ID, HOSTILE)]
    result = converge("sync", "--json", *conn(hostile.url, tmp_path / "p"))
    assert result.returncode == 0, result.stderr
    assert_inert(result)
    assert json.loads(result.stdout)["inserted"] == [HOSTILE_ID]


def test_sync_failure_shows_a_hostile_error_message_inert(
    hostile: HostileServer, tmp_path: Path
) -> None:
    hostile.error = (401, envelope("unauthorized", f"token refused\n{HOSTILE}"))
    result = converge("sync", *conn(hostile.url, tmp_path / "p"))
    assert result.returncode == 1
    assert_inert(result)
    assert SHOWN in result.stderr
    # The server's newline did not forge a second line of output.
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("converge: ")


def test_ls_and_ls_json_of_hostile_rows_are_inert(hostile: HostileServer, tmp_path: Path) -> None:
    hostile.sessions = [session(HOSTILE_ID, HOSTILE, active_run_id=HOSTILE_RUN)]
    profile = tmp_path / "p"
    assert converge("sync", *conn(hostile.url, profile)).returncode == 0
    plain = converge("ls", "--profile", str(profile))
    assert plain.returncode == 0, plain.stderr
    assert_inert(plain)
    (line,) = plain.stdout.splitlines()  # one row, one line
    assert line.startswith(f"ses_{SHOWN}") and f"[running run_{SHOWN}" in line
    as_json = converge("ls", "--json", "--profile", str(profile))
    assert as_json.returncode == 0, as_json.stderr
    assert_inert(as_json)
    (row,) = json.loads(as_json.stdout)
    assert (row["id"], row["title"], row["active_run_id"]) == (HOSTILE_ID, HOSTILE, HOSTILE_RUN)


def test_delete_confirmation_and_refusal_with_a_hostile_title_and_run_are_inert(
    hostile: HostileServer, tmp_path: Path
) -> None:
    hostile.sessions = [session(HOSTILE_ID, HOSTILE, active_run_id=HOSTILE_RUN)]
    profile = tmp_path / "p"
    assert converge("sync", *conn(hostile.url, profile)).returncode == 0
    hostile.fail = frozenset({"DELETE"})
    hostile.error = (
        409,
        envelope("conflict", HOSTILE, reason="active_run_exists", active_run_id=HOSTILE_RUN),
    )
    result = converge("delete", *conn(hostile.url, profile), HOSTILE_ID, stdin="y\n")
    assert result.returncode == 3, result.stderr
    assert_inert(result)
    question, consequences, *rest = result.stderr.splitlines()
    # The title's override is shown, not obeyed: the sentence keeps its order around it.
    assert question.startswith("Delete “") and question.endswith("end”?")
    assert SHOWN in question and "\\u202edef" in question
    assert consequences == wording.delete_consequences(1)
    assert f"run_{SHOWN}" in rest[-1]  # the 409's message names the (hostile) run id


def test_delete_yes_prints_a_hostile_id_inert(hostile: HostileServer, tmp_path: Path) -> None:
    hostile.sessions = [session(HOSTILE_ID, HOSTILE)]
    profile = tmp_path / "p"
    assert converge("sync", *conn(hostile.url, profile)).returncode == 0
    hostile.fail = frozenset({"DELETE"})
    hostile.error = (404, envelope("not_found", HOSTILE, reason="deleted"))
    result = converge("delete", *conn(hostile.url, profile), HOSTILE_ID, "--yes")
    assert result.returncode == 0, result.stderr
    assert_inert(result)
    assert result.stdout.startswith(f"deleted ses_{SHOWN}")


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_watch_lines_of_hostile_passes_are_inert(
    hostile: HostileServer, tmp_path: Path, as_json: bool
) -> None:
    hostile.sessions = [session(HOSTILE_ID, HOSTILE)]
    args = ["watch", *conn(hostile.url, tmp_path / "p"), "--interval", "0"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.main", *args, *(["--json"] if as_json else [])],
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = first_line(proc)  # the connect pass's line
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert unsafe_chars(first + out) == [] and unsafe_chars(err) == []
    if as_json:
        assert json.loads(first)["inserted"] == [HOSTILE_ID]
    else:
        assert first.startswith("connect: +1") and f"ses_{SHOWN}" in first


def test_watch_line_of_a_failed_pass_shows_the_hostile_error_inert(
    hostile: HostileServer, tmp_path: Path
) -> None:
    hostile.error = (401, envelope("unauthorized", HOSTILE))
    args = ["watch", *conn(hostile.url, tmp_path / "p"), "--interval", "0"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.main", *args],
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = first_line(proc)  # the connect pass's line
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert unsafe_chars(first + out) == [] and unsafe_chars(err) == []
    assert first.startswith("connect: failed") and SHOWN in first


def test_a_stub_title_with_bidi_overrides_is_shown_escaped_by_ls_and_delete(
    live_server: Any, tmp_path: Path
) -> None:
    """The real stub keeps format characters in a title (only Cc is removed, CONTRACT §2):
    set through the control plane, they must not reorder `ls`'s row or the question."""
    text = "abc\u202edef\u2067ghi <b>x</b>"

    async def setup() -> str:
        async with Server(live_server.url) as server:
            return (await server.control_session(text)).id

    session_id = run(setup())
    profile = tmp_path / "p"
    assert converge("sync", *conn(live_server.url, profile)).returncode == 0
    listed = converge("ls", "--profile", str(profile))
    assert_inert(listed)
    assert listed.stdout.rstrip("\n").endswith("abc\\u202edef\\u2067ghi <b>x</b>")
    asked = converge("delete", *conn(live_server.url, profile), session_id, stdin="n\n")
    assert asked.returncode == 4
    assert_inert(asked)
    assert asked.stderr.startswith("Delete “abc\\u202edef\\u2067ghi <b>x</b>”?\n")
