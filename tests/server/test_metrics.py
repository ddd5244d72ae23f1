"""`GET /metrics` (CONTRACT §13): the Prometheus text format, served to
loopback peers only unless configured, not a route of the API; latency by route template;
gauges of the process (held watches, streams) and of the database (outbox, runs by status),
each process of a fleet with its own labelled series. Real servers on both backends."""

from __future__ import annotations

import contextlib
import logging
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import insert, text

from server_stub.db.engine import Database
from server_stub.db.models import DeletionOutboxRow
from server_stub.domain.timestamps import now
from server_stub.observe.metrics import COUNT_CAP, RUN_STATUSES, read_counts
from server_stub.runner import ServerThread
from tests.conftest import LiveServer, PostgresCluster, ServerFactory
from tests.server.conftest import new_session, run_to_end, start_run, wait_terminal, wait_until
from tests.server.test_control_plane_guards import _outward_address

SSE = {"Accept": "text/event-stream"}
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(server: LiveServer | str) -> Samples:
    """Every sample of one scrape, keyed by (name, labels)."""
    url = server if isinstance(server, str) else server.url
    response = httpx.get(f"{url}/metrics", timeout=10)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    samples: Samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float | None:
    """The one sample named `name` whose labels include `labels` (None if absent)."""
    found = [v for (n, ls), v in samples.items() if n == name and set(labels.items()) <= ls]
    assert len(found) <= 1, (name, labels, found)
    return found[0] if found else None


def routes(samples: Samples) -> set[str]:
    return {
        dict(labels)["route"]
        for name, labels in samples
        if name == "converge_request_duration_seconds_count"
    }


def scrape_until(server: LiveServer, check: Callable[[Samples], bool]) -> Samples:
    """Scrape until `check` holds (database gauges are re-read at most once per second)."""

    def once() -> Samples | None:
        samples = scrape(server)
        return samples if check(samples) else None

    return dict(wait_until(once))


def eventually(server: LiveServer, name: str, want: float, **labels: str) -> Samples:
    """Scrape until `name` reads `want`."""
    return scrape_until(server, lambda samples: value(samples, name, **labels) == want)


def test_latency_is_labelled_by_route_template_never_by_raw_path(
    live_server: LiveServer,
) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    assert alice.get(f"/v1/sessions/{sid}").status_code == 200
    assert alice.get("/v1/sessions").status_code == 200  # served past the router (indexpath)
    assert alice.get(f"/v1/sessions/{sid}/nothing-here").status_code == 404
    response = httpx.get(f"{live_server.url}/metrics")
    assert sid not in response.text
    samples = scrape(live_server)
    assert {"/v1/sessions/{session_id}", "/v1/sessions", "unrouted"} <= routes(samples)
    count = value(
        samples, "converge_request_duration_seconds_count", route="/v1/sessions", method="POST"
    )
    assert count == 1


def test_the_database_gauges_follow_the_outbox_and_the_runs(live_server: LiveServer) -> None:
    alice, control = live_server.client(), live_server.control()
    sid = new_session(alice)
    run_to_end(alice, sid, "/artifact a.txt alpha")
    eventually(live_server, "converge_runs", 1, status="completed")
    assert control.put("/_stub/faults", json={"object_store": "down"}).status_code == 204
    assert alice.delete(f"/v1/sessions/{sid}").status_code == 204
    samples = eventually(live_server, "converge_outbox_pending", 1)
    assert value(samples, "converge_runs", status="completed") == 0  # purged with its session
    assert value(samples, "converge_database_up") == 1
    wait_until(lambda: (value(scrape(live_server), "converge_outbox_oldest_seconds") or 0) > 0)
    assert control.put("/_stub/faults", json={"object_store": "up"}).status_code == 204
    assert control.post("/_stub/maintenance", json={}).json() == {"outbox_pending": 0}
    samples = eventually(live_server, "converge_outbox_pending", 0)
    assert value(samples, "converge_outbox_oldest_seconds") == 0


