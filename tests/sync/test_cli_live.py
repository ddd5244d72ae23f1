"""The headless command line (CONTRACT §8) as a user runs it: a subprocess per command,
against a REAL stub server."""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from sync import wording
from sync.mirror import sqlite_driver
from sync.mirror.store import Mirror
from sync.profile.profile import Profile
from tests.sync.helpers import Server, run

REPO = Path(__file__).resolve().parents[2]


def converge(
    *args: str, stdin: str = "", env: dict[str, str] | None = None, timeout: float = 60
) -> Any:
    """Run the CLI; a run longer than `timeout` s fails the test (TimeoutExpired)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CONVERGE_")}
    clean.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "app.main", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=REPO,
        env=clean,
        timeout=timeout,
    )


#: Token files live outside every test's folder, so tests that list a folder see only theirs.
_TOKEN_DIR = Path(tempfile.mkdtemp(prefix="converge-test-tokens-"))
atexit.register(shutil.rmtree, _TOKEN_DIR, True)


def conn(url: str, profile: Path, token: str = "dev-alice") -> list[str]:
    """The connection arguments, the token in a 0600 file beside the profile (the way that
    keeps it out of the process list; `--token` itself would add a warning to stderr)."""
    token_file = _TOKEN_DIR / f"token-{hashlib.sha256(token.encode()).hexdigest()[:16]}"
    fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(token + "\n")
    return ["--server", url, "--token-file", str(token_file), "--profile", str(profile)]


def mirror_ids(profile: Path) -> set[str]:
    """The mirror's ids, read in-process (cheaper than one more subprocess)."""
    (path,) = (profile / "accounts").glob("*/mirror.sqlite3")
    mirror = Mirror.open(path, create=False)
    try:
        return {r.id for r in mirror.rows()}
    finally:
        mirror.close()


def ls_json(profile: Path) -> list[dict[str, Any]]:
    result = converge("ls", "--json", "--profile", str(profile))
    assert result.returncode == 0, result.stderr
    parsed = json.loads(result.stdout)
    assert isinstance(parsed, list)
    return parsed


def test_sync_prints_inserted_updated_pruned_and_exits_zero(
    live_server: Any, tmp_path: Path
) -> None:
    async def setup() -> list[str]:
        async with Server(live_server.url) as server:
            return [(await server.create(f"chat {i}")).id for i in range(3)]

    ids = run(setup())
    profile = tmp_path / "p"
    first = converge("sync", *conn(live_server.url, profile))
    assert first.returncode == 0, first.stderr
    assert "inserted 3" in first.stdout and all(i in first.stdout for i in ids)

    async def mutate() -> str:
        async with Server(live_server.url) as server:
            await server.delete(ids[0])
            await server.wait_run(await server.start(ids[1], "more"))
            return (await server.create("new one")).id

    new = run(mutate())
    # options after the subcommand, in any order, and from the environment
    second = converge(
        "sync",
        "--profile",
        str(profile),
        env={"CONVERGE_SERVER": live_server.url, "CONVERGE_TOKEN": "dev-alice"},
    )
    assert second.returncode == 0, second.stderr
    assert f"inserted 1: {new}" in second.stdout
    assert f"updated 1: {ids[1]}" in second.stdout
    assert f"pruned 1: {ids[0]}" in second.stdout
    third = converge("sync", "--json", *conn(live_server.url, profile))
    assert third.returncode == 0, third.stderr
    assert json.loads(third.stdout) == {
        "inserted": [],
        "updated": [],
        "pruned": [],
        "kept": [],
        "not_modified": True,
        "requests": 1,
        "transcripts_fetched": 0,
        "transcripts_left": 0,
    }


def test_ls_json_prints_exactly_one_array_in_sidebar_order(
    live_server: Any, tmp_path: Path
) -> None:
    async def setup() -> None:
        async with Server(live_server.url) as server:
            for i in range(4):
                await server.create(f"chat {i}")
            await server.control_session("old", updated_at="2020-01-01T00:00:00.000000Z")

    run(setup())
    profile = tmp_path / "p"
    assert converge("sync", *conn(live_server.url, profile)).returncode == 0
    live_server.stop()  # ls never uses the network
    result = converge(
        "ls", "--json", "--server", live_server.url, "--profile", str(profile),
        env={"CONVERGE_TOKEN": "dev-alice"},
    )  # fmt: skip
    assert result.returncode == 0 and result.stderr == ""
    rows = json.loads(result.stdout)  # the whole stdout is one JSON document
    assert len(rows) == 5
    assert all(
        set(r) == {"id", "title", "updated_at", "active_run_id", "last_run_id"} for r in rows
    )
    keys = [(r["updated_at"], r["id"]) for r in rows]
    assert keys == sorted(keys, reverse=True)
    assert rows[-1]["title"] == "old"
    plain = converge("ls", "--profile", str(profile))
    assert plain.returncode == 0 and "chat 3" in plain.stdout


