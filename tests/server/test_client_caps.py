"""The server trusts no client (CONTRACT §10.2): caps on held watches and streams
per principal and per process, the open-files limit, a body deadline, write rate limits,
and warnings that repeat logged once per interval. Real servers, real sockets; the caps are
lowered through settings so that a handful of connections reach them."""

from __future__ import annotations

import contextlib
import logging
import resource
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from server_stub.edge.limits import connection_caps
from server_stub.observe.ratelog import RepeatLog
from server_stub.state import AppState
from tests.conftest import LiveServer
from tests.server.conftest import new_session, start_run, wait_terminal, wait_until

SSE = {"Accept": "text/event-stream"}


def _state(server: LiveServer) -> AppState:
    state = server.thread.app.state.converge
    assert isinstance(state, AppState)
    return state


def _address(server: LiveServer) -> tuple[str, int]:
    host, _, port = server.url.removeprefix("http://").rpartition(":")
    return host, int(port)


@contextlib.contextmanager
def _held_watch(server: LiveServer, token: str, etag: str) -> Iterator[socket.socket]:
    """A raw connection whose watch request was sent and whose answer is not read."""
    sock = socket.create_connection(_address(server), timeout=10)
    host, port = _address(server)
    request = (
        f"GET /v1/sessions HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Authorization: Bearer {token}\r\nIf-None-Match: {etag}\r\nPrefer: wait=60\r\n\r\n"
    )
    try:
        sock.sendall(request.encode())
        yield sock
    finally:
        sock.close()


def _watch_now(client: httpx.Client, etag: str) -> httpx.Response:
    return client.get("/v1/sessions", headers={"If-None-Match": etag, "Prefer": "wait=60"})


def test_past_the_watch_caps_a_watch_answers_304_at_once_and_others_still_get_200(
    start_server: Callable[..., LiveServer],
) -> None:
    server = start_server(max_watches_per_principal=2, max_watches_per_process=3)
    state = _state(server)
    alice, bob = server.client("dev-alice"), server.client("dev-bob")
    a_etag = alice.get("/v1/sessions").headers["ETag"]
    b_etag = bob.get("/v1/sessions").headers["ETag"]
    with _held_watch(server, "dev-alice", a_etag), _held_watch(server, "dev-alice", a_etag):
        wait_until(lambda: state.watches.held == 2)
        # Alice's third: past her cap, answered at once as if no wait was asked.
        third = _watch_now(alice, a_etag)
        assert third.status_code == 304
        assert "preference-applied" not in third.headers
        assert third.headers["ETag"] == a_etag
        with _held_watch(server, "dev-bob", b_etag):
            wait_until(lambda: state.watches.held == 3)
            # Bob is within his own cap but the process is full: at once too.
            refused = _watch_now(bob, b_etag)
            assert refused.status_code == 304
            assert "preference-applied" not in refused.headers
            # Everything else of every principal still answers.
            assert bob.get("/v1/sessions").status_code == 200
            assert new_session(bob)
            assert alice.get("/v1/sessions").status_code == 200
    wait_until(lambda: state.watches.admitted == 0)
    # Slots come back: a watch is held again (and answered by a change).
    with _held_watch(server, "dev-alice", alice.get("/v1/sessions").headers["ETag"]) as sock:
        wait_until(lambda: state.watches.held == 1)
        new_session(alice)
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")


def test_past_the_stream_caps_a_stream_is_503_and_others_still_get_200(
    start_server: Callable[..., LiveServer],
) -> None:
    server = start_server(max_streams_per_principal=2, max_streams_per_process=3)
    alice, bob = server.client("dev-alice"), server.client("dev-bob")
    run = start_run(alice, new_session(alice), "/wait 30")
    bob_run = start_run(bob, new_session(bob), "/wait 30")
    path, bob_path = f"/v1/runs/{run['id']}/events", f"/v1/runs/{bob_run['id']}/events"
    plain = {"Authorization": "Bearer dev-bob", **SSE}  # a 503 is expected: not the fixture's
    with contextlib.ExitStack() as stack:
        for _ in range(2):
            opened = stack.enter_context(alice.stream("GET", path, headers=SSE))
            assert opened.status_code == 200
        bobs = stack.enter_context(bob.stream("GET", bob_path, headers=SSE))
        assert bobs.status_code == 200
        refused = httpx.get(f"{server.url}{bob_path}", headers=plain)
        assert refused.status_code == 503
        assert refused.headers["retry-after"]
        error = refused.json()["error"]
        assert error["code"] == "unavailable"
        assert error["details"] == {"reason": "server_busy", "limit": 3}
        assert bob.get("/v1/sessions").status_code == 200
        assert bob.get(bob_path).status_code == 200  # JSON reads are not streams
    for client, item in ((alice, run), (bob, bob_run)):
        assert client.post(f"/v1/runs/{item['id']}/cancel").status_code == 202
        wait_terminal(client, item["id"])


