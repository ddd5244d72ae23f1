"""The bundled stub server that `converge` starts when no server is configured.

A new user sees a working history at once (CONTRACT §8): the stub runs on a free loopback
port with the demo seed, its database and object store in the profile folder, so the demo
history persists between launches like a real account would. Starting it (imports, schema,
seed) takes a second or more, so it happens on a worker thread: the window paints first.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from sync import SyncError

if TYPE_CHECKING:
    from server_stub.runner import ServerThread

log = logging.getLogger(__name__)

DEMO_TOKEN = "dev-alice"
SERVER_DIR = "bundled-server"
PORT_FILE = "port"


def saved_port(folder: Path) -> int:
    """The port this profile's demo server used last time (0: none saved)."""
    try:
        value = int((folder / PORT_FILE).read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return 0
    return value if 0 < value < 65536 else 0


class BundledServer:
    """One stub server for one profile; `url` once `start()` has returned."""

    def __init__(self, profile_root: Path, *, agent_delay: float = 0.2, port: int = 0) -> None:
        self.folder = profile_root / SERVER_DIR
        self.agent_delay = agent_delay
        self.port = port
        self.url = ""
        self._thread: ServerThread | None = None
        self._starting: asyncio.Future[str] | None = None

    def _start_blocking(self) -> str:
        """Start on the port asked for, else the one this profile used last time (so a
        second device configured with that URL finds it again after a restart), else any
        free port; the port in use is saved for next time."""
        from server_stub.runner import ServerStartError
        from server_stub.singleprocess import DatabaseInUse, SqliteProcessLock

        self.folder.mkdir(parents=True, exist_ok=True)
        probe = SqliteProcessLock(self.folder / "converge-server.sqlite3")
        try:  # SQLite is served by one process (CONTRACT §9.4): say so in words
            probe.acquire()
        except DatabaseInUse:
            raise SyncError(
                "the built-in demo server of this profile is already running in another "
                "Converge window; close that window, or open this one with another --profile"
            ) from None
        probe.release()
        wanted = self.port or saved_port(self.folder)
        try:
            url = self._start_on(wanted)
        except ServerStartError:
            if self.port or not wanted:
                raise
            log.warning("the demo server's last port %d is taken; using another", wanted)
            url = self._start_on(0)
        port = url.rsplit(":", 1)[-1]
        try:
            (self.folder / PORT_FILE).write_text(port + "\n", encoding="utf-8")
        except OSError:
            log.warning("could not save the demo server's port")
        return url

    def _start_on(self, port: int) -> str:
        # Imported here, on the worker thread: FastAPI and SQLAlchemy take a while to load.
        from server_stub.config import ServerSettings
        from server_stub.runner import ServerThread

        database = self.folder / "converge-server.sqlite3"
        settings = ServerSettings(
            database_url=f"sqlite:///{database}",
            artifacts_dir=self.folder / "objects",
            seed="demo",
            agent_delay=self.agent_delay,
            host="127.0.0.1",
            port=port,
        )
        thread = ServerThread(settings, host="127.0.0.1", port=port)
        self._thread = thread
        thread.start()
        log.info("bundled server listening on %s (data in %s)", thread.url, self.folder)
        return thread.url

    async def start(self) -> str:
        """Start on a worker thread; returns the base URL."""
        if self._starting is None:
            loop = asyncio.get_running_loop()
            self._starting = asyncio.ensure_future(loop.run_in_executor(None, self._start_blocking))
        self.url = await asyncio.shield(self._starting)
        return self.url

    async def stop(self) -> None:
        """Stop the server (waiting for a start in progress first), off the UI thread."""
        if self._starting is not None:
            try:
                await asyncio.shield(self._starting)
            except Exception:
                log.info("bundled server had not started")
        thread = self._thread
        self._thread = None
        if thread is not None:
            await asyncio.get_running_loop().run_in_executor(None, thread.stop)
            log.info("bundled server stopped")
