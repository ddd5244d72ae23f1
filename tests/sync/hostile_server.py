"""A hostile Converge server for the client's tests: one misbehaviour per mode.

A real HTTP/1.1 server on a loopback port, written on raw `asyncio.start_server` rather than
a framework, so that it can do what no well-behaved server library allows: lie about
`Content-Length`, trickle a body a byte at a time, stream a gigabyte it never holds, send
cursors that repeat or never end, JSON nested a hundred thousand deep, more items than
asked, headers of a megabyte, and `429`s. It runs its own event loop in a thread, so a test
can point the engine (in the test's loop) or a `converge` subprocess at it alike.

Every mode answers the point read `GET /v1/sessions/{id}` with the contract's own 404
(`not_found`): the one answer that would let a pass prune. A client that mistook a hostile
walk for a whole one would therefore prune a pre-filled mirror, and the tests see it.

`sent` counts the body bytes written (the 1 GB modes prove the client stopped reading);
`requests` records `(method, path)` of every request received, `arrived` when.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

import pytest

GIB = 1 << 30
#: The items of a normal index page (used by the modes whose misbehaviour is elsewhere).
ITEM_TIME = "2026-01-01T00:00:00.000000Z"
NOT_FOUND = json.dumps(
    {"error": {"code": "not_found", "message": "no such session", "details": {}}}
).encode()

MODES = (
    "endless_index",  # fresh cursors for ever, every page full
    "repeating_cursor",  # the second page hands back the first page's cursor
    "stuck_cursor",  # every page hands back the cursor it was asked with
    "content_length_lie",  # Content-Length 1000, then a byte every 2 s
    "declared_gigabyte",  # Content-Length 1 GiB, sent lazily
    "chunked_gigabyte",  # chunked, 1 GiB, no Content-Length
    "deep_json",  # an index page nested 100,000 deep
    "too_many_items",  # limit+1 items on a page
    "huge_headers",  # a 1 MiB response header
    "rate_limited",  # 429 rate_limited with Retry-After: 3600 on every request
    "rate_limited_once",  # 429 with Retry-After: 1 once, then an empty index
    "events_stuck",  # event pages whose next_after never moves
    "events_too_many",  # event pages with limit+1 events
    "artifact_larger_than_said",  # artifact metadata says 10 bytes, the content is 1 MiB
    "sse_endless_line",  # a run's event stream: one `data:` line that never ends (1 GiB)
    "sse_huge_frame",  # a run's event stream: `data:` lines for ever, no blank line (1 GiB)
    "sse_deep_json",  # a run's event stream: one frame whose JSON nests 100,000 deep
    "sse_keepalives",  # a run's event stream: 20,000 keep-alives, then a whole (short) run
    "sse_trickle",  # a run's event stream: one event's bytes, one every 50 ms, never ending
    "unavailable",  # 503 unavailable (the database), Retry-After: 1, on every request
    "unavailable_long",  # 503 unavailable with Retry-After: 3600 on every request
    "unavailable_once",  # 503 unavailable with Retry-After: 1 once, then an empty index
    "lone_surrogates",  # a title and a message holding half a surrogate pair (JSON allows it)
)
#: `lone_surrogates`' texts: a title cut inside an emoji's UTF-16 pair, a message holding
#: its other half, as a server that counts UTF-16 units could store them.
LONE_TITLE = "cut \ud83d"
LONE_TEXT = "half \ude00 pair"
#: The stub's own answer to a database outage (`server_stub.edge.errors`).
UNAVAILABLE = json.dumps(
    {
        "error": {
            "code": "unavailable",
            "message": "the database is unavailable right now; retry later",
            "details": {"reason": "database_unavailable", "retry_after": 1},
        }
    }
).encode()


def _item(n: int) -> dict[str, object]:
    return {
        "id": f"ses_hostile{n:012d}",
        "title": f"hostile {n}",
        "created_at": ITEM_TIME,
        "updated_at": ITEM_TIME,
        "active_run_id": None,
        "last_run_id": None,
    }


def _event(session_id: str, sequence: int) -> dict[str, object]:
    return {
        "session_id": session_id,
        "run_id": None,
        "sequence": sequence,
        "type": "message.user",
        "created_at": ITEM_TIME,
        "data": {"role": "user", "content": [{"type": "text", "text": "hi"}]},
    }


@dataclass
class HostileServer:
    """The running server: `url`, what it saw (`requests`) and sent (`sent` body bytes)."""

    mode: str
    host: str = "127.0.0.1"
    port: int = 0
    sent: int = 0
    requests: list[tuple[str, str]] = field(default_factory=list)
    #: `time.monotonic()` when each request arrived (a retry's wait is their difference).
    arrived: list[float] = field(default_factory=list)
    _loop: asyncio.AbstractEventLoop | None = None
    _server: asyncio.Server | None = None
    _thread: threading.Thread | None = None
    _counter: int = 0

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    # -- lifetime ---------------------------------------------------------------------------

    def start(self) -> None:
        started = threading.Event()

        def main() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            self._server = loop.run_until_complete(
                asyncio.start_server(self._connection, self.host, 0)
            )
            self.port = self._server.sockets[0].getsockname()[1]
            started.set()
            loop.run_forever()
            self._server.close()
            with contextlib.suppress(Exception):
                loop.run_until_complete(self._server.wait_closed())
            for task in asyncio.all_tasks(loop):
                task.cancel()
            with contextlib.suppress(Exception):
                loop.run_until_complete(asyncio.sleep(0))
            loop.close()

        self._thread = threading.Thread(target=main, name=f"hostile-{self.mode}", daemon=True)
        self._thread.start()
        if not started.wait(10):
            raise RuntimeError("the hostile server did not start")

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    # -- HTTP -------------------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = lines[0].split(" ", 2)
                length = 0
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                if length:
                    await reader.readexactly(length)
                url = urlsplit(target)
                self.requests.append((method, url.path))
                self.arrived.append(time.monotonic())
                query = {k: v[-1] for k, v in parse_qs(url.query).items()}
                await self._answer(writer, method, url.path, query)
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _write(
        self,
        writer: asyncio.StreamWriter,
        status: str,
        body: bytes,
        headers: dict[str, str] | None = None,
    ) -> None:
        lines = [f"HTTP/1.1 {status}", "Content-Type: application/json"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        if "Content-Length" not in (headers or {}):
            lines.append(f"Content-Length: {len(body)}")
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        self.sent += len(body)
        await writer.drain()

    async def _answer(
        self, writer: asyncio.StreamWriter, method: str, path: str, query: dict[str, str]
    ) -> None:
        mode = self.mode
        limit = int(query.get("limit", "50"))
        if mode == "rate_limited" or (mode == "rate_limited_once" and len(self.requests) == 1):
            wait = "3600" if mode == "rate_limited" else "1"
            body = json.dumps(
                {"error": {"code": "rate_limited", "message": "slow down", "details": {}}}
            ).encode()
            await self._write(writer, "429 Too Many Requests", body, {"Retry-After": wait})
            return
        if mode in ("unavailable", "unavailable_long") or (
            mode == "unavailable_once" and len(self.requests) == 1
        ):
            wait = "3600" if mode == "unavailable_long" else "1"
            await self._write(writer, "503 Service Unavailable", UNAVAILABLE, {"Retry-After": wait})
            return
        if mode.startswith("sse_") and path.startswith("/v1/runs/") and path.endswith("/events"):
            await self._sse(writer, path.split("/")[3])
            return
        if mode == "artifact_larger_than_said" and path.startswith("/v1/artifacts/"):
            await self._artifact(writer, path)
            return
        if path.startswith("/v1/sessions/") and path.endswith("/events"):
            await self._events(writer, path.split("/")[3], limit, query)
            return
        if path.startswith("/v1/sessions/") or method != "GET" or path != "/v1/sessions":
            await self._write(writer, "404 Not Found", NOT_FOUND)
            return
        cursor = query.get("cursor")
        if mode == "endless_index":
            self._counter += 1
            page: dict[str, object] = {
                "items": [_item(self._counter * limit + i) for i in range(limit)],
                "next_cursor": f"c{self._counter}",
            }
            await self._write(writer, "200 OK", json.dumps(page).encode(), {"ETag": '"e"'})
        elif mode in ("repeating_cursor", "stuck_cursor"):
            nxt = "c-same" if mode == "stuck_cursor" else ("c-b" if cursor == "c-a" else "c-a")
            if mode == "stuck_cursor" and cursor is not None:
                nxt = cursor
            base = 0 if cursor is None else (1 if cursor == "c-a" else 2)
            page = {"items": [_item(base * limit + i) for i in range(limit)], "next_cursor": nxt}
            await self._write(writer, "200 OK", json.dumps(page).encode(), {"ETag": '"e"'})
        elif mode == "content_length_lie":
            head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n"
            writer.write((head + "\r\n").encode())
            await writer.drain()
            for byte in b'{"items": [' + b" " * 2000:
                writer.write(bytes([byte]))
                self.sent += 1
                await writer.drain()
                await asyncio.sleep(2)
        elif mode in ("declared_gigabyte", "chunked_gigabyte"):
            await self._gigabyte(writer, chunked=mode == "chunked_gigabyte")
        elif mode == "deep_json":
            depth = 100_000
            body = b'{"items": [' + b"[" * depth + b"]" * depth + b'], "next_cursor": null}'
            await self._write(writer, "200 OK", body)
        elif mode == "too_many_items":
            page = {"items": [_item(i) for i in range(limit + 1)], "next_cursor": None}
            await self._write(writer, "200 OK", json.dumps(page).encode())
        elif mode == "lone_surrogates":
            page = {"items": [{**_item(0), "title": LONE_TITLE}], "next_cursor": None}
            await self._write(writer, "200 OK", json.dumps(page).encode(), {"ETag": '"e"'})
        elif mode == "huge_headers":
            await self._write(writer, "200 OK", b'{"items": []}', {"X-Padding": "x" * (1 << 20)})
        else:  # the modes whose misbehaviour is elsewhere: an empty index
            await self._write(writer, "200 OK", b'{"items": [], "next_cursor": null}')

    async def _gigabyte(self, writer: asyncio.StreamWriter, *, chunked: bool) -> None:
        chunk = b'{"items": [' + b" " * (64 * 1024 - 11)
        framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {GIB}"
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{framing}\r\n"
        writer.write((head + "\r\n").encode())
        while self.sent < GIB:
            data = chunk if self.sent == 0 else b" " * len(chunk)
            writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n" if chunked else data)
            self.sent += len(data)
            await writer.drain()

    async def _sse(self, writer: asyncio.StreamWriter, run_id: str) -> None:
        """A run's event stream (route 8) in the SSE modes; the connection closes after."""
        head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n"
        writer.write((head + "\r\n").encode())
        if self.mode == "sse_endless_line":
            await self._stream(writer, b"data: ", b"x" * 65536)
        elif self.mode == "sse_huge_frame":
            await self._stream(writer, b"", b"data: " + b"x" * 65530 + b"\n")
        elif self.mode == "sse_trickle":
            writer.write(b"id: 1\nevent: message.assistant\ndata: ")
            for _ in range(10_000):  # 500 s: far past any test's bound
                writer.write(b"x")
                self.sent += 1
                await writer.drain()
                await asyncio.sleep(0.05)
        elif self.mode == "sse_deep_json":
            depth = 100_000
            body = b"id: 1\nevent: tool.invocation\ndata: " + b"[" * depth + b"]" * depth
            writer.write(body + b"\n\n")
            self.sent += len(body)
        else:  # sse_keepalives
            keepalives = b": keep-alive\n\n" * 20_000
            writer.write(keepalives)
            self.sent += len(keepalives)
            for sequence, kind in ((1, "run.started"), (2, "run.completed")):
                event = {**_event("ses_hostile", sequence), "run_id": run_id, "type": kind}
                frame = f"id: {sequence}\nevent: {kind}\ndata: {json.dumps(event)}\n\n"
                writer.write(frame.encode())
                self.sent += len(frame)
        await writer.drain()
        writer.close()

    async def _stream(self, writer: asyncio.StreamWriter, first: bytes, chunk: bytes) -> None:
        """`first`, then `chunk` again and again until a gigabyte (or the client leaves)."""
        writer.write(first)
        while self.sent < GIB:
            writer.write(chunk)
            self.sent += len(chunk)
            await writer.drain()

    async def _artifact(self, writer: asyncio.StreamWriter, path: str) -> None:
        if path.endswith("/content"):
            body = b"x" * (1 << 20)
            await self._write(writer, "200 OK", body)
            return
        meta = {
            "id": path.split("/")[3],
            "session_id": "ses_hostile",
            "run_id": None,
            "name": "notes.txt",
            "media_type": "text/plain",
            "size": 10,
            "sha256": "0" * 64,
            "created_at": ITEM_TIME,
        }
        await self._write(writer, "200 OK", json.dumps(meta).encode())

    async def _events(
        self, writer: asyncio.StreamWriter, session_id: str, limit: int, query: dict[str, str]
    ) -> None:
        after = int(query.get("after", "0"))
        page: dict[str, object]
        if self.mode == "events_too_many":
            items = [_event(session_id, after + i + 1) for i in range(limit + 1)]
            page = {"items": items, "next_after": None}
        elif self.mode == "events_stuck":
            page = {"items": [_event(session_id, 1)], "next_after": 1}
        elif self.mode == "lone_surrogates":
            event = _event(session_id, 1)
            event["data"] = {"role": "user", "content": [{"type": "text", "text": LONE_TEXT}]}
            page = {"items": [event], "next_after": None}
        else:
            page = {"items": [], "next_after": None}
        await self._write(writer, "200 OK", json.dumps(page).encode())


@contextlib.contextmanager
def hostile_server(mode: str) -> Iterator[HostileServer]:
    """A started `HostileServer` in `mode`, stopped on exit."""
    if mode not in MODES:
        raise ValueError(f"unknown hostile mode {mode!r}")
    server = HostileServer(mode)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def hostile(request: pytest.FixtureRequest) -> Iterator[HostileServer]:
    """`hostile_server(mode)` for a test parametrised indirectly with the mode's name."""
    with hostile_server(request.param) as server:
        yield server
