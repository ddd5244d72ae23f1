"""Client faults: what the desktop client does when its own storage or credentials fail.

Against a real stub server and real mirror files, through the command line
(`sync.cli.main.main`, output captured) and the engine:

- the mirror locked by another writer (a held `BEGIN EXCLUSIVE`): a clear message, exit
  non-zero, and every row still there once the lock goes;
- a corrupt mirror (garbage bytes): refused with a message naming the path; the file is
  neither rewritten nor deleted (the user's data is kept for recovery);
- a mirror from a newer schema: a clear message; the file is left byte-for-byte untouched;
- a full disk while caching artifact bytes (a real 64 KiB tmpfs mounted on the profile's
  cache folder): a clear error, no partial file, the mirror row intact;
- a token revoked mid-session (the server restarted with a `--principals` file lacking
  it, before a pass and between two pages of a walk): the pass reports 401, nothing is
  pruned or written, the engine's status says so, `converge sync` exits non-zero.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from sync.cli import main as cli
from sync.engine import SyncEngine
from sync.errors import CacheError, MirrorError, Unauthenticated
from sync.events import EngineState
from sync.mirror import sqlite_driver
from sync.mirror.store import Mirror
from sync.profile.profile import Profile
from sync.wire.models import SessionPage
from tests.conftest import LiveServer
from tests.reliability.conftest import fill
from tests.reliability.crash_helpers import ServerProcess

MIRROR = "mirror.sqlite3"


def account_mirror(profile: Path, url: str, token: str = "dev-alice") -> Path:
    """Where the profile keeps the mirror of (url, token)'s account (created folders)."""
    path = Profile.load(profile, server=url, token=token, environ={}).mirror_path
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def only_mirror(profile: Path) -> Path:
    """The profile's one account mirror."""
    (path,) = (profile / "accounts").glob(f"*/{MIRROR}")
    return path


