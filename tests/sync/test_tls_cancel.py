"""A request cancelled inside its TLS handshake closes its socket at once.

The watch's long-poll is cancelled whenever the window closes, switches server or account,
or stops watching, and over https its new connection may be mid-handshake then. httpcore
1.0.9 closes the TCP stream when the handshake fails with an `Exception`, not when it is
cancelled: the socket stayed open until a garbage collection (which the window defers), and
the server held a half-open connection for its whole handshake timeout. A fresh-clone run
failed on it (`ResourceWarning: unclosed transport` at the teardown of
`test_a_refused_certificate_is_an_error_in_the_window_and_settings_fix_it`).

The server here accepts and reads the ClientHello but never answers, so the client is
inside its handshake, deterministically, when the request is cancelled.
"""

from __future__ import annotations

import asyncio

import pytest

from sync.api.client import ApiClient
from sync.api.keepalive import keepalive_socket_options
from sync.api.network_backend import CancelSafeBackend
from sync.api.proxies import environment_mounts
from sync.api.tls import client_context
from sync.errors import SyncError
from tests.sync.helpers import run

#: How long the silent server waits for the client's socket to close: with the fix it
#: closes within the cancellation; without, only at a garbage collection (never, here).
CLOSE_DEADLINE = 10.0


async def _cancelled_in_handshake() -> bool:
    """Whether the silent server's side ends (the client closed) once the request is
    cancelled."""
    hello = asyncio.Event()
    ends: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        ends.append((reader, writer))
        await reader.read(1)  # the ClientHello has begun: the client is in its handshake
        hello.set()

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with ApiClient(f"https://127.0.0.1:{port}", "tok", retry_attempts=1) as api:
            request = asyncio.ensure_future(api.list_sessions())
            await hello.wait()
            request.cancel()
            with pytest.raises((asyncio.CancelledError, SyncError)):
                await request
            reader = ends[0][0]
            async with asyncio.timeout(CLOSE_DEADLINE):
                await reader.read()  # the rest of the hello, then the end of the stream
            return reader.at_eof()
    finally:
        for _, writer in ends:
            writer.close()
        server.close()
        await server.wait_closed()


def test_a_request_cancelled_in_its_tls_handshake_closes_its_socket() -> None:
    assert run(_cancelled_in_handshake())


def test_the_proxies_the_environment_names_connect_through_the_same_backend(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Behind a proxy the handshake to the server runs inside the proxy's tunnel, on a
    stream the proxy pool's backend made: the same wrapper must be there."""
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    mounts = environment_mounts(client_context(), keepalive_socket_options())
    proxied = [t for t in mounts.values() if t is not None]
    assert proxied
    for transport in proxied:
        assert isinstance(transport._pool._network_backend, CancelSafeBackend)  # type: ignore[attr-defined]