@contextlib.contextmanager
def _held_watch(server: LiveServer, etag: str) -> Iterator[None]:
    """A raw connection whose watch was sent and whose answer is not read."""
    host, _, port = server.url.removeprefix("http://").rpartition(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(
            f"GET /v1/sessions HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer "
            f"dev-alice\r\nIf-None-Match: {etag}\r\nPrefer: wait=60\r\n\r\n".encode()
        )
        yield


def test_held_watches_and_open_streams_are_gauged(live_server: LiveServer) -> None:
    alice = live_server.client()
    run = start_run(alice, new_session(alice), "/wait 30")
    etag = alice.get("/v1/sessions").headers["ETag"]
    with (
        _held_watch(live_server, etag),
        alice.stream("GET", f"/v1/runs/{run['id']}/events", headers=SSE) as stream,
    ):
        assert stream.status_code == 200
        # The run turns running in the agent's own transaction, and the database
        # counts are cached for a second: both are waited for in one scrape.
        samples = scrape_until(
            live_server,
            lambda s: (
                value(s, "converge_held_watches") == 1
                and value(s, "converge_runs", status="running") == 1
            ),
        )
        assert value(samples, "converge_sse_streams") == 1
    assert alice.post(f"/v1/runs/{run['id']}/cancel").status_code == 202
    wait_terminal(alice, run["id"])
    samples = eventually(live_server, "converge_sse_streams", 0)
    # A stream's duration is its life, not a latency: streams are gauged, not observed.
    assert "/v1/runs/{run_id}/events" not in routes(samples)


def test_metrics_is_no_api_route_and_needs_no_token(live_server: LiveServer) -> None:
    schema = httpx.get(f"{live_server.url}/openapi.json").json()
    assert "/metrics" not in schema["paths"]
    assert all(path.startswith("/v1/") for path in schema["paths"])
    plain = httpx.get(f"{live_server.url}/metrics")
    assert plain.status_code == 200 and "converge_outbox_pending" in plain.text
    posted = httpx.post(f"{live_server.url}/metrics", content=b"")
    assert posted.status_code == 404
    assert posted.json() == {"error": {"code": "not_found", "message": "no such route"}}
    refused_host = httpx.get(f"{live_server.url}/metrics", headers={"Host": "evil.example"})
    assert refused_host.status_code == 400  # the Host check comes first (DNS rebinding)


def _far_server(probe: LiveServer, **settings: Any) -> ServerThread:
    """A server on 0.0.0.0 over `probe`'s database (reachable from the outward address)."""
    return ServerThread(replace(probe.settings, **settings), host="0.0.0.0").start()


def test_a_peer_off_loopback_gets_the_unknown_route_404_unless_configured(
    server_factory: ServerFactory,
) -> None:
    outward = _outward_address()
    if outward is None:
        pytest.skip("this machine has no non-loopback address to connect from")
    probe = server_factory()
    probe.stop()  # its database is reused by one server at a time (SQLite: one process)
    for allowed, expected in (((), 404), ((f"{outward}/32",), 200)):
        thread = _far_server(probe, metrics_from=allowed)
        try:
            port = thread.url.rsplit(":", 1)[1]
            far = httpx.get(
                f"http://{outward}:{port}/metrics", headers={"Host": f"127.0.0.1:{port}"}
            )
            assert far.status_code == expected, far.text
            if expected == 404:
                assert far.json() == {"error": {"code": "not_found", "message": "no such route"}}
            else:
                assert "converge_held_watches" in far.text
            assert httpx.get(f"http://127.0.0.1:{port}/metrics").status_code == 200
        finally:
            thread.stop()


@pytest.mark.postgres
def test_each_process_of_a_fleet_reports_its_own_labelled_series(
    server_factory: ServerFactory, postgres_cluster: PostgresCluster
) -> None:
    url = postgres_cluster.clean_database()
    one = server_factory(backend="postgres", database_url=url)
    two = server_factory(backend="postgres", database_url=url)
    alice = one.client()
    run_to_end(alice, new_session(alice))
    etag = alice.get("/v1/sessions").headers["ETag"]
    with _held_watch(two, etag):
        first = scrape(one)
        second = eventually(two, "converge_held_watches", 1)
        wait_until(lambda: value(scrape(one), "converge_runs", status="completed") == 1)
        wait_until(lambda: value(scrape(two), "converge_runs", status="completed") == 1)
    processes = [
        {dict(labels)["process"] for _name, labels in samples} for samples in (first, second)
    ]
    assert len(processes[0]) == 1 and len(processes[1]) == 1
    assert processes[0] != processes[1]
    assert value(first, "converge_held_watches") == 0  # the watch is held by the other one
    assert (
        value(first, "converge_request_duration_seconds_count", method="POST", route="/v1/sessions")
        == 1
    )
    assert (
        value(
            second, "converge_request_duration_seconds_count", method="POST", route="/v1/sessions"
        )
        is None
    )


@pytest.mark.postgres
def test_database_errors_are_counted_by_kind_and_a_scrape_survives_an_outage(
    server_factory: ServerFactory, postgres_cluster: PostgresCluster
) -> None:
    server = server_factory(backend="postgres", database_url=postgres_cluster.clean_database())
    alice = server.client()
    sid = new_session(alice)
    postgres_cluster.halt()
    try:
        assert alice.get(f"/v1/sessions/{sid}").status_code == 503
        during = eventually(server, "converge_database_up", 0)
    finally:
        postgres_cluster.resume()
    assert value(during, "converge_outbox_pending") is None  # unknown, not a stale number
    kinds = {
        dict(labels)["kind"]: v
        for (name, labels), v in during.items()
        if name == "converge_database_errors_total"
    }
    assert kinds and "other" not in kinds, kinds
    assert sum(kinds.values()) >= 2  # the request's and the scrape's own read
    server.statuses.clear()  # the 503 was the point


def test_an_old_outbox_entry_is_warned_about_without_any_scrape(
    server_factory: ServerFactory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="server_stub.outbox")
    server = server_factory(outbox_warn_seconds=0.0, repeat_log_interval=0.2)
    alice, control = server.client(), server.control()
    sid = new_session(alice)
    run_to_end(alice, sid, "/artifact a.txt alpha")
    assert not [r for r in caplog.records if r.name == "server_stub.outbox"]
    assert control.put("/_stub/faults", json={"object_store": "down"}).status_code == 204
    assert alice.delete(f"/v1/sessions/{sid}").status_code == 204
    warned = wait_until(lambda: [r for r in caplog.records if r.name == "server_stub.outbox"])
    assert warned[0].levelno == logging.WARNING
    assert "1 byte deletes pending" in warned[0].getMessage()
    assert sid not in warned[0].getMessage()  # counts and ages, no ids or content


def test_database_counts_stop_at_the_cap_and_read_runs_through_their_index(
    tmp_path: Path,
) -> None:
    db = Database(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    try:
        db.create_schema()
        rows = [
            {"session_id": f"ses_{i}", "locator": f"ses_{i}/art_{i}", "enqueued_at": now()}
            for i in range(COUNT_CAP + 50)
        ]
        with db.engine.begin() as conn:
            conn.execute(insert(DeletionOutboxRow), rows)
            plan = conn.execute(
                text("EXPLAIN QUERY PLAN SELECT 1 FROM runs WHERE status = 'running' LIMIT 5")
            ).all()
        with db.read() as s:
            counts = read_counts(s)
        assert counts.outbox_pending == COUNT_CAP  # "10,000 or more": no further rows read
        assert counts.runs == dict.fromkeys(RUN_STATUSES, 0)
        assert any("COVERING INDEX ix_runs_status" in str(row) for row in plan), plan
    finally:
        db.dispose()


def test_the_cli_refuses_a_malformed_metrics_network(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "server_stub.cli",
            "--metrics-from",
            "10.0.0.0/33",
            "--database",
            f"sqlite:///{tmp_path / 'db.sqlite3'}",
        ],
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert b"10.0.0.0/33" in done.stderr and b"Traceback" not in done.stderr
