"""The bundled stub server that `converge` starts when no server is configured.

A new user sees a working history at once (CONTRACT §8): the stub runs on a free loopback
port with the demo seed, its database and object store in the profile folder, so the demo
history persists between launches like a real account would. Starting it (imports, schema,
seed) takes a second or more, so it happens on a worker thread: the window paints first.

Its only token is a random one made for the profile on first start and kept in
`bundled-server/token` (0600): the public development tokens (`dev-alice`) would let any web
page that reaches the port (DNS rebinding, CONTRACT §10.2) read and delete the history.
It stands for the demo seed's alice, so the demo history shows; Settings shows it for a
second device to join.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import secrets
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from sync import SyncError

if TYPE_CHECKING:
    from server_stub.runner import ServerThread

log = logging.getLogger(__name__)

SERVER_DIR = "bundled-server"
PORT_FILE = "port"
TOKEN_FILE = "token"
#: Who the profile's token stands for: the demo seed's first principal (server_stub.domain.seed).
DEMO_TENANT, DEMO_PRINCIPAL = "acme", "alice"
#: What `secrets.token_urlsafe(32)` makes: 43 URL-safe characters. A token file holding
#: anything else (empty, cut short, edited) is replaced by a new token.
_TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{43}")


def read_token(folder: Path) -> str | None:
    """The profile's demo token from `folder/token`, None when missing or malformed."""
    try:
        value = (folder / TOKEN_FILE).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return value if _TOKEN_SHAPE.fullmatch(value) else None


def ensure_token(folder: Path) -> str:
    """The profile's demo token, made (random, 256 bits) and saved 0600 on first use.

    The file is written whole under a temporary name, then linked into place only if there
    is still none (two windows starting on a fresh profile at once keep the first one's
    token: the second is refused by the database lock anyway), or renamed over a damaged
    one; a crash leaves the old token or the new one, never half of one."""
    token = read_token(folder)
    if token is not None:
        return token
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(OSError):
        folder.chmod(0o700)
    target = folder / TOKEN_FILE
    fresh = secrets.token_urlsafe(32)
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=".token-")  # 0600 whatever the umask
    try:
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(fresh + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(temporary, target)
        except FileExistsError:
            if read_token(folder) is None:  # damaged: replace it
                os.replace(temporary, target)
        except OSError:  # a file system without hard links
            os.replace(temporary, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
    token = read_token(folder)
    if token is None:
        raise OSError(f"could not save the demo server's token in {target}")
    if token == fresh:
        log.info("made a new token for this profile's demo server")
    return token


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
        self.token = ""  # the profile's demo token, once `start()` has returned
        self._thread: ServerThread | None = None
        self._starting: asyncio.Future[str] | None = None

    def _start_blocking(self) -> str:
        """Start on the port asked for, else the one this profile used last time (so a
        second device configured with that URL finds it again after a restart), else any
        free port; the port in use is saved for next time."""
        from server_stub.runner import ServerStartError
        from server_stub.storage.singleprocess import DatabaseInUse, SqliteProcessLock

        self.folder.mkdir(parents=True, exist_ok=True)
        self.token = ensure_token(self.folder)
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
        from server_stub.config import PrincipalEntry, ServerSettings
        from server_stub.edge.auth import ALL_SCOPES
        from server_stub.runner import ServerThread

        database = self.folder / "converge-server.sqlite3"
        settings = ServerSettings(
            database_url=f"sqlite:///{database}",
            artifacts_dir=self.folder / "objects",
            seed="demo",
            # This profile's token only: never the public development tokens.
            principals=(PrincipalEntry(self.token, DEMO_TENANT, DEMO_PRINCIPAL, ALL_SCOPES),),
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
