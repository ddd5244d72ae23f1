"""The fault proxy of `converge qa --faults`: one asyncio TCP proxy per device, on loopback,
between the device and the server (CONTRACT §12).

Why TCP and not HTTP: the faults worth testing are the ones a network makes (latency,
jitter, a reset or an orderly close in the middle of a message, a connection that goes
silent, a partition), and they must reach any server, TLS included, without the proxy
understanding a byte. The device keeps the server's real URL, so its `Host`, TLS name and
certificate checks are the real ones: `proxied_transport` only changes the address its
sockets connect to (an httpcore network backend), and the proxy forwards to the server.

Each connection takes the next plan of its device's schedule (`qa.faults`): the n-th
connection gets plan n. Each direction is a reader that stamps chunks with their due time
(arrival, plus latency and seeded jitter, never before an earlier chunk) and a writer that
forwards them when due, so latency does not add up over a long body. The plan's fault
strikes once its byte count has been forwarded in its direction: `drop` resets both sides
(RST), `cut` closes both (FIN), `stall` forwards nothing for its seconds. A partition stops
every writer of the device (open and new connections alike, nothing reaches the server
until it ends); `heal` ends partitions and faults for good (the quiet phase).

Everything is bounded (`ProxyLimits`): connections per device (beyond: reset at once), the
bytes queued per direction (`queued_chunks` of `chunk` bytes: the reader waits, which
pushes back on the sender), the time to connect upstream, a connection's idle time and its
lifetime; stalls, delays and partitions are bounded by the spec (`qa.faults`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import random
import socket
import struct
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpcore
import httpx

from qa.faults import ConnectionPlan, Direction, Fault, FaultSchedule, FaultSpec
from qa.timeline import Timeline
from sync.api.tls import client_context

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProxyLimits:
    connections: int = 64  # open at once per device proxy
    chunk: int = 16 * 1024  # bytes read at a time
    queued_chunks: int = 4  # chunks waiting per direction (the buffer bound)
    connect_seconds: float = 5.0  # to open the upstream connection
    idle_seconds: float = 120.0  # no byte either way (a held watch is at most 60 s)
    lifetime_seconds: float = 900.0  # then closed; the device opens another


@dataclass
class ProxyStats:
    """What one device's proxy did (summed over devices in the report)."""

    connections: int = 0
    refused: int = 0  # over the connection cap
    upstream_failures: int = 0  # the server refused or did not answer the connect
    faults: Counter[str] = field(default_factory=Counter)  # struck, by kind
    partitions: int = 0
    closed_idle: int = 0  # idle or past their lifetime
    bytes_request: int = 0
    bytes_response: int = 0
    max_buffered: int = 0  # most bytes held by the proxy at once

    def add(self, other: ProxyStats) -> None:
        for name in ("connections", "refused", "upstream_failures", "partitions"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.closed_idle += other.closed_idle
        self.bytes_request += other.bytes_request
        self.bytes_response += other.bytes_response
        self.max_buffered = max(self.max_buffered, other.max_buffered)
        self.faults.update(other.faults)

    def to_json(self) -> dict[str, Any]:
        return {
            "connections": self.connections,
            "refused": self.refused,
            "upstream_failures": self.upstream_failures,
            "faults": dict(sorted(self.faults.items())),
            "partitions": self.partitions,
            "closed_idle": self.closed_idle,
            "bytes": {"request": self.bytes_request, "response": self.bytes_response},
            "max_buffered": self.max_buffered,
        }


#: Chunks on their way in one direction, with the time each is due.
type _Queue = asyncio.Queue[tuple[float, bytes]]


class _Struck(Exception):
    """A connection's fault closed it (`reset`: RST, else FIN)."""

    def __init__(self, reset: bool) -> None:
        self.reset = reset


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with RST (SO_LINGER 0), as a peer that vanished mid-message."""
    sock = writer.get_extra_info("socket")
    with contextlib.suppress(OSError, AttributeError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


class _Connection:
    def __init__(
        self,
        proxy: FaultProxy,
        plan: ConnectionPlan,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        self.proxy = proxy
        self.plan = plan
        self.client = (reader, writer)
        self.upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self.opened = self.last = time.monotonic()
        self.rng = random.Random(plan.jitter_seed)
        self.task: asyncio.Task[None] | None = None

    def delay(self) -> float:
        spec = self.proxy.spec
        jitter = self.rng.uniform(0, spec.jitter_ms) if spec.jitter_ms else 0.0
        return (spec.latency_ms + jitter) / 1000 if not self.proxy.healed else 0.0

    async def run(self) -> None:
        p = self.proxy
        reset = False
        try:
            async with asyncio.timeout(p.limits.lifetime_seconds):
                await p.flowing.wait()  # a partition: nothing reaches the server
            try:
                async with asyncio.timeout(p.limits.connect_seconds):
                    self.upstream = await asyncio.open_connection(p.host, p.port)
            except (OSError, TimeoutError):
                p.stats.upstream_failures += 1
                reset = True
                return
            try:
                async with asyncio.TaskGroup() as group:
                    self._pipe(group, self.client[0], self.upstream[1], Direction.REQUEST)
                    self._pipe(group, self.upstream[0], self.client[1], Direction.RESPONSE)
            except* _Struck as struck:
                reset = any(isinstance(e, _Struck) and e.reset for e in struck.exceptions)
            except* OSError:  # a reset, a refused write, a drain past the idle bound
                reset = True
            except* Exception as unexpected:  # never an unhandled error in the server task
                log.info("proxied connection failed: %r", unexpected.exceptions[0])
                reset = True
        except TimeoutError:
            reset = True
        finally:
            for _r, w in (self.client, self.upstream) if self.upstream else (self.client,):
                if reset:
                    _reset(w)
                else:
                    w.close()

    def _pipe(
        self,
        group: asyncio.TaskGroup,
        src: asyncio.StreamReader,
        dst: asyncio.StreamWriter,
        direction: Direction,
    ) -> None:
        queue: _Queue = asyncio.Queue(self.proxy.limits.queued_chunks)
        group.create_task(self._read(src, queue))
        group.create_task(self._write(dst, queue, direction))

    async def _read(self, src: asyncio.StreamReader, queue: _Queue) -> None:
        p = self.proxy
        last_due = 0.0
        while True:
            data = await src.read(p.limits.chunk)
            self.last = now = time.monotonic()
            last_due = max(last_due, now + self.delay())
            p.buffer(len(data))
            await queue.put((last_due, data))
            if not data:
                return

    async def _write(
        self,
        dst: asyncio.StreamWriter,
        queue: _Queue,
        direction: Direction,
    ) -> None:
        p, plan = self.proxy, self.plan
        sent = 0
        armed = plan.fault is not Fault.NONE and plan.direction is direction
        while True:
            due, data = await queue.get()
            size = len(data)
            try:
                if not data:
                    if dst.can_write_eof():
                        dst.write_eof()
                    return
                wait = due - time.monotonic()
                if wait > 0 and not p.healed:
                    await asyncio.sleep(wait)
                await p.flowing.wait()
                if armed and not p.healed and sent + len(data) > plan.after:
                    armed = False
                    head, data = data[: plan.after - sent], data[plan.after - sent :]
                    await self._send(dst, head, direction)
                    sent += len(head)
                    p.stats.faults[plan.fault.value] += 1
                    stalled = plan.stall_seconds if plan.fault is Fault.STALL else 0.0
                    p.note("fault", f"{plan.fault.value} {direction.value}", stalled)
                    if plan.fault is not Fault.STALL:
                        raise _Struck(reset=plan.fault is Fault.DROP)
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(plan.stall_seconds):
                            await p.healed_event.wait()
                await self._send(dst, data, direction)
                sent += len(data)
            finally:
                p.buffer(-size)

    async def _send(self, dst: asyncio.StreamWriter, data: bytes, direction: Direction) -> None:
        if not data:
            return
        dst.write(data)
        async with asyncio.timeout(self.proxy.limits.idle_seconds):
            await dst.drain()
        self.last = time.monotonic()
        if direction is Direction.REQUEST:
            self.proxy.stats.bytes_request += len(data)
        else:
            self.proxy.stats.bytes_response += len(data)


class FaultProxy:
    """One device's proxy: listens on 127.0.0.1, forwards to `host:port` under `plans`."""

    def __init__(
        self,
        host: str,
        port: int,
        plans: Iterator[ConnectionPlan],
        spec: FaultSpec,
        limits: ProxyLimits | None = None,
    ) -> None:
        self.host, self.port = host, port
        self.plans = plans
        self.spec = spec
        self.limits = limits or ProxyLimits()
        self.stats = ProxyStats()
        self.flowing = asyncio.Event()
        self.flowing.set()
        self.healed_event = asyncio.Event()
        self.listen_port = 0
        self._buffered = 0
        self._partition_until = 0.0
        self._server: asyncio.Server | None = None
        self._conns: set[_Connection] = set()
        self._monitor: asyncio.Task[None] | None = None
        #: Told of each fault struck (its kind, a stall's seconds) and partition started
        #: (`qa.timeline`, through `DeviceNetwork`).
        self.on_event: Callable[[str, str, float], None] | None = None

    def note(self, kind: str, label: str, seconds: float = 0.0) -> None:
        if self.on_event is not None:
            self.on_event(kind, label, seconds)

    @property
    def healed(self) -> bool:
        return self.healed_event.is_set()

    def buffer(self, delta: int) -> None:
        self._buffered += delta
        self.stats.max_buffered = max(self.stats.max_buffered, self._buffered)

    async def start(self) -> int:
        """Listen on a free loopback port; returns it."""
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.listen_port = int(self._server.sockets[0].getsockname()[1])
        self._monitor = asyncio.get_running_loop().create_task(self._watch_idle())
        return self.listen_port

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self._conns) >= self.limits.connections:
            self.stats.refused += 1
            _reset(writer)
            return
        conn = _Connection(self, next(self.plans), reader, writer)
        self.stats.connections += 1
        self._conns.add(conn)
        conn.task = asyncio.current_task()
        try:
            await conn.run()
        except asyncio.CancelledError:
            _reset(writer)
            if conn.upstream is not None:
                _reset(conn.upstream[1])
        finally:
            self._conns.discard(conn)

    async def _watch_idle(self) -> None:
        tick = min(1.0, self.limits.idle_seconds / 4)
        while True:
            await asyncio.sleep(tick)
            now = time.monotonic()
            for conn in list(self._conns):
                idle = now - conn.last > self.limits.idle_seconds
                if (idle or now - conn.opened > self.limits.lifetime_seconds) and conn.task:
                    self.stats.closed_idle += 1
                    conn.task.cancel()

    def partition(self, seconds: float) -> None:
        """Stop forwarding for `seconds` (overlapping partitions extend it)."""
        if self.healed:
            return
        self.stats.partitions += 1
        self.note("partition", "partition", seconds)
        loop = asyncio.get_running_loop()
        self._partition_until = max(self._partition_until, loop.time() + seconds)
        self.flowing.clear()
        loop.call_at(self._partition_until, self._end_partition)

    def _end_partition(self) -> None:
        if asyncio.get_running_loop().time() >= self._partition_until - 1e-3:
            self.flowing.set()

    def heal(self) -> None:
        """No more faults, latency or partitions, for open and new connections."""
        self.healed_event.set()
        self.flowing.set()

    async def close(self) -> None:
        if self._monitor is not None:
            self._monitor.cancel()
        if self._server is not None:
            self._server.close()
        for conn in list(self._conns):
            if conn.task is not None:
                conn.task.cancel()
        if self._server is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(5):
                    await self._server.wait_closed()


