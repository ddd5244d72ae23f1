"""The fault proxy (`qa.proxy`) in front of a real stub server, and in front of a peer that
never reads: each fault does what it says, a partition holds everything until it ends, and
bytes, connections and idle time stay within their bounds. Waits poll a condition with a
deadline; nothing asserts a duration."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Awaitable, Callable, Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from qa.faults import ConnectionPlan, Direction, Fault, FaultSpec
from qa.proxy import FaultProxy, ProxyLimits, proxied_transport
from tests.conftest import LiveServer
from tests.sync.helpers import run

REQUEST = (
    b"GET /v1/sessions?limit=5 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b"Authorization: Bearer dev-alice\r\n\r\n"
)


def plans(
    fault: Fault, after: int = 20, direction: Direction = Direction.RESPONSE
) -> Iterator[ConnectionPlan]:
    for n in itertools.count():
        yield ConnectionPlan(n, fault, direction, after, 0.3, n)


async def until(condition: Callable[[], bool], deadline: float = 10.0) -> None:
    end = time.monotonic() + deadline
    while not condition():
        assert time.monotonic() < end, "condition not met before the deadline"
        await asyncio.sleep(0.01)


def proxy_for(server: LiveServer, fault: Fault, **kw: object) -> FaultProxy:
    url = urlsplit(server.url)
    spec = kw.pop("spec", FaultSpec())
    return FaultProxy(url.hostname or "", url.port or 0, plans(fault, **kw), spec)  # type: ignore[arg-type]


async def read_all(port: int) -> tuple[bytes, BaseException | None]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(REQUEST)
    got = b""
    try:
        while chunk := await asyncio.wait_for(reader.read(65536), 10):
            got += chunk
            if b"\r\n0\r\n\r\n" in got or (b"\r\n\r\n" in got and got.endswith(b"}")):
                break
    except (ConnectionError, OSError) as exc:
        return got, exc
    finally:
        writer.close()
    return got, None


async def with_proxy(proxy: FaultProxy, body: Callable[[int], Awaitable[None]]) -> None:
    port = await proxy.start()
    try:
        await body(port)
    finally:
        await proxy.close()


def test_a_drop_resets_the_connection_mid_response(live_server: LiveServer) -> None:
    async def body(port: int) -> None:
        got, error = await read_all(port)
        assert len(got) == 20 and isinstance(error, ConnectionResetError)

    proxy = proxy_for(live_server, Fault.DROP)
    run(with_proxy(proxy, body))
    assert proxy.stats.faults == {"drop": 1}


def test_a_cut_closes_the_connection_in_order_before_the_body_ends(
    live_server: LiveServer,
) -> None:
    async def body(port: int) -> None:
        got, error = await read_all(port)
        assert got.startswith(b"HTTP/1.1 200") and len(got) == 20 and error is None
        async with httpx.AsyncClient(
            transport=proxied_transport(live_server.url, port), base_url=live_server.url
        ) as http:
            with pytest.raises(httpx.TransportError):
                await http.get("/v1/sessions", headers={"Authorization": "Bearer dev-alice"})

    proxy = proxy_for(live_server, Fault.CUT)
    run(with_proxy(proxy, body))
    assert proxy.stats.faults == {"cut": 2}


def test_a_stall_holds_the_response_then_lets_all_of_it_through(live_server: LiveServer) -> None:
    async def body(port: int) -> None:
        async with httpx.AsyncClient(
            transport=proxied_transport(live_server.url, port), base_url=live_server.url
        ) as http:
            response = await http.get("/v1/sessions", headers={"Authorization": "Bearer dev-alice"})
        assert response.status_code == 200 and "items" in response.json()

    proxy = proxy_for(live_server, Fault.STALL, spec=FaultSpec(latency_ms=5, jitter_ms=5))
    run(with_proxy(proxy, body))
    assert proxy.stats.faults == {"stall": 1}


def test_a_partition_holds_every_byte_until_it_ends(live_server: LiveServer) -> None:
    proxy = proxy_for(live_server, Fault.NONE)

    async def body(port: int) -> None:
        proxy.partition(60)
        async with httpx.AsyncClient(
            transport=proxied_transport(live_server.url, port), base_url=live_server.url
        ) as http:
            task = asyncio.create_task(
                http.get("/v1/sessions", headers={"Authorization": "Bearer dev-alice"})
            )
            await until(lambda: proxy.stats.connections == 1)
            assert proxy.stats.bytes_request == 0 and not task.done()
            proxy.heal()
            response = await asyncio.wait_for(task, 10)
        assert response.status_code == 200 and proxy.stats.bytes_request > 0

    run(with_proxy(proxy, body))
    assert proxy.stats.partitions == 1


def test_buffered_bytes_stay_bounded_when_the_server_never_reads() -> None:
    limits = ProxyLimits(chunk=4096, queued_chunks=2)

    async def scenario() -> None:
        async def never_read(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await asyncio.sleep(30)

        sink = await asyncio.start_server(never_read, "127.0.0.1", 0)
        port = sink.sockets[0].getsockname()[1]
        proxy = FaultProxy("127.0.0.1", port, plans(Fault.NONE), FaultSpec(), limits)
        listen = await proxy.start()
        _reader, writer = await asyncio.open_connection("127.0.0.1", listen)
        written = 0
        end = time.monotonic() + 3  # a deadline for the writer, not a wait for anything
        block = b"x" * 65536
        while written < 32 * 1024 * 1024 and time.monotonic() < end:
            writer.write(block)
            try:
                await asyncio.wait_for(writer.drain(), 0.5)
            except TimeoutError:
                break  # the pushback reached the sender
            written += len(block)
        assert proxy.stats.max_buffered <= (limits.queued_chunks + 2) * limits.chunk
        writer.transport.abort()
        await proxy.close()
        sink.close()

    run(scenario())


def test_connections_over_the_cap_and_idle_ones_are_closed(live_server: LiveServer) -> None:
    url = urlsplit(live_server.url)
    limits = ProxyLimits(connections=2, idle_seconds=0.4)
    proxy = FaultProxy(url.hostname or "", url.port or 0, plans(Fault.NONE), FaultSpec(), limits)

    async def body(port: int) -> None:
        held = [await asyncio.open_connection("127.0.0.1", port) for _ in range(2)]
        await until(lambda: proxy.stats.connections == 2)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        with contextlib.suppress(ConnectionResetError):
            assert await asyncio.wait_for(reader.read(10), 10) == b""
        writer.close()
        assert proxy.stats.refused == 1
        for idle_reader, _w in held:  # no byte either way: closed after idle_seconds
            with contextlib.suppress(ConnectionResetError):
                assert await asyncio.wait_for(idle_reader.read(10), 10) == b""
        assert proxy.stats.closed_idle == 2

    run(with_proxy(proxy, body))
