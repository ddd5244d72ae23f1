"""HTTP-level bounds: idle and slow connections are closed; oversized heads answer 414/431
in the contract's envelope; past a connection cap the longest-idle connection makes room, and
a crowd of connections never keeps another client's request waiting."""

from __future__ import annotations

import json
import resource
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from server_stub.edge.connections import ConnectionTable
from server_stub.state import AppState
from tests.conftest import LiveServer, ServerFactory
from tests.server.conftest import wait_until


def _connect(server: LiveServer, source: str | None = None) -> socket.socket:
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    where = None if source is None else (source, 0)
    return socket.create_connection((host, int(port)), timeout=10, source_address=where)


def _table(server: LiveServer) -> ConnectionTable:
    table = server.thread.server.config.http.table
    assert isinstance(table, ConnectionTable)
    return table


def _get(sock: socket.socket, extra: str = "") -> None:
    sock.sendall(
        f"GET /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer dev-alice\r\n"
        f"{extra}\r\n".encode()
    )


def _status(sock: socket.socket) -> int:
    return int(sock.recv(65536).split(b" ", 2)[1])


def _etag(server: LiveServer) -> str:
    """Alice's ETag, read on a connection that is closed before the test counts any."""
    with server.client("dev-alice", headers={"Connection": "close"}) as client:
        etag = client.get("/v1/sessions").headers["ETag"]
    wait_until(lambda: _table(server).open == 0)
    return str(etag)


def _still_open(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1) != b""
    except BlockingIOError:
        return True  # nothing to read, and not closed
    finally:
        sock.settimeout(10)


@pytest.fixture
def sockets() -> Iterator[list[socket.socket]]:
    opened: list[socket.socket] = []
    yield opened
    for sock in opened:
        sock.close()


def _read_all(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def _status_and_body(raw: bytes) -> tuple[int, dict[str, object]]:
    head, _, body = raw.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), json.loads(body)


@pytest.fixture
def http_server(server_factory: ServerFactory) -> LiveServer:
    """One SQLite server: HTTP framing does not depend on the database (so these tests are
    not parametrized over both backends, unlike the rest of the suite)."""
    return server_factory()


def test_a_connection_that_sends_nothing_is_closed(
    server_factory: ServerFactory,
) -> None:
    server = server_factory(head_timeout=0.2)
    with _connect(server) as sock:
        assert sock.recv(1) == b""  # closed by the server (the 10 s socket timeout not hit)


def test_a_request_head_trickled_too_slowly_is_closed(
    server_factory: ServerFactory,
) -> None:
    server = server_factory(head_timeout=0.3)
    with _connect(server) as sock:
        sock.sendall(b"GET /v1/sessions HTTP/1.1\r\n")
        sock.sendall(b"Host: x\r\n")  # ... and never the blank line
        assert _read_all(sock) == b""


@pytest.mark.parametrize("whole", [True, False], ids=["whole", "unfinished"])
def test_an_over_long_request_line_answers_414_in_the_envelope(
    http_server: LiveServer, whole: bool
) -> None:
    line = b"GET /v1/sessions?cursor=" + b"a" * 20000
    # Whole: the parser sees a complete head; unfinished: the line never ends, and the
    # parser gives up once it holds more than the limit.
    request = line + b" HTTP/1.1\r\nHost: x\r\n\r\n" if whole else line
    with _connect(http_server) as sock:
        sock.sendall(request)
        status, body = _status_and_body(_read_all(sock))
    assert status == 414
    assert body["error"]["code"] == "invalid_request"  # type: ignore[index]


def test_over_large_headers_answer_431_in_the_envelope(http_server: LiveServer) -> None:
    headers = b"".join(b"X-Pad-%d: %s\r\n" % (i, b"b" * 1000) for i in range(20))
    with _connect(http_server) as sock:
        sock.sendall(b"GET /v1/sessions HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n")
        status, body = _status_and_body(_read_all(sock))
    assert status == 431
    assert body["error"]["code"] == "invalid_request"  # type: ignore[index]


def test_a_malformed_request_answers_400_in_the_envelope(http_server: LiveServer) -> None:
    with _connect(http_server) as sock:
        sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
        status, body = _status_and_body(_read_all(sock))
    assert status == 400
    assert body["error"]["code"] == "invalid_request"  # type: ignore[index]


def test_a_request_with_both_content_length_and_transfer_encoding_is_refused_and_closed(
    http_server: LiveServer,
) -> None:
    """RFC 9112 §6.1: such a request is how a second request gets smuggled past a proxy that
    reads the other framing. It is answered 400 in the envelope, the connection closed, and
    nothing of its body (here a whole second request) is acted on."""
    smuggled = b"GET /v1/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer dev-alice\r\n\r\n"
    body = b"0\r\n\r\n" + smuggled
    head = (
        b"POST /v1/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer dev-alice\r\n"
        b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
        b"Content-Length: %d\r\n\r\n" % len(body)
    )
    with _connect(http_server) as sock:
        sock.sendall(head + body)
        raw = _read_all(sock)
    status, answer = _status_and_body(raw)
    assert status == 400
    assert answer["error"]["code"] == "invalid_request"  # type: ignore[index]
    assert raw.count(b"HTTP/1.1 ") == 1  # one answer: the smuggled request was not read