class _ToProxy(httpcore.AsyncNetworkBackend):
    """Connects every socket to the proxy's port, whatever host the URL names."""

    def __init__(self, port: int) -> None:
        self._inner = httpcore.AnyIOBackend()
        self._port = port

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.AsyncNetworkStream:
        return await self._inner.connect_tcp(
            "127.0.0.1", self._port, timeout, local_address, socket_options
        )

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("the fault proxy carries TCP only")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def proxied_transport(url: str, proxy_port: int) -> httpx.AsyncHTTPTransport:
    """A transport for `url` whose connections go through the proxy on `proxy_port`; the
    request, its `Host` and TLS (name and certificate checks) stay those of `url`."""
    https = url.startswith("https:")
    transport = httpx.AsyncHTTPTransport(verify=https)
    # httpx keeps its connection pool in `_pool` and sends through it; the same pool with
    # one change, the network backend, is the only way to move the sockets and keep TLS.
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=client_context() if https else None,  # the client's trust store
        network_backend=_ToProxy(proxy_port),
    )
    return transport


class DeviceNetwork:
    """The devices' proxies and their schedule: what the harness drives (`qa.harness`)."""

    def __init__(
        self,
        schedule: FaultSchedule,
        limits: ProxyLimits | None = None,
        timeline: Timeline | None = None,
    ) -> None:
        self.schedule = schedule
        self.limits = limits
        self.timeline = timeline
        self.proxies: list[FaultProxy] = []

    async def start(self, urls: list[str]) -> list[int]:
        """One proxy per device (device i forwards to `urls[i]`); their ports."""
        for device, url in enumerate(urls):
            parts = urlsplit(url)
            port = parts.port or (443 if parts.scheme == "https" else 80)
            proxy = FaultProxy(
                parts.hostname or "127.0.0.1",
                port,
                self.schedule.plans(device),
                self.schedule.spec,
                self.limits,
            )
            if self.timeline is not None:
                proxy.on_event = functools.partial(self._note, device)
            await proxy.start()
            self.proxies.append(proxy)
        return [proxy.listen_port for proxy in self.proxies]

    def _note(self, device: int, kind: str, label: str, seconds: float) -> None:
        if self.timeline is not None:
            self.timeline.add(device, kind, label, seconds=seconds)

    def at_operation(self, index: int) -> None:
        """Start the partitions the schedule pins to operation `index`."""
        for partition in self.schedule.starting_at(index):
            for device in partition.devices:
                self.proxies[device].partition(partition.seconds)

    def heal(self) -> None:
        for proxy in self.proxies:
            proxy.heal()

    async def close(self) -> None:
        for proxy in self.proxies:
            await proxy.close()

    def to_json(self) -> dict[str, Any]:
        total = ProxyStats()
        for proxy in self.proxies:
            total.add(proxy.stats)
        return {
            "spec": self.schedule.spec.text(),
            "digest": self.schedule.digest(),
            "partition_plan": [p.text() for p in self.schedule.partitions],
            **total.to_json(),
        }
