"""HTTP-level bounds: idle and slow connections are closed; oversized heads answer 414/431
in the contract's envelope."""

from __future__ import annotations

import json
import socket

import pytest

from tests.conftest import LiveServer, ServerFactory


def _connect(server: LiveServer) -> socket.socket:
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=10)
    return sock


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