def test_past_the_connection_cap_the_longest_idle_connection_makes_room(
    server_factory: ServerFactory, sockets: list[socket.socket]
) -> None:
    server = server_factory(max_connections=4, max_connections_per_peer=4, head_timeout=60)
    state = server.thread.app.state.converge
    assert isinstance(state, AppState)
    etag = _etag(server)
    watch = _connect(server)
    sockets.append(watch)
    _get(watch, f"If-None-Match: {etag}\r\nPrefer: wait=60\r\n")
    wait_until(lambda: state.watches.held == 1)
    idle = [_connect(server) for _ in range(3)]
    sockets.extend(idle)
    wait_until(lambda: _table(server).open == 4)
    late = _connect(server)
    sockets.append(late)
    _get(late)
    assert _status(late) == 200
    assert idle[0].recv(1) == b""  # the longest idle was closed for it
    assert _still_open(idle[1]) and _still_open(idle[2])
    assert state.watches.held == 1  # a request in progress is never closed


def test_past_the_connection_cap_with_none_idle_a_new_connection_is_refused(
    server_factory: ServerFactory, sockets: list[socket.socket]
) -> None:
    server = server_factory(max_connections=2, max_connections_per_peer=2, head_timeout=60)
    state = server.thread.app.state.converge
    assert isinstance(state, AppState)
    etag = _etag(server)
    for _ in range(2):
        sockets.append(_connect(server))
        _get(sockets[-1], f"If-None-Match: {etag}\r\nPrefer: wait=60\r\n")
    wait_until(lambda: state.watches.held == 2)
    refused = _connect(server)
    sockets.append(refused)
    assert refused.recv(1) == b""  # closed unanswered
    assert state.watches.held == 2
    assert _table(server).refused == 1


def test_one_peer_past_its_cap_closes_its_own_idle_connections_not_anothers(
    server_factory: ServerFactory, sockets: list[socket.socket]
) -> None:
    server = server_factory(max_connections=16, max_connections_per_peer=2, head_timeout=60)
    other = _connect(server, "127.0.0.1")
    crowd = [_connect(server, "127.0.0.2") for _ in range(2)]
    sockets.extend([other, *crowd])
    wait_until(lambda: _table(server).open == 3)
    third = _connect(server, "127.0.0.2")
    sockets.append(third)
    _get(third)
    assert _status(third) == 200
    assert crowd[0].recv(1) == b""
    assert _still_open(crowd[1]) and _still_open(other)


@pytest.mark.skipif(not Path("/proc/self/limits").exists(), reason="needs Linux limits")
@pytest.mark.parametrize("crowd", ["idle", "watches"])
def test_a_crowd_past_the_open_files_limit_keeps_no_other_request_waiting(
    tmp_path: Path, sockets: list[socket.socket], crowd: str
) -> None:
    """The review's case, small: the server cannot raise its open-files limit of 256, and 300
    connections are held (sending nothing, or watching one principal's index). Without caps
    the descriptors run out, accept fails, and another principal's request waits in the
    backlog until the head or keep-alive timeout frees some (seconds); with them the
    longest-idle connections make room at once."""
    nofile = 256
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2 * nofile:
        pytest.skip("the test process itself needs more descriptors than the crowd")

    def low_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    command = [sys.executable, "-m", "server_stub.cli", "--port", "0", "--log-level", "error"]
    command += ["--database", f"sqlite:///{tmp_path / 'db.sqlite3'}"]
    command += ["--artifacts", str(tmp_path / "objects"), "--max-watches-per-principal", "9999"]
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, preexec_fn=low_limit
    )
    try:
        assert proc.stdout is not None
        host, port = proc.stdout.readline().decode().split("//")[1].strip().rsplit(":", 1)
        address = (host, int(port))
        probe = socket.create_connection(address, timeout=10)
        sockets.append(probe)
        _get(probe)
        etag = next(
            line.split(b":", 1)[1].strip()
            for line in probe.recv(65536).split(b"\r\n")
            if line.lower().startswith(b"etag:")
        ).decode()
        for _ in range(300):
            sock = socket.create_connection(address, timeout=10)
            sockets.append(sock)
            if crowd == "watches":
                _get(sock, f"If-None-Match: {etag}\r\nPrefer: wait=60\r\n")
        # Today's timeouts free descriptors after 5 s (keep-alive) or 10 s (head): another
        # principal's request must not wait for either.
        request = socket.create_connection(address, timeout=3)
        sockets.append(request)
        request.sendall(
            b"GET /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer dev-bob\r\n\r\n"
        )
        assert _status(request) == 200
    finally:
        proc.kill()  # its held watches would make a graceful stop wait
        proc.wait(timeout=20)
        if proc.stdout is not None:
            proc.stdout.close()