def test_ls_of_a_profile_that_never_synced_is_empty_and_creates_nothing(tmp_path: Path) -> None:
    assert ls_json(tmp_path / "fresh") == []
    assert not (tmp_path / "fresh").exists()


def test_delete_yes_removes_from_server_and_mirror(live_server: Any, tmp_path: Path) -> None:
    async def setup() -> str:
        async with Server(live_server.url) as server:
            await server.create("stays")
            return (await server.create("goes")).id

    victim = run(setup())
    profile = tmp_path / "p"
    assert converge("sync", *conn(live_server.url, profile)).returncode == 0
    # CONTRACT §8's own example: options before the id, --yes after it
    result = converge("delete", *conn(live_server.url, profile), victim, "--yes")
    assert result.returncode == 0, result.stderr
    assert victim not in mirror_ids(profile)

    async def gone() -> bool:
        async with Server(live_server.url) as server:
            return not await server.exists(victim)

    assert run(gone())


def test_delete_asks_first_and_no_is_the_default(live_server: Any, tmp_path: Path) -> None:
    async def setup() -> str:
        async with Server(live_server.url) as server:
            return (await server.create("precious")).id

    sid = run(setup())
    profile = tmp_path / "p"
    assert converge("sync", *conn(live_server.url, profile)).returncode == 0
    declined = converge("delete", sid, *conn(live_server.url, profile), stdin="\n")
    assert declined.returncode != 0
    assert wording.delete_confirmation("precious") in declined.stderr
    assert "every synchronized client" in declined.stderr
    assert "cannot be undone" in declined.stderr
    assert sid in mirror_ids(profile)
    accepted = converge("delete", sid, *conn(live_server.url, profile), stdin="y\n")
    assert accepted.returncode == 0, accepted.stderr
    assert sid not in mirror_ids(profile)


def test_delete_during_a_run_exits_non_zero_names_the_run_and_keeps_everything(
    live_server: Any, tmp_path: Path
) -> None:
    async def setup() -> tuple[str, str]:
        async with Server(live_server.url) as server:
            view = await server.create()
            return view.id, await server.start(view.id, "/wait 20")

    sid, run_id = run(setup())
    profile = tmp_path / "p"
    assert converge("sync", *conn(live_server.url, profile)).returncode == 0
    result = converge("delete", sid, "--yes", *conn(live_server.url, profile))
    assert result.returncode not in (0, 1)  # its own code: 3
    assert run_id in result.stderr and "Traceback" not in result.stderr
    assert sid in mirror_ids(profile)

    async def check_and_stop() -> None:
        async with Server(live_server.url) as server:
            state = await server.api.get_run(run_id)
            assert not state.is_terminal and not state.cancel_requested
            await server.api.cancel_run(run_id)

    run(check_and_stop())


def closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_sync_with_the_server_unreachable_fails_fast_and_changes_nothing(
    live_server: Any, tmp_path: Path
) -> None:
    async def setup() -> None:
        async with Server(live_server.url) as server:
            await server.create("mirrored")

    run(setup())
    profile = tmp_path / "p"
    assert converge("sync", *conn(live_server.url, profile)).returncode == 0
    before = ls_json(profile)
    result = converge("sync", *conn(f"http://127.0.0.1:{closed_port()}", profile), timeout=30)
    assert result.returncode != 0
    assert "Cannot reach the server" in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""
    assert ls_json(profile) == before


def test_sync_with_a_rejected_token_says_so(live_server: Any, tmp_path: Path) -> None:
    result = converge("sync", *conn(live_server.url, tmp_path / "p", token="wrong"))
    assert result.returncode != 0
    assert "token" in result.stderr and "Traceback" not in result.stderr


def test_missing_server_is_a_clear_message(tmp_path: Path) -> None:
    result = converge("sync", "--profile", str(tmp_path / "p"))
    assert result.returncode != 0
    assert "CONVERGE_SERVER" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "server", ["http://localhost:99999", "http://[::1", "ftp://127.0.0.1/", "127.0.0.1:8765"]
)
def test_a_server_url_that_cannot_name_a_server_is_a_clear_message(
    tmp_path: Path, server: str
) -> None:
    """A port out of range crashed the pass with an exception group's traceback on stderr;
    a broken IPv6 literal was an "unexpected error". Both are refused before any request."""
    result = converge("sync", *conn(server, tmp_path / "p"))
    assert result.returncode == 1
    said = f"converge: The server URL {server.rstrip('/')} is not "  # the profile drops a "/"
    assert result.stderr.startswith(said)
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1
    assert not (tmp_path / "p" / "accounts").exists()


