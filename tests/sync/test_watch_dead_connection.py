"""A watch whose connection died without a word (CONTRACT §9.1): a REAL
server behind a loopback proxy that goes silent the way a middlebox or a NAT does. The
watch notices within its bound (`wait + margin`, not the old 70 s read timeout), and a
conclusive pass re-arms a watch it proves deaf, so the next change arrives by the watch."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from sync.api.client import WATCH_READ_MARGIN, ApiClient
from sync.events import TriggerReason
from sync.reconcile.watch import IndexWatch, WatchState
from tests.sync.helpers import Server, device, run
from tests.sync.stall_proxy import stall_proxy
from tests.sync.test_watch_live import Inserts, _held, _until


def test_a_watch_behind_a_proxy_that_goes_silent_notices_and_sees_changes_after_the_heal(
    live_server: Any, tmp_path: Path
) -> None:
    wait = 1

    async def go() -> None:
        async with (
            Server(live_server.url) as server,
            stall_proxy(live_server.url) as proxy,
            device(proxy.url, tmp_path / "a") as (a, _),
        ):
            await a.reconcile(TriggerReason.CONNECT)
            a.start_watch(wait=wait)
            watch = a.watch
            assert watch is not None
            await _until(lambda: _held(live_server) == 1, "the watch to be held", 10)
            proxy.stall()  # the server's 304 after `wait` s is swallowed; nothing errors
            # Generous, yet below the old bound (wait + 15 s): the default margin is 5 s.
            noticed = lambda: a.watch_state is WatchState.BACKOFF  # noqa: E731
            await _until(noticed, "the watch to notice", wait + 10)
            proxy.heal()
            await _until(lambda: _held(live_server) == 1, "the watch re-armed", 20)
            inserts = Inserts(a)
            made = await server.create()
            event = await inserts.of(made.id)
            assert event.report is not None and event.report.reason is TriggerReason.WATCH

    run(go())


def test_a_pass_that_finds_the_index_moved_re_arms_a_watch_whose_flow_was_forgotten(
    live_server: Any, tmp_path: Path
) -> None:
    """A NAT forgot the watch's flow: only that connection is silent. The default hold and
    margin would leave the watch deaf for up to 25 s (70 s before); the next conclusive
    pass (here a foreground one; the 30 s tick alike) sees the index past the watch's ETag
    and re-arms it at once, and the change after that arrives by the watch."""

    async def go() -> None:
        async with (
            Server(live_server.url) as server,
            stall_proxy(live_server.url) as proxy,
            device(proxy.url, tmp_path / "a") as (a, _),
        ):
            await a.reconcile(TriggerReason.CONNECT)
            a.start_watch()
            watch = a.watch
            assert watch is not None
            await _until(lambda: _held(live_server) == 1, "the watch to be held", 10)
            proxy.forget_open_flows(carrying=b"prefer: wait=")
            first = await server.create()  # the server's 200 to the watch is swallowed
            await _until(lambda: _held(live_server) == 0, "the server to answer", 10)
            report = await a.reconcile(TriggerReason.FOREGROUND)
            assert report.ok and first.id in report.inserted
            await _until(lambda: _held(live_server) == 1, "the watch re-armed", 10)
            assert watch.rearms == 1 and watch.failures == 0
            inserts = Inserts(a)
            second = await server.create()
            event = await asyncio.wait_for(inserts.of(second.id), 10)
            assert event.report is not None and event.report.reason is TriggerReason.WATCH

    run(go())


def test_a_pass_re_arms_a_watch_held_longer_than_it_should_be(live_server: Any) -> None:
    """Timers that did not run (a suspended host) leave a request held past `wait +
    margin`; the clock the watch reads keeps counting, and the next pass replaces it."""
    now = [1000.0]

    async def go() -> None:
        api = ApiClient(live_server.url, "dev-alice")
        first = await api.list_sessions(limit=1)
        assert first is not None and first.etag is not None
        etag = first.etag

        async def current_etag() -> str | None:
            return etag

        async def changed() -> bool:
            return True

        watch = IndexWatch(
            api, current_etag=current_etag, changed=changed, wait=30, clock=lambda: now[0]
        )
        try:
            watch.start()
            await _until(lambda: _held(live_server) == 1, "the watch to be held", 10)
            watch.kick()  # a pass while the hold is young and the index unmoved: no re-arm
            # Judged when the hold clears the kick again (after `_deaf` said no).
            await _until(lambda: not watch._kick.is_set(), "the kick to be judged", 10)
            assert watch.rearms == 0 and _held(live_server) == 1
            now[0] += 30 + WATCH_READ_MARGIN + 1
            watch.kick()
            await _until(lambda: watch.rearms == 1, "the re-arm", 10)
            await _until(lambda: _held(live_server) == 1, "a new held watch", 10)
            assert watch.state is WatchState.WATCHING and watch.answers == 0
        finally:
            await watch.stop()
            await api.aclose()

    run(go())


def test_the_client_sockets_carry_tcp_keepalive(live_server: Any) -> None:
    """A vanished peer (cable, paused host, forgotten NAT flow) is dropped by the kernel
    after about 14 s of unanswered probes, whatever the request's own timeout."""
    import socket

    from sync.api import keepalive

    async def go() -> None:
        api = ApiClient(live_server.url, "dev-alice")
        try:
            client: httpx.AsyncClient = api._client  # the one place to reach the socket
            async with client.stream("GET", "/v1/sessions", params={"limit": 1}) as response:
                stream = response.extensions["network_stream"]
                sock: socket.socket = stream.get_extra_info("socket")
                assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
                if hasattr(socket, "TCP_KEEPIDLE"):
                    idle = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE)
                    assert idle == keepalive.IDLE
                    count = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT)
                    assert count == keepalive.COUNT
        finally:
            await api.aclose()

    run(go())


