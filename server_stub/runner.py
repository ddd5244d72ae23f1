"""`ServerThread`: the stub on a daemon thread, for tests, the desktop app and the QA harness.

uvicorn binds `127.0.0.1:0` itself (a socket it makes keeps TCP_NODELAY, PITFALLS §3), with
signal handlers off (not the main thread) and a 1 s graceful timeout so an open SSE stream
cannot hold shutdown (PITFALLS §7). `start()` waits for `started` while watching that the
thread is still alive (a bind failure kills it silently).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
import time
from types import TracebackType

import uvicorn
from starlette.applications import Starlette

from server_stub.config import ServerSettings
from server_stub.edge.app import create_app, release_held_watches
from server_stub.edge.connections import ConnectionTable, guarded, listen
from server_stub.edge.limits import open_files_limit, raise_open_files_limit
from server_stub.edge.protocol import HEAD_LIMIT, bounded_protocol
from server_stub.observe.ratelog import RepeatLog


def connection_table(settings: ServerSettings) -> ConnectionTable:
    """The caps on connections of `settings` (None: sized from the open-files limit)."""
    return ConnectionTable(
        settings.max_connections,
        settings.max_connections_per_peer,
        RepeatLog(logging.getLogger("server_stub.load"), settings.repeat_log_interval),
    )


class ServerStartError(RuntimeError):
    """The server thread died or did not start in time."""


class ConvergeServer(uvicorn.Server):
    """uvicorn that accepts through its protocol's `ConnectionTable` (the caps on
    connections, sized from the open-files limit raised before it starts), and answers held
    index watches as soon as it starts shutting down (uvicorn waits for in-flight requests
    before the lifespan ends, so the lifespan is too late)."""

    def __init__(self, config: uvicorn.Config, app: Starlette) -> None:
        super().__init__(config)
        self.converge_app = app
        self._listeners: list[socket.socket] = []

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        table = getattr(self.config.http, "table", None)
        if isinstance(table, ConnectionTable):
            table.size(open_files_limit())
            if sockets is None:
                sockets = listen(self.config.host, self.config.port)
            sockets = self._listeners = [guarded(sock, table) for sock in sockets]
        try:
            await super().startup(sockets)
        except BaseException:  # a lifespan that failed exits before uvicorn owns them
            self._close_listeners()
            raise

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        release_held_watches(self.converge_app)
        try:
            await super().shutdown(sockets)
        finally:
            self._close_listeners()

    def _close_listeners(self) -> None:
        """Close the listening sockets made here (closing twice is harmless): uvicorn closes
        only those its servers were made from, and only once it started."""
        listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener.close()


class _ThreadServer(ConvergeServer):
    """uvicorn whose main loop wakes at once when `request_exit` is called (instead of at
    its next 0.1 s tick), so stopping a test server does not wait for a tick."""

    _wake: asyncio.Event | None = None
    _loop: asyncio.AbstractEventLoop | None = None

    async def main_loop(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), 0.1)
            should_exit = await self.on_tick(counter)

    def request_exit(self) -> None:
        """Ask the server to stop; callable from any thread."""
        self.should_exit = True
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(wake.set)


class ServerThread:
    """Context manager running one stub server; `.url` is its base URL once started."""

    def __init__(
        self,
        settings: ServerSettings,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        tls: tuple[str, str] | None = None,
    ) -> None:
        """`tls`: (certificate PEM file, key PEM file) to serve https:// (tests of the
        client's certificate checks); None serves plain http://."""
        self.settings = settings
        self.app = create_app(settings)
        self._scheme = "https" if tls else "http"
        config = uvicorn.Config(
            self.app,
            host=host,
            port=port,
            timeout_graceful_shutdown=1,
            log_config=None,
            access_log=False,
            lifespan="on",
            http=bounded_protocol(settings.head_timeout, connection_table(settings)),
            timeout_keep_alive=settings.timeout_keep_alive,
            h11_max_incomplete_event_size=HEAD_LIMIT,
            ssl_certfile=tls[0] if tls else None,
            ssl_keyfile=tls[1] if tls else None,
            proxy_headers=False,  # the peer address is the socket's (the control plane's check)
        )
        self.server = _ThreadServer(config, self.app)
        self.thread = threading.Thread(target=self._run, name="converge-server", daemon=True)
        self.url = ""
        self.error: BaseException | None = None

    def _run(self) -> None:
        # uvicorn answers a bind failure with sys.exit(1): keep it inside this thread.
        try:
            self.server.run()
        except BaseException as exc:
            self.error = exc

    def start(self, timeout: float = 30.0) -> ServerThread:
        """Start and wait until the socket accepts connections."""
        raise_open_files_limit()  # the caps are sized from it (server_stub.edge.limits)
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive():
                raise ServerStartError(
                    f"the server thread died during start-up ({self.error!r})"
                ) from self.error
            if time.monotonic() > deadline:
                self.stop()
                raise ServerStartError("the server did not start in time")
            time.sleep(0.005)
        sock = self.server.servers[0].sockets[0]
        host, port = sock.getsockname()[:2]
        self.url = f"{self._scheme}://{host}:{port}"
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the server to exit and join its thread."""
        self.server.request_exit()
        if self.thread.is_alive():
            self.thread.join(timeout)

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
