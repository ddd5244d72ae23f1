"""Typed server settings, read once (from the command line or a test) and passed to the app."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

APP_NAME = "converge-server"


def default_data_dir() -> Path:
    """The user data directory where the default database and object store live."""
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def default_database_url() -> str:
    """A SQLite file in the user data directory."""
    return f"sqlite:///{default_data_dir() / 'converge-server.sqlite3'}"


@dataclass(frozen=True)
class PrincipalEntry:
    """One accepted bearer token and who it stands for."""

    token: str
    tenant: str
    principal: str
    scopes: frozenset[str]


@dataclass(frozen=True)
class ServerSettings:
    """Everything the stub needs to run; defaults match `converge-server` without options."""

    database_url: str = field(default_factory=default_database_url)
    artifacts_dir: Path | None = None
    principals: tuple[PrincipalEntry, ...] | None = None
    control: bool = False
    agent_delay: float = 0.2
    maintenance_interval: float = 60.0
    seed: str | None = None
    host: str = "127.0.0.1"
    port: int = 8765
    #: Host names served besides loopback (`--allowed-host`, server_stub.edge.hosts).
    allowed_hosts: tuple[str, ...] = ()
    sse_keepalive: float = 15.0
    #: PostgreSQL: after a purge, maintenance runs VACUUM FULL (rewrites the purged tables,
    #: so no dead tuple's bytes stay in their files) instead of a plain VACUUM (which frees
    #: the space but leaves the old bytes until new rows overwrite them). FULL locks each
    #: table while it runs: docs/reliability.md has the figures.
    pg_vacuum_full: bool = False
    # Load bounds (docs/server.md): how often a run's single feed reader re-reads without a
    # wake-up (a safety net only). The caps on clients are grouped below.
    feed_poll_seconds: float = 5.0
    # Idle keep-alive connections are closed after this many seconds (uvicorn), and a request
    # head must arrive within `head_timeout` seconds (server_stub.edge.protocol).
    timeout_keep_alive: int = 5
    head_timeout: float = 10.0
    # Fleet (PostgreSQL): a run's lease lasts `run_lease_seconds`, renewed every
    # `run_heartbeat_seconds`; every `run_reap_seconds` a process fails the runs whose lease
    # expired (their process died).
    run_lease_seconds: float = 10.0
    run_heartbeat_seconds: float = 3.0
    run_reap_seconds: float = 2.0
    #: Honour `Prefer: wait=N` on the session index (CONTRACT §9.1). Off: the preference is
    #: ignored, as by a server that predates it (tests of the client's fallback use this).
    index_watch: bool = True
    #: PostgreSQL: take the index-cache lease when alone on the database (`indexlease`,
    #: decision 0190). Off: every request reads its version, as before the lease.
    index_lease: bool = True
    # The server trusts no client (CONTRACT §10.2, docs/server.md "Load bounds"). Open
    # connections in all and per peer address; past a cap the longest-idle one is closed
    # (server_stub.edge.connections); None: sized at start from the open-files limit.
    max_connections: int | None = None
    max_connections_per_peer: int | None = None
    # Held SSE
    # streams and index watches, per principal and per process; a per-process cap of None is
    # sized at start from the open-files limit (server_stub.edge.limits.connection_caps).
    max_streams_per_principal: int = 256
    max_streams_per_process: int | None = None
    max_watches_per_principal: int = 64
    max_watches_per_process: int | None = None
    #: A request body must be complete this many seconds after its head (400 otherwise).
    body_timeout: float = 30.0
    #: Writes (POST/DELETE under /v1) per principal and process: a token bucket of
    #: `write_burst` requests refilled at `write_rate` per second, and one of body bytes
    #: (`write_bytes_burst`, `write_bytes_rate` per second); 429 `rate_limited` beyond.
    write_rate_limit: bool = True
    write_burst: int = 1000
    write_rate: float = 200.0
    write_bytes_burst: int = 64 * 1024 * 1024
    write_bytes_rate: float = 16 * 1024 * 1024
    #: A warning that repeats (a cap refusal, an accept error) is logged once per interval.
    repeat_log_interval: float = 60.0
    #: Networks besides loopback whose peers may read `GET /metrics` (`--metrics-from`).
    metrics_from: tuple[str, ...] = ()
    #: The app writes the access log itself, with fields (`--log-format json`); otherwise
    #: uvicorn's access log is the one (`server_stub.observe.requests`).
    access_log: bool = False
    #: A deletion outbox entry older than this is warned about once per
    #: `repeat_log_interval` (`server_stub.observe.metrics.watch_outbox`).
    outbox_warn_seconds: float = 3600.0
    # Artifact bytes in a bucket instead of the folder (`--artifacts s3://BUCKET/PREFIX`,
    # server_stub.storage.s3store): the endpoint (None: AWS's own), region and credentials profile
    # (None: the standard AWS_* variables and files), the timeout of each call, and the
    # compaction hook maintenance requests after deletes (SeaweedFS: the master's
    # `/vol/vacuum?garbageThreshold=…`; docs/server.md).
    s3_url: str | None = None
    s3_endpoint: str | None = None
    s3_region: str | None = None
    s3_profile: str | None = None
    s3_timeout: float = 5.0
    s3_compact_url: str | None = None

    def resolved_artifacts_dir(self) -> Path:
        """The object store folder: explicit, else beside a SQLite file, else the data dir."""
        if self.artifacts_dir is not None:
            return self.artifacts_dir
        prefix = "sqlite:///"
        if self.database_url.startswith(prefix) and ":memory:" not in self.database_url:
            db_path = Path(self.database_url[len(prefix) :])
            return db_path.parent / (db_path.name + ".objects")
        return default_data_dir() / "objects"
