"""A loopback TCP proxy in front of a REAL server that can go silent the way a middlebox
does: the sockets stay open, nothing errors, and nothing arrives.

`stall()`: every connection, open or new, swallows what it reads in both directions
(a proxy that stopped forwarding). `heal()`: new connections forward again; the ones that
were open while stalled stay silent for good, as a NAT that forgot the flow leaves them.
`forget_open_flows(carrying=...)`: only the open connections whose last request held those
bytes go silent (a NAT that forgot one flow); new ones forward.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit


@dataclass
class _Flow:
    silent: bool = False
    last_request: bytes = b""
    writers: list[asyncio.StreamWriter] = field(default_factory=list)


class StallProxy:
    def __init__(self, upstream_url: str) -> None:
        parts = urlsplit(upstream_url)
        self._host = parts.hostname or "127.0.0.1"
        self._port = parts.port or 80
        self._server: asyncio.Server | None = None
        self._flows: list[_Flow] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self.stalled = False
        self.accepted = 0
        self.url = ""

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"

    def stall(self) -> None:
        self.stalled = True
        self.forget_open_flows()

    def heal(self) -> None:
        self.stalled = False

    def forget_open_flows(self, carrying: bytes = b"") -> None:
        for flow in self._flows:
            if carrying.lower() in flow.last_request.lower():
                flow.silent = True

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        flow = _Flow(silent=self.stalled, writers=[writer])
        self._flows.append(flow)
        try:
            up_reader, up_writer = await asyncio.open_connection(self._host, self._port)
        except OSError:
            writer.close()
            return
        flow.writers.append(up_writer)
        for source, sink, upstream in ((reader, up_writer, True), (up_reader, writer, False)):
            task = asyncio.create_task(self._pump(flow, source, sink, upstream))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    @staticmethod
    async def _pump(
        flow: _Flow, source: asyncio.StreamReader, sink: asyncio.StreamWriter, upstream: bool
    ) -> None:
        try:
            while data := await source.read(65536):
                if upstream:
                    flow.last_request = data[:4096]
                if not flow.silent:  # a silent flow reads and swallows: no FIN, no RST
                    sink.write(data)
                    await sink.drain()
        except OSError:
            pass
        finally:
            if not flow.silent:
                sink.close()

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
        for flow in self._flows:
            for writer in flow.writers:
                writer.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._server is not None:
            await self._server.wait_closed()


@contextlib.asynccontextmanager
async def stall_proxy(upstream_url: str) -> AsyncIterator[StallProxy]:
    proxy = StallProxy(upstream_url)
    await proxy.start()
    try:
        yield proxy
    finally:
        await proxy.aclose()
