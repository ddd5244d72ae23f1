"""One clock: leases and the index order never follow a process's own clock (CONTRACT
§10.2).

Each process under test is a real `converge-server` whose clock libfaketime moves (Debian's
`faketime` package, preloaded through the environment rather than the `faketime` wrapper,
which forks and would not pass SIGTERM on): a process 20 s behind beside a normal one on one
PostgreSQL database keeps its runs, and a SQLite server restarted an hour in the past still
brings a conversation with a new message to the top, with no `updated_at` going back.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import PostgresCluster
from tests.reliability.crash_helpers import ServerProcess
from tests.server.conftest import new_session, start_run, wait_status, wait_until

TERMINAL = ("completed", "failed", "cancelled")
_LIBRARIES = (
    Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"),
    Path("/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1"),
)


def faketime_env(offset: str) -> dict[str, str]:
    """The environment that runs a process `offset` off (e.g. "-20s"); skips without it."""
    library = next((p for p in _LIBRARIES if p.exists()), None)
    if shutil.which("faketime") is None or library is None:
        pytest.skip("libfaketime is missing (apt-get install faketime)")
    return {"LD_PRELOAD": str(library), "FAKETIME": offset, "FAKETIME_DONT_RESET": "1"}


def client(url: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": "Bearer dev-alice"}, timeout=30)


def wait_ended(alice: httpx.Client, run_id: str, timeout: float = 30.0) -> dict[str, Any]:
    def ended() -> dict[str, Any] | None:
        view = dict(alice.get(f"/v1/runs/{run_id}").json())
        return view if view["status"] in TERMINAL else None

    return dict(wait_until(ended, timeout=timeout, interval=0.05))


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[Callable[..., ServerProcess]]:
    made: list[ServerProcess] = []

    def make(database_url: str, env: dict[str, str] | None = None) -> ServerProcess:
        proc = ServerProcess(
            database_url=database_url,
            artifacts=tmp_path / "objects",
            log_path=tmp_path / f"server{len(made)}.log",
            extra_args=("--run-lease", "3", "--run-heartbeat", "0.5"),
            env=env or {},
        )
        made.append(proc)
        return proc

    yield make
    for proc in made:
        proc.stop()


@pytest.mark.postgres
def test_a_process_whose_clock_is_behind_keeps_its_runs_beside_a_normal_one(
    postgres_cluster: PostgresCluster, processes: Callable[..., ServerProcess]
) -> None:
    database = postgres_cluster.new_database()
    behind = processes(database, faketime_env("-20s"))
    normal = processes(database)
    with client(behind.start()) as on_behind, client(normal.start()) as on_normal:
        slow_sid, fast_sid = new_session(on_behind), new_session(on_normal)
        # Each process executes a run that outlasts several leases (3 s) and reaps (0.5 s).
        fast = start_run(on_normal, fast_sid, "/wait 5")
        slow = start_run(on_behind, slow_sid, "/wait 5")
        wait_status(on_normal, slow["id"], "running")
        for run in (slow, fast):
            view = wait_ended(on_normal, run["id"])
            events = on_normal.get(f"/v1/runs/{run['id']}/events").json()["items"]
            assert view["status"] == "completed", events[-1]
        # What the behind process dates follows the one clock too: its run, started after
        # the normal process created a session, is not dated 20 s before that session.
        created = on_normal.get(f"/v1/sessions/{fast_sid}").json()["created_at"]
        assert on_normal.get(f"/v1/runs/{slow['id']}").json()["created_at"] > created


def test_a_sqlite_server_whose_clock_steps_back_still_brings_new_activity_to_the_top(
    tmp_path: Path, processes: Callable[..., ServerProcess]
) -> None:
    database = f"sqlite:///{tmp_path / 'server.sqlite3'}"
    server = processes(database)
    with client(server.start()) as alice:
        older, newer = new_session(alice), new_session(alice)
        for sid in (older, newer):
            assert wait_ended(alice, start_run(alice, sid, "before")["id"])["status"] == (
                "completed"
            )
        before = {s["id"]: s["updated_at"] for s in alice.get("/v1/sessions").json()["items"]}
        assert list(before) == [newer, older]
    server.stop()

    server.env = faketime_env("-1h")  # the same database, the machine's clock set back
    with client(server.start()) as alice:
        run = start_run(alice, older, "after the clock stepped back")
        assert wait_ended(alice, run["id"])["status"] == "completed"
        items = alice.get("/v1/sessions").json()["items"]
        assert [s["id"] for s in items] == [older, newer]  # a new message: on top
        after = {s["id"]: s["updated_at"] for s in items}
        assert all(after[sid] >= before[sid] for sid in before)  # nothing went back
        assert after[older] > before[newer]
        events = alice.get(f"/v1/sessions/{older}/events").json()["items"]
        stamps = [e["created_at"] for e in events]
        assert stamps == sorted(stamps)
        assert alice.get(f"/v1/runs/{run['id']}").json()["created_at"] > before[newer]
        # A conversation created now is on top too, not buried an hour down.
        created = new_session(alice)
        assert alice.get("/v1/sessions").json()["items"][0]["id"] == created
