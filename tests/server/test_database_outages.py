"""Which database errors count as outages (server_stub.db.outage), on errors the real
drivers raise, and the reaper that fails a run its own process no longer executes.

The fault suites (`tests/reliability/test_database_faults.py`) prove the whole path on a
full disk and a PostgreSQL restart; these pin the classification of each kind of error and
the backstop for a run whose agent ended without its terminal write.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError

from server_stub.db.outage import OutageLog, is_outage, reason
from server_stub.state import AppState
from tests.conftest import LiveServer, PostgresCluster
from tests.server.conftest import new_session, start_run, wait_status, wait_until


def _raised(url: str, statement: str = "SELECT 1") -> DBAPIError:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            conn.execute(text(statement))
    except DBAPIError as exc:
        return exc
    finally:
        engine.dispose()
    raise AssertionError("no error was raised")


def test_a_sqlite_file_that_cannot_be_opened_is_an_outage(tmp_path: Path) -> None:
    error = _raised(f"sqlite:///{tmp_path / 'missing' / 'folder' / 'db.sqlite3'}")
    assert reason(error) == "the database was unavailable: it could not be opened"


def test_a_constraint_violation_is_no_outage(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE t (id INTEGER PRIMARY KEY)"))
        conn.execute(text("INSERT INTO t VALUES (1)"))
    engine.dispose()
    error = _raised(url, "INSERT INTO t VALUES (1)")
    assert not is_outage(error)
    assert reason(error) is None


def test_a_syntax_error_is_no_outage(tmp_path: Path) -> None:
    assert not is_outage(_raised(f"sqlite:///{tmp_path / 'db.sqlite3'}", "SELEC 1"))


def test_a_refused_postgresql_connection_is_an_outage() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens once it is closed
    error = _raised(f"postgresql+psycopg://postgres@127.0.0.1:{port}/x?connect_timeout=5")
    assert reason(error) == "the database was unavailable: the connection failed"


@pytest.mark.postgres
def test_a_postgresql_statement_error_is_no_outage(postgres_cluster: PostgresCluster) -> None:
    error = _raised(postgres_cluster.new_database(), "SELECT * FROM no_such_table")
    assert not is_outage(error)


@pytest.mark.postgres
def test_a_postgresql_session_ended_by_the_administrator_is_an_outage(
    postgres_cluster: PostgresCluster,
) -> None:
    url = postgres_cluster.new_database()
    engine = create_engine(url)
    other = create_engine(url)
    try:
        with engine.connect() as victim, other.connect() as admin:
            pid = victim.execute(text("SELECT pg_backend_pid()")).scalar()
            admin.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
            with pytest.raises(DBAPIError) as caught:
                victim.execute(text("SELECT 1"))
        assert is_outage(caught.value)
        assert str(reason(caught.value)).startswith("the database was unavailable")
    finally:
        engine.dispose()
        other.dispose()


def test_an_outage_that_repeats_is_logged_once_per_interval(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    error = _raised(f"sqlite:///{tmp_path / 'missing' / 'db.sqlite3'}")
    outages = OutageLog(logging.getLogger("test.outage"), interval=3600)
    with caplog.at_level(logging.WARNING, logger="test.outage"):
        for _ in range(50):
            outages.report("requests fail", error)
    assert [r.getMessage() for r in caplog.records] == [
        "requests fail: the database was unavailable: it could not be opened"
    ]


def _state(server: LiveServer) -> AppState:
    state = server.thread.server.config.app.state.converge
    assert isinstance(state, AppState)
    return state


def test_a_run_whose_agent_ended_without_its_terminal_write_is_failed_by_its_own_process(
    start_server: Callable[..., LiveServer],
) -> None:
    """Its lease is no longer renewed, runs out, and the process's own reaper fails it, so
    the session becomes deletable without a restart (it was `running` until one)."""
    server = start_server(run_lease_seconds=0.5, run_heartbeat_seconds=0.1, run_reap_seconds=0.1)
    alice = server.client()
    sid = new_session(alice)
    run = start_run(alice, sid, "/wait 600")
    wait_status(alice, run["id"], "running")
    state = _state(server)

    async def stop_agent() -> None:
        for task in list(state.agents.tasks):
            task.cancel()

    asyncio.run_coroutine_threadsafe(stop_agent(), state.loop).result(10)

    def failed() -> bool:
        return bool(alice.get(f"/v1/runs/{run['id']}").json()["status"] == "failed")

    wait_until(failed, timeout=15)
    events = alice.get(f"/v1/runs/{run['id']}/events").json()["items"]
    assert events[-1]["type"] == "run.failed"
    assert alice.delete(f"/v1/sessions/{sid}").status_code == 204
