"""Several server processes on one PostgreSQL behave as one server (CONTRACT §9.4), and a
second process on one SQLite file is refused.

In-process servers (two uvicorn threads, each its own app, database engine and bus
connection) prove the bus; subprocess servers prove what only a process boundary shows
(`kill -9`). Feed polling is switched off (`feed_poll_seconds` of an hour), so an event can
only cross processes through LISTEN/NOTIFY.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from server_stub.runner import ServerStartError, ServerThread
from server_stub.state import AppState
from tests.conftest import LiveServer, PostgresCluster, ServerFactory
from tests.reliability.crash_helpers import ServerProcess
from tests.server.conftest import new_session, start_run, wait_status, wait_terminal, wait_until

SSE = {"Accept": "text/event-stream"}
NO_POLL = {"feed_poll_seconds": 3600.0}

pytestmark = pytest.mark.postgres


@pytest.fixture
def fleet_db(postgres_cluster: PostgresCluster) -> str:
    return postgres_cluster.new_database()


@pytest.fixture
def pair(fleet_db: str, server_factory: ServerFactory, tmp_path: Path) -> tuple[LiveServer, ...]:
    objects = tmp_path / "objects"
    return tuple(
        server_factory(backend="postgres", database_url=fleet_db, artifacts_dir=objects, **NO_POLL)
        for _ in range(2)
    )


def _state(server: LiveServer) -> AppState:
    state = server.thread.server.config.app.state.converge
    assert isinstance(state, AppState)
    return state


def _stream_types(client: httpx.Client, run_id: str) -> list[str]:
    types = []
    with client.stream("GET", f"/v1/runs/{run_id}/events", headers=SSE, timeout=60) as stream:
        assert stream.status_code == 200
        for line in stream.iter_lines():
            if line.startswith("event: "):
                types.append(line.removeprefix("event: "))
    return types


def test_events_written_by_one_process_reach_the_streams_of_another(
    pair: tuple[LiveServer, LiveServer],
) -> None:
    a, b = pair
    alice_a, alice_b = a.client(), b.client()
    sid = new_session(alice_a)
    run = start_run(alice_a, sid, "/wait 2")
    types = _stream_types(alice_b, run["id"])  # B's feed never polls: only NOTIFY wakes it
    assert types[0] == "run.started"
    assert types.count("message.assistant.delta") >= 2
    assert types[-1] == "run.completed"
    assert _state(b).bus.received > 0


def test_a_cancel_posted_to_another_process_stops_the_run(
    pair: tuple[LiveServer, LiveServer],
) -> None:
    a, b = pair
    alice_a, alice_b = a.client(), b.client()
    sid = new_session(alice_a)
    run = start_run(alice_a, sid, "/approve deploy")
    wait_status(alice_a, run["id"], "waiting_for_approval")
    received = _state(a).bus.received
    assert alice_b.post(f"/v1/runs/{run['id']}/cancel").status_code == 202
    assert wait_terminal(alice_a, run["id"])["status"] == "cancelled"
    assert _state(a).bus.received > received  # A learnt of it through NOTIFY
    approvals = [e for e in alice_b.get(f"/v1/sessions/{sid}/events").json()["items"]]
    assert approvals[-1]["type"] == "run.cancelled"


def test_a_process_starting_does_not_fail_the_active_runs_of_another(
    fleet_db: str, server_factory: ServerFactory, tmp_path: Path
) -> None:
    first = server_factory(backend="postgres", database_url=fleet_db, artifacts_dir=tmp_path)
    alice = first.client()
    sid = new_session(alice)
    run = start_run(alice, sid, "/wait 600")
    wait_status(alice, run["id"], "running")
    for _ in range(2):  # start, stop and start again: each start runs start-up recovery
        other = server_factory(backend="postgres", database_url=fleet_db, artifacts_dir=tmp_path)
        other.stop()
    again = server_factory(backend="postgres", database_url=fleet_db, artifacts_dir=tmp_path)
    assert again.client().get(f"/v1/runs/{run['id']}").json()["status"] == "running"
    assert alice.get(f"/v1/runs/{run['id']}").json()["status"] == "running"
    assert again.client().post(f"/v1/runs/{run['id']}/cancel").status_code == 202
    assert wait_terminal(alice, run["id"])["status"] == "cancelled"


@pytest.fixture
def processes(fleet_db: str, tmp_path: Path) -> Iterator[Callable[[], ServerProcess]]:
    made: list[ServerProcess] = []

    def make() -> ServerProcess:
        proc = ServerProcess(
            database_url=fleet_db,
            artifacts=tmp_path / "objects",
            log_path=tmp_path / f"server{len(made)}.log",
            extra_args=("--run-lease", "3", "--run-heartbeat", "0.5"),
        )
        made.append(proc)
        return proc

    yield make
    for proc in made:
        proc.stop()


def _client(url: str, token: str = "dev-alice") -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30)


def test_the_runs_of_a_killed_process_are_failed_by_a_survivor(
    processes: Callable[[], ServerProcess],
) -> None:
    doomed, survivor = processes(), processes()
    with _client(doomed.start()) as on_doomed, _client(survivor.start()) as on_survivor:
        sid = new_session(on_doomed)
        run = start_run(on_doomed, sid, "/wait 600")
        wait_status(on_doomed, run["id"], "running")
        assert on_survivor.delete(f"/v1/sessions/{sid}").status_code == 409
        doomed.kill()

        def failed() -> dict[str, Any] | None:
            view = on_survivor.get(f"/v1/runs/{run['id']}").json()
            return view if view["status"] == "failed" else None

        view = wait_until(failed, timeout=30.0, interval=0.1)
        assert view["completed_at"] is not None
        events = on_survivor.get(f"/v1/runs/{run['id']}/events").json()["items"]
        assert events[-1]["type"] == "run.failed"
        assert events[-1]["data"]["error"].startswith("interrupted")
        assert on_survivor.delete(f"/v1/sessions/{sid}").status_code == 204


def test_a_second_process_on_one_sqlite_file_is_refused(
    server_factory: ServerFactory, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'one.sqlite3'}"
    first = server_factory(database_url=url, artifacts_dir=tmp_path / "o")
    result = subprocess.run(
        [sys.executable, "-m", "server_stub.cli", "--port", "0", "--database", url],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert result.stdout == ""
    assert "already served by another converge-server" in result.stderr
    assert "Traceback" not in result.stderr
    # The same holds inside one process (a second app on the file).
    with pytest.raises(ServerStartError):
        ServerThread(first.settings).start()
    assert first.client().get("/v1/sessions").status_code == 200


def test_a_server_that_cannot_start_gives_its_port_back(
    server_factory: ServerFactory, tmp_path: Path
) -> None:
    """A second app on a served file fails in its lifespan, before uvicorn owns the listening
    socket made for it: that socket is closed there, not left for the collector."""
    url = f"sqlite:///{tmp_path / 'one.sqlite3'}"
    first = server_factory(database_url=url, artifacts_dir=tmp_path / "o")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    second = ServerThread(first.settings, port=port)
    with pytest.raises(ServerStartError):
        second.start()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", port))  # EADDRINUSE while a listener is left open
    del second


def test_a_run_whose_lease_expired_is_failed_and_its_process_writes_no_more(
    fleet_db: str, server_factory: ServerFactory, tmp_path: Path
) -> None:
    """A process that stops renewing its leases (hung, cut off) is taken for dead even while
    its liveness lock holds; when it wakes, its agent writes nothing after the failure."""
    hung = server_factory(
        backend="postgres",
        database_url=fleet_db,
        artifacts_dir=tmp_path,
        run_lease_seconds=0.5,
        run_heartbeat_seconds=3600.0,  # never renews
        run_reap_seconds=3600.0,
    )
    reaper = server_factory(
        backend="postgres", database_url=fleet_db, artifacts_dir=tmp_path, run_reap_seconds=0.1
    )
    alice = hung.client()
    sid = new_session(alice)
    run = start_run(alice, sid, "/wait 2")
    view = wait_terminal(reaper.client(), run["id"])
    assert view["status"] == "failed"
    events = alice.get(f"/v1/runs/{run['id']}/events").json()["items"]
    assert events[-1]["type"] == "run.failed"
    # The hung process's agent ends its wait after 2 s and finds the run terminal: nothing
    # is appended after the terminal event (it stops with RunLost).
    wait_until(lambda: not _state(hung).agents.tasks, timeout=15.0)
    again = alice.get(f"/v1/runs/{run['id']}/events").json()["items"]
    assert again == events


def test_an_index_change_on_one_process_reaches_the_index_hook_of_another(
    pair: tuple[LiveServer, LiveServer],
) -> None:
    """The hook index watches (CONTRACT §9.1) of every process hang on."""
    a, b = pair
    heard: list[tuple[str, str]] = []
    registered = threading.Event()
    state = _state(b)

    def register() -> None:  # on B's loop, where the hook is called
        state.bus.on_index_change(lambda t, p: heard.append((t, p)))
        registered.set()

    state.loop.call_soon_threadsafe(register)
    assert registered.wait(10)
    new_session(a.client("dev-carol"))
    wait_until(lambda: ("globex", "carol") in heard)
    assert ("acme", "alice") not in heard
