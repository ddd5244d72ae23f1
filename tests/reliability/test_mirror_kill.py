"""What a walked page commits survives a SIGKILL of `converge sync` (CONTRACT §7).

A first sync of a big index writes the mirror page by page, each page's rows, title index
entries and the walk's position in one transaction (`sync.reconcile.walk`), on a
`synchronous=NORMAL` WAL file (`sync.mirror.schema.connect`: a commit survives a process
kill). Here a real `converge sync` process walks an index of `SESSIONS` sessions while this
test reads the mirror from outside; once it has seen pages committed, the process is killed
with SIGKILL mid-walk. Then:

- every row seen committed before the kill is still there;
- the rows are exactly the newest sessions of the index, as many as the walk's position
  says it has seen, and each has its title index entry (rows, entries and position were
  committed together);
- the next `converge sync` goes on from there and leaves the mirror equal to the index.

A walk that kept its pages uncommitted (one long transaction, or pages batched without a
commit) shows no row before its end and fails the first check; one that wrote its position
apart from its rows fails the second when the kill falls between them.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sync.mirror import sqlite_driver
from sync.mirror.state import WALK_SEEN
from sync.mirror.store import Mirror
from tests.reliability.crash_helpers import ServerProcess

REPO = Path(__file__).resolve().parents[2]
TOKEN = "dev-alice"
SESSIONS = 20_000
#: Kill once the mirror outside shows at least this many rows (a page is 200).
KILL_AFTER = (400, 10_000)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    db = tmp_path / "server.sqlite3"
    proc = ServerProcess(f"sqlite:///{db}", tmp_path / "objects", tmp_path / "server.log")
    proc.start()
    try:
        _populate(db, SESSIONS)
        proc.stop()  # the server keeps each principal's index version in memory
        proc.start()
        yield proc
    finally:
        proc.stop()


def _populate(db: Path, n: int) -> None:
    conn = sqlite3.connect(db, timeout=30)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(
            "INSERT INTO sessions (id, tenant, principal, title, title_state, created_at,"
            " updated_at, last_sequence) VALUES (?, 'acme', 'alice', ?, 'stored', ?, ?, 0)",
            [(_id(i), f"Conversation {i}", _at(i), _at(i)) for i in range(n)],
        )
        conn.execute(
            "INSERT INTO principal_versions (tenant, principal, version)"
            " VALUES ('acme', 'alice', 1)"
            " ON CONFLICT (tenant, principal) DO UPDATE SET version = version + 1"
        )
        conn.execute("COMMIT")
    finally:
        conn.close()


def _id(i: int) -> str:
    return f"ses_kill{i:08d}"


def _at(i: int) -> str:
    """One session a second from 2026-01-01 (the index is newest first)."""
    day, hour, minute, second = 1 + i // 86_400, i // 3600 % 24, i // 60 % 60, i % 60
    return f"2026-01-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}.000000Z"


def _sync(url: str, profile: Path) -> subprocess.Popen[str]:
    token_file = Path(tempfile.mkdtemp(prefix="converge-kill-")) / "token"
    fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(TOKEN + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONVERGE_")}
    args = ["--server", url, "--token-file", str(token_file), "--profile", str(profile)]
    return subprocess.Popen(
        [sys.executable, "-m", "app.main", "sync", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=env,
    )


def _committed_ids(profile: Path) -> set[str]:
    """The rows another process sees committed now (none before the file exists)."""
    found = list((profile / "accounts").glob("*/mirror.sqlite3"))
    if not found:
        return set()
    try:
        conn = sqlite_driver.connect(f"file:{found[0]}?mode=ro", uri=True, timeout=5)
        try:
            return {row[0] for row in conn.execute("SELECT id FROM sessions")}
        finally:
            conn.close()
    except sqlite_driver.OperationalError:  # not created yet (no table)
        return set()


def _mirror(profile: Path) -> Mirror:
    (path,) = (profile / "accounts").glob("*/mirror.sqlite3")
    return Mirror.open(path, create=False)


@pytest.mark.parametrize("kill_after", KILL_AFTER)
def test_pages_committed_before_a_sigkill_survive_it(
    server: ServerProcess, tmp_path: Path, kill_after: int
) -> None:
    profile = tmp_path / "profile"
    proc = _sync(server.url, profile)
    seen: set[str] = set()
    try:
        deadline = time.monotonic() + 120
        while len(seen) < kill_after and proc.poll() is None and time.monotonic() < deadline:
            seen = _committed_ids(profile)
            time.sleep(0.005)
        assert proc.poll() is None, "the walk ended before it was seen mid-way"
        assert 0 < len(seen) < SESSIONS, len(seen)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()

    mirror = _mirror(profile)
    try:
        after = {row.id for row in mirror.rows()}
        position = int(mirror.get_state(WALK_SEEN) or 0)
        conn = sqlite_driver.connect(mirror.path)
        try:
            (entries,) = conn.execute("SELECT count(*) FROM title_rows").fetchone()
        finally:
            conn.close()
    finally:
        mirror.close()
    assert seen <= after, "rows seen committed were lost to the kill"
    assert after == {_id(i) for i in range(SESSIONS - len(after), SESSIONS)}  # the newest
    assert position == len(after) == entries
    assert len(after) < SESSIONS

    done = _sync(server.url, profile)
    _, stderr = done.communicate(timeout=300)
    assert done.returncode == 0, stderr
    mirror = _mirror(profile)
    try:
        assert {row.id for row in mirror.rows()} == {_id(i) for i in range(SESSIONS)}
        assert mirror.get_state(WALK_SEEN) is None  # the walk concluded
    finally:
        mirror.close()
