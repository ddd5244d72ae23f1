"""httpcore's network backend, with a TLS handshake that closes its socket when cancelled.

httpcore 1.0.9 closes the TCP stream under a TLS handshake that fails with an `Exception`
(`httpcore._backends.anyio.AnyIOStream.start_tls`), not one that is cancelled. The watch's
long-poll is cancelled whenever the window closes, switches account or server, or stops
watching, and over https its fresh connection can be mid-handshake then: the socket stayed
open until a garbage collection (which the window defers, `sync.reconcile.gc_pause`), and the server
kept the half-open connection for its handshake timeout. `tests/sync/test_tls_cancel.py`.

The wrapper is installed on httpx's transports (`cancel_safe`); httpx builds its pool
itself and takes no backend, so this reaches the pool's one private attribute and leaves
the transport as it is when a later httpcore renames it (the test then fails).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import anyio
import httpcore
import httpx

log = logging.getLogger(__name__)

SocketOption = Any  # httpcore's own alias is private


class _CancelSafeStream(httpcore.AsyncNetworkStream):
    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self._inner = inner

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self._inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            upgraded = await self._inner.start_tls(ssl_context, server_hostname, timeout)
        except BaseException:
            # Cancelled (an Exception has closed it already; a second close is a no-op).
            with anyio.CancelScope(shield=True):
                await self._inner.aclose()
            raise
        return _CancelSafeStream(upgraded)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class CancelSafeBackend(httpcore.AsyncNetworkBackend):
    """Another backend's connections, each closing its socket on a cancelled handshake."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend) -> None:
        self.inner = inner

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        stream = await self.inner.connect_tcp(host, port, timeout, local_address, socket_options)
        return _CancelSafeStream(stream)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        stream = await self.inner.connect_unix_socket(path, timeout, socket_options)
        return _CancelSafeStream(stream)

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def cancel_safe(transport: httpx.AsyncHTTPTransport) -> httpx.AsyncHTTPTransport:
    """`transport`, its pool's connections made through `CancelSafeBackend`."""
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if backend is None:
        log.warning("httpcore's pool has no _network_backend: cancelled handshakes may leak")
    elif not isinstance(backend, CancelSafeBackend):
        pool._network_backend = CancelSafeBackend(backend)  # type: ignore[union-attr]
    return transport
