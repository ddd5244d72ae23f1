"""What a walked page commits survives a SIGKILL of `converge sync` (CONTRACT §7).

A first sync of a big index writes the mirror page by page, each page's rows, title index
entries and the walk's position in one transaction (`sync.reconcile.walk`), on a
`synchronous=NORMAL` WAL file (`sync.mirror.schema.connect`: a commit survives a process
kill). Here a real `converge sync` process walks an index of `SESSIONS` sessions while this
test reads the mirror from outside; once it has seen pages committed, the process is killed
with SIGKILL mid-walk. Then:

- every row seen committed before the kill is still there;
- the rows are exactly the newest sessions of the index, as many as the walk's position
  says it has seen, and each has its title index entry or is marked as waiting for it
  (rows, pending mark and position were committed together: decision 0238);
- the next `converge sync` goes on from there, leaves the mirror equal to the index and
  every row with its title entry.

A walk that kept its pages uncommitted (one long transaction, or pages batched without a
commit) shows no row before its end and fails the first check; one that wrote its position
apart from its rows fails the second when the kill falls between them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.ui import populate
from sync.mirror import sqlite_driver, title_index
from sync.mirror.state import WALK_SEEN
from sync.mirror.store import Mirror
from tests.reliability.crash_helpers import ServerProcess

REPO = Path(__file__).resolve().parents[2]
TOKEN = "dev-alice"
SESSIONS = 20_000
#: Kill once the mirror outside shows at least this many rows (a page is 200).
KILL_AFTER = (400, 10_000)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[ServerProcess, list[str]]]:
    """A server holding `SESSIONS` of alice's sessions, and their ids, oldest first."""
    db = tmp_path / "server.sqlite3"
    proc = ServerProcess(f"sqlite:///{db}", tmp_path / "objects", tmp_path / "server.log")
    proc.start()
    try:
        ids = populate(db, SESSIONS)
        proc.stop()  # the server keeps each principal's index version in memory
        proc.start()
        yield proc, ids
    finally:
        proc.stop()


def _sync(url: str, profile: Path) -> subprocess.Popen[str]:
    token_file = profile.with_name(profile.name + ".token")  # beside it, removed with it
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
    server: tuple[ServerProcess, list[str]], tmp_path: Path, kill_after: int
) -> None:
    profile = tmp_path / "profile"
    running, ids = server
    proc = _sync(running.url, profile)
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
            pending = _pending_titles(conn)
        finally:
            conn.close()
    finally:
        mirror.close()
    assert seen <= after, "rows seen committed were lost to the kill"
    assert after == set(ids[SESSIONS - len(after) :])  # the newest
    assert position == len(after) == entries + pending
    assert len(after) < SESSIONS

    done = _sync(running.url, profile)
    _, stderr = done.communicate(timeout=300)
    assert done.returncode == 0, stderr
    mirror = _mirror(profile)
    try:
        assert {row.id for row in mirror.rows()} == set(ids)
        assert mirror.get_state(WALK_SEEN) is None  # the walk concluded
        conn = sqlite_driver.connect(mirror.path)
        try:
            assert conn.execute("SELECT count(*) FROM title_rows").fetchone() == (SESSIONS,)
            assert _pending_titles(conn) == 0
        finally:
            conn.close()
    finally:
        mirror.close()


def _pending_titles(conn: sqlite_driver.Connection) -> int:
    """Rows whose title entry is marked as waiting to be written (`title_index.PENDING_ROWS`)."""
    start = title_index.pending_from(conn)
    if start is None:
        return 0
    (count,) = conn.execute(
        f"SELECT count(*) FROM ({title_index.PENDING_ROWS})", (start,)
    ).fetchone()
    return int(count)
