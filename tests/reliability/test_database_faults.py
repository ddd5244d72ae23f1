"""The server keeps its word when its database fails (CONTRACT §10.2).

Real faults, no mocks: a SQLite database and its object store on a small tmpfs that is
filled to the last byte, and a real PostgreSQL cluster stopped and started again. While the
database refuses, every request that needs it answers 503 `unavailable` with `Retry-After`
on a connection that stays open; once it accepts writes again, a run whose writes failed is
failed with its reason (never left active), and cancel and delete work.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import PostgresCluster, ServerFactory
from tests.reliability.conftest import fill
from tests.server.conftest import new_session, start_run, wait_status, wait_until

TERMINAL = ("completed", "failed", "cancelled")
OUTAGE_LOGGER = "server_stub.db.outage"


def assert_unavailable(response: httpx.Response) -> None:
    """503 `unavailable` with `Retry-After` (header and envelope), connection kept open."""
    assert response.status_code == 503, response.text
    retry_after = response.headers.get("retry-after", "")
    assert retry_after.isdigit() and int(retry_after) >= 1, response.headers
    error = response.json()["error"]
    assert error["code"] == "unavailable"
    assert error["details"]["retry_after"] == int(retry_after)
    assert "Traceback" not in response.text
    assert response.headers.get("connection", "").lower() != "close"


def local_port(response: httpx.Response) -> int:
    """The client-side port of the connection that carried `response`."""
    stream: Any = response.extensions["network_stream"]
    return int(stream.get_extra_info("socket").getsockname()[1])


def run_view(client: httpx.Client, run_id: str) -> dict[str, Any]:
    response = client.get(f"/v1/runs/{run_id}")
    assert response.status_code == 200, response.text
    return dict(response.json())


def wait_ended(client: httpx.Client, run_id: str, timeout: float = 30.0) -> dict[str, Any]:
    """Poll the run until it is terminal (polling, not SSE: a feed may be mid-recovery)."""

    def ended() -> dict[str, Any] | None:
        response = client.get(f"/v1/runs/{run_id}")
        if response.status_code != 200:
            return None
        view = dict(response.json())
        return view if view["status"] in TERMINAL else None

    return dict(wait_until(ended, timeout=timeout, interval=0.05))


def agent_gave_word(caplog: pytest.LogCaptureFixture) -> bool:
    """Whether the agent logged that a run's write failed and the run will be failed."""
    return any(
        "failing it once the database accepts writes" in r.getMessage() for r in caplog.records
    )


def last_event(client: httpx.Client, run_id: str) -> dict[str, Any]:
    items = client.get(f"/v1/runs/{run_id}/events").json()["items"]
    return dict(items[-1])


def test_a_full_disk_answers_503_and_the_run_ends_failed_once_space_returns(
    small_disk: Path, server_factory: ServerFactory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    server = server_factory(
        database_url=f"sqlite:///{small_disk / 'server.sqlite3'}",
        artifacts_dir=small_disk / "objects",
    )
    alice = server.client()
    sid = new_session(alice)
    run = start_run(alice, sid, "/wait 60")
    wait_status(alice, run["id"], "running")

    filler = fill(small_disk)
    try:
        first = alice.post("/v1/sessions", json={})
        assert_unavailable(first)
        for _ in range(5):  # repeated, on the same keep-alive connection
            again = alice.post("/v1/sessions", json={})
            assert_unavailable(again)
            assert local_port(again) == local_port(first)
        assert_unavailable(alice.post(f"/v1/runs/{run['id']}/cancel"))
        reads = alice.get("/v1/sessions")  # reads need no new page: still served
        assert reads.status_code == 200
        assert local_port(reads) == local_port(first)
        logged = [r for r in caplog.records if r.name == OUTAGE_LOGGER]
        assert len(logged) == 1, [r.getMessage() for r in logged]  # once per interval
        # The run's next step (a delta every second) cannot be written either.
        wait_until(lambda: agent_gave_word(caplog), timeout=15)
        assert run_view(alice, run["id"])["status"] == "running"
    finally:
        filler.unlink()

    view = wait_ended(alice, run["id"])
    assert view["status"] == "failed"
    final = last_event(alice, run["id"])
    assert final["type"] == "run.failed"
    assert final["data"]["error"] == "the database refused a write: disk full"
    assert alice.post(f"/v1/runs/{run['id']}/cancel").status_code == 202
    assert alice.delete(f"/v1/sessions/{sid}").status_code == 204
    assert alice.post("/v1/sessions", json={}).status_code == 201


@pytest.mark.postgres
def test_a_postgresql_restart_answers_503_and_leaves_no_run_active(
    postgres_cluster: PostgresCluster,
    server_factory: ServerFactory,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = server_factory(
        backend="postgres",
        database_url=postgres_cluster.new_database(),
        artifacts_dir=tmp_path / "objects",
    )
    alice = server.client()
    sid = new_session(alice)
    waiting = start_run(alice, sid, "/wait 60")
    wait_status(alice, waiting["id"], "running")
    other = new_session(alice)
    assert alice.get("/v1/sessions").status_code == 200  # a pooled connection, soon dead

    caplog.set_level(logging.WARNING)
    postgres_cluster.halt()
    try:
        down = alice.get("/v1/sessions")
        assert_unavailable(down)
        assert_unavailable(alice.post("/v1/sessions", json={}))
        again = alice.get(f"/v1/sessions/{other}")
        assert_unavailable(again)
        assert local_port(again) == local_port(down)
        wait_until(lambda: agent_gave_word(caplog), timeout=15)  # the run's next tick failed
    finally:
        postgres_cluster.resume()

    view = wait_ended(alice, waiting["id"])
    assert view["status"] == "failed"
    assert last_event(alice, waiting["id"])["data"]["error"].startswith(
        "the database was unavailable"
    )
    assert alice.delete(f"/v1/sessions/{sid}").status_code == 204
    # The server works as before: a new run in the other session completes.
    run = start_run(alice, other, "after the restart")
    assert wait_ended(alice, run["id"])["status"] == "completed"


@pytest.mark.postgres
def test_a_postgresql_restart_between_requests_is_invisible_to_the_next_request(
    postgres_cluster: PostgresCluster, server_factory: ServerFactory, tmp_path: Path
) -> None:
    """Connections the restart killed are replaced (pre-ping), not handed to a request."""
    server = server_factory(
        backend="postgres",
        database_url=postgres_cluster.new_database(),
        artifacts_dir=tmp_path / "objects",
    )
    alice = server.client()
    sid = new_session(alice)
    postgres_cluster.halt()
    postgres_cluster.resume()
    assert alice.get(f"/v1/sessions/{sid}").status_code == 200
    run = start_run(alice, sid, "hello")
    assert wait_ended(alice, run["id"])["status"] == "completed"
