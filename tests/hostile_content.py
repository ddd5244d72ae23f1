"""A server with well-formed answers and hostile content, on a loopback port.

Its protocol is correct; what it says is not: the inert-output tests use it (protocol-level
misbehaviour, the bounds' job, is `tests/sync/hostile_server.py`).

The stub server normalises titles (CONTRACT §2 removes control characters) and makes its own
ids, so it can never send the bytes a hostile server would: terminal escapes in an id, a
title or an error message. This one serves `GET /v1/sessions` (one page of `sessions`),
`GET /v1/sessions/{id}` (the same views), and answers with `error` (status, envelope)
when set, to the methods in `fail` (or all). Real sockets, real HTTP: the client under
test cannot tell it from a server.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

# What a terminal obeys: set the window title (OSC 0), write the clipboard (OSC 52), clear
# the screen (CSI 2J), a one-byte C1 CSI, a bell, a carriage return that overwrites the line,
# DEL, a right-to-left override and an isolate that reorder what follows, a zero-width space.
HOSTILE = (
    "\x1b]0;pwned\x07\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2J\x9b31m\r\x7f"
    "abc\u202edef\u2066\u200b\u2028end"
)
HOSTILE_ID = f"ses_{HOSTILE}"
HOSTILE_RUN = f"run_{HOSTILE}"

BIDI = frozenset(
    "\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200b\u2028\u2029"
)


def unsafe_chars(text: str) -> list[str]:
    """The characters of `text` a terminal must never receive (LF allowed): C0, DEL, C1,
    the bidi and invisible format set."""
    return [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F or c in BIDI]


def session(
    session_id: str, title: str | None, *, active_run_id: str | None = None
) -> dict[str, Any]:
    return {
        "id": session_id,
        "title": title,
        "created_at": "2026-01-01T00:00:00.000000Z",
        "updated_at": "2026-01-02T00:00:00.000000Z",
        "active_run_id": active_run_id,
        "last_run_id": None,
    }


def envelope(code: str, message: str, **details: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details}}


@dataclass
class HostileServer:
    """Set `sessions` and `error` (status, body) before the client runs; `requests` logs
    each request line as (method, path)."""

    url: str = ""
    sessions: list[dict[str, Any]] = field(default_factory=list)
    error: tuple[int, dict[str, Any]] | None = None
    fail: frozenset[str] | None = None  # the methods that get `error` (None: every one)
    requests: list[tuple[str, str]] = field(default_factory=list)

    def answer(self, method: str, path: str) -> tuple[int, dict[str, Any] | None]:
        self.requests.append((method, path))
        if self.error is not None and (self.fail is None or method in self.fail):
            return self.error
        if method == "GET" and path == "/v1/sessions":
            return 200, {"items": self.sessions, "next_cursor": None}
        if method == "GET" and path.startswith("/v1/sessions/"):
            wanted = unquote(path.removeprefix("/v1/sessions/"))
            for view in self.sessions:
                if view["id"] == wanted:
                    return 200, view
            return 404, envelope("not_found", "no such session")
        return 404, envelope("not_found", "no such route")


def _handler(state: HostileServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            status, body = state.answer(self.command, urlsplit(self.path).path)
            data = json.dumps(body).encode() if body is not None else b""
            self.send_response(status)
            if body is not None:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_DELETE = do_PUT = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: the test output is the client's

    return Handler


@contextlib.contextmanager
def hostile_server() -> Iterator[HostileServer]:
    """A running hostile server on 127.0.0.1 (any free port), stopped afterwards."""
    state = HostileServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    httpd.daemon_threads = True
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, name="hostile-server", daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)
