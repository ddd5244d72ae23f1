"""A reverse proxy in front of a REAL stub server that breaks one rule of the contract.

The conformance checker is only honest if it fails, naming the rule, on a server that
breaks that rule and nothing else. This proxy (an ASGI app under uvicorn, forwarding with
httpx, on loopback, in the test's own event loop) passes every exchange through a
`Breakage`: it may change the request before it goes upstream and the answer before it
comes back. It remembers who created which session and which were deleted, so that a
breakage can be as narrow as "a 404 for another principal's live session".
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import uvicorn

#: Bodies declared larger than this are relayed over a plain socket, head only (the
#: upstream answers 413 without reading them).
ONE_MIB = 1024 * 1024


@dataclass
class Exchange:
    """One request and its answer, as the breakage sees them (it may change both)."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    status: int = 0
    answer_headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    token: str = ""

    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    def set_json(self, value: Any) -> None:
        self.body = json.dumps(value).encode()


@dataclass
class Memory:
    """What the proxy has seen: session id -> creator's token, and deleted ids."""

    owners: dict[str, str] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)
    #: Free for a breakage's own bookkeeping.
    marks: set[str] = field(default_factory=set)


Rewrite = Callable[[Exchange, Memory], None]


@dataclass(frozen=True)
class Breakage:
    """`before` changes the request, `after` the answer; both default to no change;
    `hang` picks requests that are never answered."""

    before: Rewrite = lambda exchange, memory: None
    after: Rewrite = lambda exchange, memory: None
    #: Requests never answered (the connection stays open).
    hang: Callable[[Exchange], bool] | None = None


class RewriteProxy:
    def __init__(self, upstream: str, breakage: Breakage) -> None:
        self.upstream = upstream.rstrip("/")
        self.breakage = breakage
        self.memory = Memory()
        self.url = ""
        self._client = httpx.AsyncClient(base_url=self.upstream, timeout=90.0)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        headers.pop("host", None)
        query = dict(httpx.QueryParams(scope["query_string"].decode()))
        auth = headers.get("authorization", "")
        exchange = Exchange(
            scope["method"], scope["path"], query, headers, token=auth.removeprefix("Bearer ")
        )
        self.breakage.before(exchange, self.memory)
        if self.breakage.hang is not None and self.breakage.hang(exchange):
            await asyncio.Event().wait()  # a server that never answers this request
        if int(headers.get("content-length", "0") or 0) > ONE_MIB:
            await self._relay_oversized(exchange)
        else:
            await self._forward(exchange, await _read_body(receive))
        self._remember(exchange)
        self.breakage.after(exchange, self.memory)
        out = {k: v for k, v in exchange.answer_headers.items() if k not in _HOP}
        out["content-length"] = str(len(exchange.body))
        await send(
            {
                "type": "http.response.start",
                "status": exchange.status,
                "headers": [(k.encode(), v.encode()) for k, v in out.items()],
            }
        )
        await send({"type": "http.response.body", "body": exchange.body})

    async def _forward(self, exchange: Exchange, body: bytes) -> None:
        answer = await self._client.request(
            exchange.method,
            exchange.path,
            params=exchange.query,
            headers=exchange.headers,
            content=body,
        )
        exchange.status = answer.status_code
        exchange.answer_headers = {k.lower(): v for k, v in answer.headers.items()}
        exchange.body = answer.content

    async def _relay_oversized(self, exchange: Exchange) -> None:
        url = httpx.URL(self.upstream)
        reader, writer = await asyncio.open_connection(url.host, url.port)
        lines = [f"{exchange.method} {exchange.path} HTTP/1.1", f"Host: {url.netloc.decode()}"]
        lines += [f"{k}: {v}" for k, v in exchange.headers.items() if k != "connection"]
        writer.write(("\r\n".join([*lines, "Connection: close", "", ""])).encode())
        await writer.drain()
        raw = await reader.read()
        writer.close()
        head, _, body = raw.partition(b"\r\n\r\n")
        status_line, *header_lines = head.decode().split("\r\n")
        exchange.status = int(status_line.split()[1])
        exchange.answer_headers = {
            k.strip().lower(): v.strip() for k, v in (h.split(":", 1) for h in header_lines)
        }
        exchange.body = body

    def _remember(self, exchange: Exchange) -> None:
        parts = exchange.path.strip("/").split("/")
        if exchange.method == "POST" and parts == ["v1", "sessions"] and exchange.status == 201:
            value = exchange.json()
            if isinstance(value, dict) and isinstance(value.get("id"), str):
                self.memory.owners[value["id"]] = exchange.token
        if exchange.method == "DELETE" and len(parts) == 3 and exchange.status == 204:
            self.memory.deleted.add(parts[2])

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[RewriteProxy]:
        """Serve on a free loopback port for the duration of the block."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        config = uvicorn.Config(
            self, log_config=None, access_log=False, lifespan="off", timeout_graceful_shutdown=1
        )
        server = uvicorn.Server(config)
        task = asyncio.create_task(server.serve(sockets=[sock]))
        self.url = f"http://127.0.0.1:{port}"
        try:
            while not server.started:
                if task.done():
                    task.result()
                await asyncio.sleep(0.01)
            yield self
        finally:
            server.should_exit = True
            await task
            await self._client.aclose()
            sock.close()


_HOP = {"content-length", "transfer-encoding", "connection", "keep-alive", "content-encoding"}


async def _read_body(receive: Any) -> bytes:
    body = bytearray()
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return bytes(body)