def message(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def converge(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run `converge ARGS` in-process; (exit status, stdout, stderr)."""
    capsys.readouterr()
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def conn(url: str, profile: Path, token: str = "dev-alice") -> list[str]:
    return ["--server", url, "--token", token, "--profile", str(profile)]


def mirror_ids(profile: Path) -> set[str]:
    mirror = Mirror.open(only_mirror(profile), create=False)
    try:
        return {row.id for row in mirror.rows()}
    finally:
        mirror.close()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def sibling_files(path: Path) -> set[str]:
    return {p.name for p in path.parent.iterdir() if p.name.startswith(path.name)}


def make_sessions(url: str, token: str, n: int) -> list[str]:
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}) as client:
        ids = []
        for _ in range(n):
            resp = client.post("/v1/sessions", json={})
            assert resp.status_code == 201, resp.text
            ids.append(resp.json()["id"])
        return ids


@pytest.fixture
def synced(
    live_server: LiveServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[LiveServer, Path, list[str]]:
    """A server with three sessions and a profile whose mirror holds them."""
    ids = make_sessions(live_server.url, "dev-alice", 3)
    profile = tmp_path / "profile"
    code, _out, err = converge(capsys, "sync", *conn(live_server.url, profile))
    assert code == 0, err
    assert mirror_ids(profile) == set(ids)
    return live_server, profile, ids


# -- the mirror locked by another writer -----------------------------------------------------


def test_a_mirror_locked_by_another_writer_fails_clearly_and_loses_nothing(
    synced: tuple[LiveServer, Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    server, profile, ids = synced
    new = make_sessions(server.url, "dev-alice", 1)
    holder = sqlite_driver.connect(only_mirror(profile), isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        code, out, err = converge(capsys, "sync", *conn(server.url, profile))
        assert code != 0
        assert str(only_mirror(profile)) in err, err
        assert "locked" in err.lower(), err
        assert "Traceback" not in err
        # `converge ls` only reads: a WAL mirror stays readable while another process writes.
        code, out, err = converge(capsys, "ls", "--json", "--profile", str(profile))
        assert code == 0, err
        assert {row["id"] for row in json.loads(out)} == set(ids)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert mirror_ids(profile) == set(ids)
    code, _out, err = converge(capsys, "sync", *conn(server.url, profile))
    assert code == 0, err
    assert mirror_ids(profile) == set(ids) | set(new)


# -- a corrupt mirror -------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["sync", "ls"])
def test_a_corrupt_mirror_is_refused_by_path_and_kept_for_recovery(
    live_server: LiveServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    profile = tmp_path / "profile"
    path = account_mirror(profile, live_server.url)
    path.write_bytes(b"\x00garbage, not SQLite\xff" * 512)
    before = digest(path)
    args = conn(live_server.url, profile) if command == "sync" else ["--profile", str(profile)]
    code, out, err = converge(capsys, command, *args)
    assert code != 0
    assert str(path) in err, err
    assert "Traceback" not in err
    assert out == ""
    assert path.exists() and digest(path) == before
    assert sibling_files(path) == {MIRROR}  # no -wal/-shm, nothing moved aside or rebuilt


def test_a_corrupt_mirror_fails_the_engine_open_with_a_mirror_error(
    live_server: LiveServer, tmp_path: Path
) -> None:
    profile = tmp_path / "profile"
    path = account_mirror(profile, live_server.url)
    path.write_bytes(b"SQLite format 3\x00" + b"\xde\xad" * 4000)  # a torn header
    before = digest(path)

    async def go() -> None:
        with pytest.raises(MirrorError) as caught:
            await SyncEngine.open(Profile.load(profile, server=live_server.url, token="dev-alice"))
        assert str(path) in caught.value.message

    asyncio.run(go())
    assert digest(path) == before


# -- a mirror from a newer schema -------------------------------------------------------------


def test_a_mirror_from_a_newer_schema_is_left_untouched(
    synced: tuple[LiveServer, Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    server, profile, _ids = synced
    path = only_mirror(profile)
    # closing(): sqlite3's own context manager commits but leaves the connection open.
    with contextlib.closing(sqlite_driver.connect(path)) as db, db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute("PRAGMA journal_mode=DELETE")  # one file, so a digest covers everything
        db.execute("PRAGMA user_version=99")
    before = digest(path)
    make_sessions(server.url, "dev-alice", 1)
    for args in (["sync", *conn(server.url, profile)], ["ls", "--profile", str(profile)]):
        code, _out, err = converge(capsys, *args)
        assert code != 0
        assert "newer version" in err and str(path) in err, err
        assert digest(path) == before
        assert sibling_files(path) == {MIRROR}


# -- a full disk while caching artifact bytes -------------------------------------------------


@pytest.fixture
def tiny_cache(tmp_path: Path, live_server: LiveServer) -> Iterator[Path]:
    """A profile whose cache folder (of dev-alice's account on `live_server`) is a real
    64 KiB tmpfs (mounting needs root)."""
    profile = tmp_path / "profile"
    cache = Profile.load(profile, server=live_server.url, token="dev-alice", environ={}).cache_dir
    cache.mkdir(parents=True)
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", str(cache)],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        reason = f"cannot mount a small tmpfs here: {result.stderr.strip() or result.returncode}"
        print(reason)
        pytest.skip(reason)
    try:
        yield profile
    finally:
        subprocess.run(["umount", "-l", str(cache)], check=False)


def test_a_full_disk_while_caching_bytes_leaves_no_partial_file_and_keeps_the_row(
    live_server: LiveServer, tiny_cache: Path
) -> None:
    profile = tiny_cache
    with live_server.client() as client:
        sid = client.post("/v1/sessions", json={}).json()["id"]
        big = "x" * 90_000  # over the 64 KiB the cache folder can hold
        for text in (f"/artifact big.txt {big}", "/artifact small.txt fits"):
            run = client.post(f"/v1/sessions/{sid}/runs", json={"input": message(text)})
            assert run.status_code == 202, run.text
            deadline = time.monotonic() + 30
            while client.get(f"/v1/runs/{run.json()['id']}").json()["status"] != "completed":
                assert time.monotonic() < deadline, "run did not complete"
                threading.Event().wait(0.02)

    async def go() -> None:
        engine = await SyncEngine.open(
            Profile.load(profile, server=live_server.url, token="dev-alice", environ={})
        )
        try:
            report = await engine.reconcile()
            assert report.ok
            events = await artifacts_by_name(engine, sid)
            big_id = events["big.txt"]
            with pytest.raises(CacheError) as caught:
                await engine.artifact_file(big_id)
            text = caught.value.message
            assert "space" in text.lower() and "big.txt" in text, text
            cache = Profile.load(
                profile, server=live_server.url, token="dev-alice", environ={}
            ).cache_dir
            assert sorted(p.name for p in cache.iterdir()) == []
            assert await engine.row(sid) is not None
            # The cache still works for what fits.
            path = await engine.artifact_file(events["small.txt"])
            assert path.read_bytes() == b"fits"
        finally:
            await engine.close()

    asyncio.run(go())
    assert mirror_ids(profile) == {sid}


async def artifacts_by_name(engine: SyncEngine, sid: str) -> dict[str, str]:
    """The session's artifact ids by name, from its transcript."""
    events = await engine.transcript(sid)
    return {e.data["name"]: e.data["artifact_id"] for e in events if e.type == "artifact.created"}


# -- a token revoked mid-session --------------------------------------------------------------

ALICE = """
[[principal]]
token = "tok-alice"
tenant = "acme"
principal = "alice"
scopes = ["*"]
"""
BOB = """
[[principal]]
token = "tok-bob"
tenant = "acme"
principal = "bob"
scopes = ["*"]
"""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def revocable(tmp_path: Path) -> Iterator[tuple[ServerProcess, Path, Path]]:
    """A subprocess server on a fixed port whose principals file can change at a restart."""
    with_alice = tmp_path / "principals.toml"
    with_alice.write_text(ALICE + BOB)
    without_alice = tmp_path / "revoked.toml"
    without_alice.write_text(BOB)
    server = ServerProcess(
        database_url=f"sqlite:///{tmp_path / 'server.sqlite3'}",
        artifacts=tmp_path / "objects",
        log_path=tmp_path / "server.log",
        port=_free_port(),
        extra_args=("--principals", str(with_alice)),
    )
    try:
        yield server, with_alice, without_alice
    finally:
        server.stop()


def restart_with(server: ServerProcess, principals: Path) -> None:
    server.stop()
    server.extra_args = ("--principals", str(principals))
    server.start()


def test_a_token_revoked_between_passes_prunes_nothing_and_is_reported(
    revocable: tuple[ServerProcess, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server, _with_alice, without_alice = revocable
    url = server.start()
    ids = make_sessions(url, "tok-alice", 3)
    profile = tmp_path / "profile"
    code, out, err = converge(capsys, "sync", *conn(url, profile, "tok-alice"))
    assert code == 0, err
    with httpx.Client(base_url=url, headers={"Authorization": "Bearer tok-alice"}) as client:
        assert client.delete(f"/v1/sessions/{ids[0]}").status_code == 204  # a prune candidate
    restart_with(server, without_alice)
    assert server.url == url

    code, out, err = converge(capsys, "sync", *conn(url, profile, "tok-alice"))
    assert code != 0
    assert "token" in err.lower() and "Nothing was changed" in err, err
    assert out == ""
    assert mirror_ids(profile) == set(ids)

    async def go() -> None:
        engine = await SyncEngine.open(
            Profile.load(profile, server=url, token="tok-alice", environ={})
        )
        try:
            report = await engine.reconcile()
            assert isinstance(report.error, Unauthenticated)
            assert report.pruned == () and report.inserted == ()
            assert engine.status.state is EngineState.ERROR
            assert "token" in engine.status.message.lower(), engine.status.message
            assert {row.id for row in await engine.rows()} == set(ids)
        finally:
            await engine.close()

    asyncio.run(go())


def test_a_token_revoked_between_two_pages_of_a_walk_prunes_nothing_and_keeps_its_page(
    revocable: tuple[ServerProcess, Path, Path], tmp_path: Path
) -> None:
    server, _with_alice, without_alice = revocable
    url = server.start()
    ids = make_sessions(url, "tok-alice", 5)
    profile = tmp_path / "profile"

    async def go() -> None:
        revoked = False

        async def revoke_after_first_page(page_no: int, page: SessionPage) -> None:
            nonlocal revoked
            if page_no == 1 and armed and not revoked:
                revoked = True
                await asyncio.to_thread(restart_with, server, without_alice)

        armed = False
        engine = await SyncEngine.open(
            Profile.load(profile, server=url, token="tok-alice", environ={}),
            page_limit=2,
            page_hook=revoke_after_first_page,
        )
        try:
            assert (await engine.reconcile()).ok
            before = await engine.rows()
            assert {row.id for row in before} == set(ids)
            with httpx.Client(
                base_url=url, headers={"Authorization": "Bearer tok-alice"}
            ) as client:
                for sid in ids[:2]:
                    assert client.delete(f"/v1/sessions/{sid}").status_code == 204
                created = client.post("/v1/sessions", json={}).json()["id"]  # at the top
            armed = True
            report = await engine.reconcile()
            assert revoked
            assert isinstance(report.error, Unauthenticated), report
            # The walk writes as it goes (decision 0095): the first page, with the new
            # session, stays; nothing is pruned, the deleted two included (no complete walk).
            assert report.pruned == () and report.inserted == (created,), report
            assert engine.status.state is EngineState.ERROR
            assert {row.id for row in await engine.rows()} == {row.id for row in before} | {created}
        finally:
            await engine.close()

    asyncio.run(go())


# -- the disk under the mirror is full ----------------------------------------------------------


def test_a_full_disk_under_the_mirror_is_named_and_the_next_sync_recovers(
    live_server: LiveServer, small_disk: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """At 100 % full SQLite often reports a plain "disk I/O error" (its WAL index cannot
    grow), which told the user nothing; the sentence names the full disk, and nothing of the
    mirror is lost."""
    first = make_sessions(live_server.url, "dev-alice", 3)
    profile = small_disk / "profile"
    code, _out, err = converge(capsys, "sync", *conn(live_server.url, profile))
    assert code == 0, err
    more = make_sessions(live_server.url, "dev-alice", 300)
    filler = fill(small_disk)
    code, _out, err = converge(capsys, "sync", *conn(live_server.url, profile))
    assert code == 1
    assert "full" in err and "I/O" not in err, err
    assert "Traceback" not in err
    filler.unlink()
    code, _out, err = converge(capsys, "sync", *conn(live_server.url, profile))
    assert code == 0, err
    assert mirror_ids(profile) == set(first) | set(more)