@contextlib.asynccontextmanager
async def _forward_proxy() -> AsyncIterator[tuple[str, list[bytes]]]:
    """A loopback HTTP forward proxy, one request per connection: its URL, and the request
    lines it was sent (the absolute form a client uses with a proxy)."""
    seen: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line, _, rest = (await reader.readuntil(b"\r\n\r\n")).partition(b"\r\n")
            seen.append(line)
            method, target, version = line.split(b" ")
            url = urlsplit(target.decode())
            up_reader, up_writer = await asyncio.open_connection(url.hostname, url.port)
            path = url.path + (f"?{url.query}" if url.query else "")
            headers = [h for h in rest.split(b"\r\n") if h and b"connection:" not in h.lower()]
            up_writer.write(b" ".join((method, path.encode(), version)) + b"\r\n")
            up_writer.write(b"\r\n".join([*headers, b"Connection: close"]) + b"\r\n\r\n")
            while data := await up_reader.read(65536):
                writer.write(data)
                await writer.drain()
            up_writer.close()
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", seen
    finally:
        server.close()
        await server.wait_closed()


def test_requests_go_through_the_proxy_the_environment_names(
    live_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Behind a corporate proxy (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` as httpx reads
    them) the server is reached through it; a host `NO_PROXY` names is reached directly."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)

    async def go() -> None:
        async with _forward_proxy() as (proxy_url, seen):
            monkeypatch.setenv("HTTP_PROXY", proxy_url)
            api = ApiClient(live_server.url, "dev-alice")
            try:
                assert await api.list_sessions(limit=1) is not None
                # The absolute form: the request was sent to the proxy, for the server.
                assert [line.split(b" ")[1].split(b"?")[0] for line in seen] == [
                    f"{live_server.url}/v1/sessions".encode()
                ]
            finally:
                await api.aclose()
            monkeypatch.setenv("NO_PROXY", "127.0.0.1")
            api = ApiClient(live_server.url, "dev-alice")
            try:
                assert await api.list_sessions(limit=1) is not None
                assert len(seen) == 1
            finally:
                await api.aclose()

    run(go())