def test_cap_refusals_are_logged_once_per_interval(
    start_server: Callable[..., LiveServer], caplog: pytest.LogCaptureFixture
) -> None:
    server = start_server(max_watches_per_principal=0, repeat_log_interval=3600.0)
    alice = server.client("dev-alice")
    etag = alice.get("/v1/sessions").headers["ETag"]
    with caplog.at_level(logging.WARNING, logger="server_stub.load"):
        for _ in range(5):
            assert _watch_now(alice, etag).status_code == 304
    refusals = [r for r in caplog.records if "watch answered at once" in r.getMessage()]
    assert len(refusals) == 1
    assert _state(server).repeat_log.suppressed("watch-cap-principal") == 4


def test_a_repeat_log_reports_what_it_held_back() -> None:
    now = [0.0]
    logger = logging.getLogger("tests.repeat")
    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    handler = Keep()
    logger.addHandler(handler)
    try:
        repeat = RepeatLog(logger, interval=10.0, clock=lambda: now[0])
        for _ in range(3):
            repeat.warning("k", "disk %s", "full")
        assert records == ["disk full"]
        now[0] = 10.5
        repeat.warning("k", "disk %s", "full")
        assert records[-1] == "disk full (2 more like this in the last 10 s were not logged)"
        repeat.warning("k", "disk %s", "full")
        repeat.flush()
        assert records[-1] == "k: 1 more occurrences were not logged"
        repeat.flush()
        assert len(records) == 3  # nothing new to report
    finally:
        logger.removeHandler(handler)


def test_the_caps_are_sized_below_the_open_files_limit() -> None:
    for nofile in (256, 1024, 20000, 1 << 20):
        caps = connection_caps(nofile)
        assert caps.connections + caps.reserve <= nofile
        assert caps.streams + caps.watches < caps.connections  # room for ordinary requests
        assert caps.per_peer < caps.connections
        assert caps.reserve >= 128
    assert connection_caps(1024).streams == 336


@pytest.mark.skipif(not Path("/proc/self/limits").exists(), reason="needs /proc")
def test_the_cli_raises_its_open_files_limit_to_the_hard_limit(tmp_path: Path) -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard <= 256:
        pytest.skip("the hard open-files limit is too low to lower the soft one")

    def lower() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))

    command = [sys.executable, "-m", "server_stub.cli", "--port", "0"]
    command += ["--database", f"sqlite:///{tmp_path / 'db.sqlite3'}", "--log-level", "warning"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, preexec_fn=lower)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith(b"listening on ")
        limits = Path(f"/proc/{proc.pid}/limits").read_text()
        line = next(x for x in limits.splitlines() if x.startswith("Max open files"))
        soft_now = line.split()[3]
        if hard == resource.RLIM_INFINITY:
            assert int(soft_now) > 256  # raised to limits.UNLIMITED_TARGET
        else:
            assert soft_now == str(hard)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        if proc.stdout is not None:
            proc.stdout.close()


def test_a_trickled_body_is_cut_at_the_deadline_with_400(
    start_server: Callable[..., LiveServer],
) -> None:
    server = start_server(body_timeout=0.3)
    host, port = _address(server)
    with socket.create_connection((host, port), timeout=15) as sock:
        head = (
            f"POST /v1/sessions HTTP/1.1\r\nHost: {host}:{port}\r\n"
            "Authorization: Bearer dev-alice\r\nContent-Type: application/json\r\n"
            "Content-Length: 100\r\n\r\n{"
        )
        sock.sendall(head.encode())  # 1 of 100 bytes, and no more: the server must decide
        answer = b""
        while chunk := sock.recv(65536):  # until the server closes the connection
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 400")
    assert b"connection: close" in answer.lower()
    body = answer.split(b"\r\n\r\n", 1)[1]
    assert b'"code":"invalid_request"' in body
    assert b'"reason":"body_timeout"' in body
    # A body sent in time is unaffected.
    assert server.client("dev-alice").post("/v1/sessions", json={}).status_code == 201


def test_writes_past_the_rate_limit_are_429_with_retry_after(
    start_server: Callable[..., LiveServer],
) -> None:
    server = start_server(write_burst=3, write_rate=0.001)
    alice, bob = server.client("dev-alice"), server.client("dev-bob")
    for _ in range(3):
        new_session(alice)
    refused = alice.post("/v1/sessions", json={})
    assert refused.status_code == 429
    assert int(refused.headers["retry-after"]) >= 1
    assert refused.json()["error"]["code"] == "rate_limited"
    sid = alice.get("/v1/sessions").json()["items"][0]["id"]
    assert alice.delete(f"/v1/sessions/{sid}").status_code == 429  # DELETE is a write too
    assert alice.get("/v1/sessions").status_code == 200  # reads are not limited
    assert new_session(bob)  # another principal has its own bucket
    assert httpx.post(f"{server.url}/v1/sessions", json={}).status_code == 401