@pytest.mark.parametrize("command", [["ls", "--json"], ["sync"]])
def test_a_mirror_from_a_newer_version_is_refused_untouched(
    tmp_path: Path, command: list[str]
) -> None:
    profile = tmp_path / "p"
    mirror = Profile.load(profile, server="http://127.0.0.1:9", token="t", environ={}).mirror_path
    mirror.parent.mkdir(parents=True)
    db = sqlite_driver.connect(mirror)
    db.execute("PRAGMA user_version=999")
    db.commit()
    db.close()
    before = mirror.read_bytes()
    result = converge(
        *command, "--profile", str(profile), "--server", "http://127.0.0.1:9", "--token", "t"
    )
    assert result.returncode != 0
    assert "newer version" in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""
    assert mirror.read_bytes() == before


@pytest.mark.slow
def test_sync_against_a_server_that_never_answers_gives_up_within_30_s(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # accepts connections (kernel backlog) but never reads or answers
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        # Its own timeouts end it; this one only stops a client that would wait for ever.
        result = converge("sync", *conn(url, tmp_path / "p"), timeout=30)
    assert result.returncode != 0
    assert "Cannot reach the server" in result.stderr and "Traceback" not in result.stderr


def test_sync_exits_non_zero_when_a_point_read_is_inconclusive(
    live_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from sync.cli import main as cli
    from sync.engine import SyncEngine
    from tests.sync.faults import FaultTransport

    async def setup() -> list[str]:
        async with Server(live_server.url) as server:
            return [(await server.create(f"chat {i}")).id for i in range(2)]

    ids = run(setup())
    profile = tmp_path / "p"
    args = ["sync", *conn(live_server.url, profile)]
    assert cli.main(args) == 0
    run(_delete_on_server(live_server.url, ids[0]))
    transport = FaultTransport()
    transport.add("GET", f"/v1/sessions/{ids[0]}", "status", status=503, times=None)
    real_open = SyncEngine.open

    async def open_with_faults(profile: Any, **kwargs: Any) -> SyncEngine:
        return await real_open(profile, transport=transport, **kwargs)

    monkeypatch.setattr(SyncEngine, "open", open_with_faults)
    capsys.readouterr()
    assert cli.main(args) == 1
    out, err = capsys.readouterr()
    assert f"kept 1: {ids[0]}" in out and "pruned 0" in out
    assert "Run `converge sync` again" in err
    assert "could not be checked" in err and "it was kept" in err, err  # and why
    assert ids[0] in mirror_ids(profile)


async def _delete_on_server(url: str, session_id: str) -> None:
    async with Server(url) as server:
        await server.delete(session_id)


def test_watch_prints_a_line_per_pass_follows_changes_and_exits_zero_on_sigint(
    live_server: Any, tmp_path: Path
) -> None:
    import queue
    import signal
    import threading

    async def seed() -> list[str]:
        async with Server(live_server.url) as server:
            return [(await server.create()).id for _ in range(2)]

    ids = run(seed())
    profile = tmp_path / "watcher"
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CONVERGE_")}
    with subprocess.Popen(
        [sys.executable, "-m", "app.main", "watch", *conn(live_server.url, profile)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=clean,
    ) as proc:  # leaving it closes both pipes
        lines: queue.Queue[str] = queue.Queue()
        assert proc.stdout is not None
        stdout = proc.stdout

        def pump() -> None:
            for line in stdout:
                lines.put(line)

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        try:
            first = lines.get(timeout=30)
            assert first.startswith("connect: +2 ~0 -0"), first
            assert set(first.split()[4:]) == set(ids)
            assert live_server.client().delete(f"/v1/sessions/{ids[0]}").status_code == 204
            second = lines.get(timeout=30)  # no timer within 30 s: only the watch explains it
            assert second.split() == ["watch:", "+0", "~0", "-1", ids[0]]
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=30) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            reader.join(timeout=30)  # the pipe is at its end once the process is gone
        assert proc.stderr is not None
        stderr = proc.stderr.read()
    assert "Traceback" not in stderr
    assert mirror_ids(profile) == {ids[1]}