def test_write_bodies_past_the_byte_budget_are_429(
    start_server: Callable[..., LiveServer],
) -> None:
    server = start_server(write_bytes_burst=2 * 1024 * 1024, write_bytes_rate=1.0)
    alice = server.client("dev-alice")
    padded = {"padding": "x" * (900 * 1024)}  # unknown keys are ignored
    assert alice.post("/v1/sessions", json=padded).status_code == 201
    assert alice.post("/v1/sessions", json=padded).status_code == 201
    refused = alice.post("/v1/sessions", json=padded)
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "rate_limited"
    assert alice.post("/v1/sessions", json={}).status_code == 201  # small writes still fit
    assert server.client("dev-bob").post("/v1/sessions", json=padded).status_code == 201


def test_a_bucket_in_debt_is_out_of_it_within_one_refill_window() -> None:
    from server_stub.edge.ratelimit import TokenBuckets

    now = [0.0]
    buckets = TokenBuckets(capacity=10.0, rate=1.0, clock=lambda: now[0])
    key = ("t", "p")
    for _ in range(100):  # bodies streamed without a length, charged as they arrive
        buckets.take(key, 50.0)
    now[0] = 10.0  # one refill window: capacity / rate
    assert buckets.wait_for(key, 0.0) == 0.0
    assert buckets.wait_for(key, 1.0) == 1.0  # out of debt, refilling from zero


def test_the_rate_limit_can_be_switched_off(start_server: Callable[..., LiveServer]) -> None:
    server = start_server(write_burst=1, write_rate=0.0, write_rate_limit=False)
    alice = server.client("dev-alice")
    for _ in range(3):
        new_session(alice)


def test_accept_errors_for_want_of_descriptors_are_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import asyncio
    import errno

    from server_stub.edge.limits import log_accept_errors_once

    logger = logging.getLogger("tests.accept")
    repeat = RepeatLog(logger, interval=3600.0)
    loop = asyncio.new_event_loop()
    try:
        restore = log_accept_errors_once(loop, repeat)
        with caplog.at_level(logging.WARNING):
            for _ in range(50):  # what asyncio reports for each failed accept
                loop.call_exception_handler(
                    {
                        "message": "socket.accept() out of system resource",
                        "exception": OSError(errno.EMFILE, "Too many open files"),
                    }
                )
            loop.call_exception_handler({"message": "something else"})
        restore()
    finally:
        loop.close()
    accepts = [r for r in caplog.records if "cannot accept connections" in r.getMessage()]
    assert len(accepts) == 1
    assert repeat.suppressed("accept-EMFILE") == 49
    assert any("something else" in r.getMessage() for r in caplog.records)  # passed on


def test_a_refused_oversized_body_costs_its_writer_nothing_it_did_not_send(
    start_server: Callable[..., LiveServer],
) -> None:
    """A write that declares a huge `Content-Length` is refused with 413 unread; the bytes it
    declared but never sent are given back, so the principal's next writes go ahead."""
    server = start_server()
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(
            b"POST /v1/sessions HTTP/1.1\r\nHost: " + host.encode() + b"\r\n"
            b"Authorization: Bearer dev-alice\r\nContent-Type: application/json\r\n"
            b"Content-Length: 999999999999\r\n\r\n{}"
        )
        head = sock.recv(65536).split(b"\r\n", 1)[0]
    assert b" 413 " in head, head
    alice = server.client("dev-alice")
    assert alice.post("/v1/sessions", json={}).status_code == 201
    sid = alice.get("/v1/sessions").json()["items"][0]["id"]
    assert alice.delete(f"/v1/sessions/{sid}").status_code == 204


def _refused_unread(server: LiveServer, length: int) -> bytes:
    """The status line of a write whose declared body is over 1 MiB (none of it is sent)."""
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(
            b"POST /v1/sessions HTTP/1.1\r\nHost: " + host.encode() + b"\r\n"
            b"Authorization: Bearer dev-alice\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + str(length).encode() + b"\r\n\r\n"
        )
        return sock.recv(65536).split(b"\r\n", 1)[0]


def test_writes_refused_before_their_body_is_read_take_no_request_token(
    start_server: Callable[..., LiveServer],
) -> None:
    """413 answered unread and 403 for a scope the token lacks cost nothing: the principal's
    whole burst is still there for its real writes."""
    server = start_server(write_burst=2, write_rate=0.0)
    for _ in range(3):
        head = _refused_unread(server, 2 * 1024 * 1024)
        assert b" 413 " in head, head
    readonly = server.client("dev-alice-readonly")  # alice too, without session.write
    for _ in range(3):
        assert readonly.post("/v1/sessions", json={}).status_code == 403
    alice = server.client("dev-alice")
    assert alice.post("/v1/sessions", json={}).status_code == 201
    assert alice.post("/v1/sessions", json={}).status_code == 201
    assert alice.post("/v1/sessions", json={}).status_code == 429  # the burst was 2
