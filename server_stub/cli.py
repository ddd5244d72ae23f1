"""`converge-server`: the stub on the command line (CONTRACT §5).

Stdout carries exactly one line, `listening on http://HOST:PORT`, written and flushed once
the socket accepts connections; everything else (logs, the access log) goes to stderr.
SIGINT and SIGTERM stop the server after in-flight requests finish, with exit status 0.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import logging
import signal
import socket
import sys
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette

from server_stub.config import ServerSettings, default_data_dir, default_database_url
from server_stub.db.schema import schema_refusal
from server_stub.edge.app import create_app
from server_stub.edge.auth import load_principals
from server_stub.edge.connections import listen
from server_stub.edge.hosts import HostPolicy, is_loopback_name
from server_stub.edge.limits import raise_open_files_limit
from server_stub.edge.protocol import HEAD_LIMIT, bounded_protocol
from server_stub.observe import logformat
from server_stub.observe.requests import parse_networks
from server_stub.runner import ConvergeServer, connection_table
from server_stub.storage.private import ensure_parent, private_dir
from server_stub.storage.singleprocess import DatabaseInUse, SqliteProcessLock, sqlite_path

log = logging.getLogger("converge-server")


class _Server(ConvergeServer):
    """uvicorn without its own signal capture (which re-raises the signal after shutdown,
    turning a clean stop into a non-zero exit); `main` installs handlers on the loop."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None]:
        yield


def build_parser() -> argparse.ArgumentParser:
    """The command line of CONTRACT §5."""
    p = argparse.ArgumentParser(
        prog="converge-server", description="Stub of the shared core's sixteen routes."
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    p.add_argument("--database", help="SQLAlchemy URL (default: SQLite in the user data dir)")
    p.add_argument(
        "--artifacts",
        help="object store: a folder (created when missing) or s3://BUCKET/PREFIX",
    )
    p.add_argument("--principals", type=Path, help="TOML file of [[principal]] tokens")
    p.add_argument("--seed", choices=["demo"], help="fill an empty database with demo history")
    p.add_argument(
        "--control",
        action="store_true",
        help="serve the /_stub control plane: QA only, no authentication, and every local user "
        "of this machine reaches it (it answers about any tenant's ids)",
    )
    p.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also serve requests whose Host is NAME (repeatable; *.example.com admits the "
        "names under example.com); loopback names are always served",
    )
    p.add_argument("--maintenance-interval", type=float, default=60.0, metavar="SECONDS")
    p.add_argument("--agent-delay", type=float, default=0.2, metavar="SECONDS")
    p.add_argument(
        "--pg-vacuum-full",
        action="store_true",
        help="PostgreSQL: VACUUM FULL the purged tables after deletes (no dead bytes left "
        "in table files; locks each table while it runs)",
    )
    p.add_argument(
        "--run-lease",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="fleet: a run's lease; a process that stops renewing it is taken for dead",
    )
    p.add_argument(
        "--no-index-lease",
        action="store_true",
        help="PostgreSQL: never answer the session index from remembered versions (each "
        "request reads its version; for a fleet that includes a build without the lease)",
    )
    p.add_argument(
        "--run-heartbeat",
        type=float,
        default=3.0,
        metavar="SECONDS",
        help="fleet: how often a process renews its runs' leases and looks for orphaned runs",
    )
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    _add_observability(p)
    _add_load_bounds(p)
    _add_s3(p)
    return p


def _add_observability(p: argparse.ArgumentParser) -> None:
    """Logs and metrics (docs/server.md "Metrics and logs")."""
    p.add_argument(
        "--log-format",
        default="human",
        choices=["human", "json"],
        help="json: one object per line on stderr (the access log with route, status, "
        "duration and request id)",
    )
    p.add_argument(
        "--metrics-from",
        action="append",
        default=[],
        metavar="CIDR",
        help="also serve GET /metrics to peers in this network (repeatable; loopback always)",
    )
    p.add_argument(
        "--outbox-warn-age",
        type=float,
        default=ServerSettings().outbox_warn_seconds,
        metavar="SECONDS",
        help="warn (once per --repeat-log-interval) while a deletion outbox entry is older",
    )


def _add_s3(p: argparse.ArgumentParser) -> None:
    """The bucket store's options (`--artifacts s3://…`; docs/server.md "Object stores")."""
    g = p.add_argument_group("S3-compatible object store (with --artifacts s3://BUCKET/PREFIX)")
    g.add_argument("--s3-endpoint", metavar="URL", help="default: AWS S3 itself")
    g.add_argument("--s3-region", metavar="NAME")
    g.add_argument(
        "--s3-profile", metavar="NAME", help="credentials profile (default: AWS_* variables)"
    )
    g.add_argument("--s3-timeout", type=float, default=5.0, metavar="SECONDS")
    g.add_argument(
        "--s3-compact-url",
        metavar="URL",
        help="requested by maintenance after deletes, so that the store drops deleted bytes "
        "from its files (SeaweedFS: http://MASTER/vol/vacuum?garbageThreshold=0.000001)",
    )


def _s3_settings(args: argparse.Namespace) -> dict[str, Any]:
    """`--artifacts` split into a folder or a bucket URL, with the bucket's options."""
    artifacts = args.artifacts
    if artifacts is None or not artifacts.startswith("s3://"):
        if args.s3_endpoint or args.s3_compact_url:
            raise ValueError("--s3-endpoint and --s3-compact-url need --artifacts s3://…")
        return {"artifacts_dir": None if artifacts is None else Path(artifacts)}
    from server_stub.storage.s3store import S3Location

    S3Location.parse(artifacts)  # ValueError for a malformed URL
    for url in (args.s3_endpoint, args.s3_compact_url):
        if url is not None and not url.startswith(("http://", "https://")):
            raise ValueError(f"not an http(s) URL: {url!r}")
    return {
        "s3_url": artifacts,
        "s3_endpoint": args.s3_endpoint,
        "s3_region": args.s3_region,
        "s3_profile": args.s3_profile,
        "s3_timeout": max(0.1, args.s3_timeout),
        "s3_compact_url": args.s3_compact_url,
    }


def _add_load_bounds(p: argparse.ArgumentParser) -> None:
    """The caps on clients (CONTRACT §10.2; docs/server.md "Load bounds")."""
    d = ServerSettings()
    g = p.add_argument_group("load bounds (per process; see docs/server.md)")
    n, s = "N", "SECONDS"
    g.add_argument(
        "--max-connections", type=int, metavar=n, help="default: from the open-files limit"
    )
    g.add_argument(
        "--max-connections-per-peer",
        type=int,
        metavar=n,
        help="per client address (default: half of --max-connections; behind a reverse "
        "proxy every client has the proxy's address: give it the total)",
    )
    g.add_argument(
        "--max-streams-per-principal", type=int, default=d.max_streams_per_principal, metavar=n
    )
    g.add_argument("--max-streams", type=int, metavar=n, help="default: from the open-files limit")
    g.add_argument(
        "--max-watches-per-principal", type=int, default=d.max_watches_per_principal, metavar=n
    )
    g.add_argument("--max-watches", type=int, metavar=n, help="default: from the open-files limit")
    g.add_argument("--body-timeout", type=float, default=d.body_timeout, metavar=s)
    g.add_argument("--write-burst", type=int, default=d.write_burst, metavar=n)
    g.add_argument("--write-rate", type=float, default=d.write_rate, metavar="PER_SECOND")
    g.add_argument(
        "--write-mib-burst", type=float, default=d.write_bytes_burst / 2**20, metavar="MIB"
    )
    g.add_argument(
        "--write-mib-rate", type=float, default=d.write_bytes_rate / 2**20, metavar="MIB"
    )
    g.add_argument("--no-rate-limit", action="store_true", help="no write rate limit (benchmarks)")
    g.add_argument("--repeat-log-interval", type=float, default=d.repeat_log_interval, metavar=s)


def _load_bounds(args: argparse.Namespace) -> dict[str, Any]:
    """The settings of `_add_load_bounds`, each clamped to a sane minimum."""

    def at_least(value: int | None, least: int) -> int | None:
        return None if value is None else max(least, value)

    return {
        "max_connections": at_least(args.max_connections, 8),
        "max_connections_per_peer": at_least(args.max_connections_per_peer, 1),
        "max_streams_per_principal": max(1, args.max_streams_per_principal),
        "max_streams_per_process": None if args.max_streams is None else max(1, args.max_streams),
        "max_watches_per_principal": max(0, args.max_watches_per_principal),
        "max_watches_per_process": None if args.max_watches is None else max(0, args.max_watches),
        "body_timeout": max(0.1, args.body_timeout),
        "write_rate_limit": not args.no_rate_limit,
        "write_burst": max(1, args.write_burst),
        "write_rate": max(0.0, args.write_rate),
        "write_bytes_burst": max(2**20, int(args.write_mib_burst * 2**20)),
        "write_bytes_rate": max(0.0, args.write_mib_rate * 2**20),
        "repeat_log_interval": max(0.1, args.repeat_log_interval),
    }


def settings_from_args(args: argparse.Namespace) -> ServerSettings:
    """Typed settings from parsed arguments (ValueError for a bad principals file)."""
    database = args.database
    if database is None:
        private_dir(default_data_dir())
        database = default_database_url()
    principals = load_principals(args.principals) if args.principals else None
    allowed = tuple(args.allowed_host)
    HostPolicy(allowed)  # ValueError for a malformed name
    parse_networks(args.metrics_from)  # ValueError for a malformed network
    if args.control and not is_loopback_name(args.host):
        raise ValueError(
            f"--control is refused with --host {args.host}: the control plane has no "
            "authentication, so it is served on loopback only (use --host 127.0.0.1)"
        )
    return ServerSettings(
        database_url=database,
        principals=principals,
        control=args.control,
        agent_delay=max(0.0, args.agent_delay),
        maintenance_interval=max(0.05, args.maintenance_interval),
        seed=args.seed,
        pg_vacuum_full=args.pg_vacuum_full,
        host=args.host,
        port=args.port,
        allowed_hosts=allowed,
        run_lease_seconds=max(0.2, args.run_lease),
        index_lease=not args.no_index_lease,
        run_heartbeat_seconds=max(0.05, min(args.run_heartbeat, args.run_lease / 2)),
        run_reap_seconds=max(0.05, min(args.run_heartbeat, 2.0)),
        metrics_from=tuple(args.metrics_from),
        access_log=args.log_format == "json",
        outbox_warn_seconds=max(0.0, args.outbox_warn_age),
        **_load_bounds(args),
        **_s3_settings(args),
    )


def _announce(server: uvicorn.Server) -> None:
    host, port = server.servers[0].sockets[0].getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    sys.stdout.write(f"listening on http://{shown}:{port}\n")
    sys.stdout.flush()


def server_config(app: Starlette, settings: ServerSettings, log_level: str) -> uvicorn.Config:
    """uvicorn's configuration of a server process: the CLI's, and the bench's floor app
    (`bench/floor.py`), whose figures are a floor only under this same one (PITFALLS §14:
    protocol, head and keep-alive bounds, lifespan)."""
    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_config=None,
        log_level=log_level,
        access_log=not settings.access_log,  # the app writes its own (`observe`)
        timeout_graceful_shutdown=3,
        lifespan="on",
        http=bounded_protocol(settings.head_timeout, connection_table(settings)),
        timeout_keep_alive=settings.timeout_keep_alive,
        h11_max_incomplete_event_size=HEAD_LIMIT,
        proxy_headers=False,  # the peer address is the socket's (the control plane's check)
    )


def _cannot_listen(host: str, port: int, exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        reason = "the address is already in use"
    else:
        reason = (exc.strerror or str(exc)).lower()
    shown = f"[{host}]" if ":" in host else host
    return f"converge-server: cannot listen on {shown}:{port}: {reason}"


def serve(
    app: Starlette, config: uvicorn.Config, sockets: list[socket.socket] | None = None
) -> int:
    """Serve `app` until SIGINT or SIGTERM (on `sockets` when given, from `listen`), saying
    `listening on URL` on stdout once bound (what launchers and the bench read); 0, or 1
    when it could not start."""
    return asyncio.run(_serve(_Server(config, app), sockets))


async def _serve(server: _Server, sockets: list[socket.socket] | None = None) -> int:
    loop = asyncio.get_running_loop()

    def stop() -> None:
        if server.should_exit:
            server.force_exit = True
        server.should_exit = True

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop)
    task = asyncio.create_task(server.serve(sockets))
    while not server.started:
        if task.done():
            break
        await asyncio.sleep(0.01)
    if server.started:
        _announce(server)
    await task
    return 0 if server.started else 1


def _sqlite_in_use(url: str) -> str | None:
    """Why the SQLite database cannot be served by this process (another serves it), or
    None. A probe for a clean message: the app takes the lock for real at start-up."""
    path = sqlite_path(url)
    if path is None:
        return None
    ensure_parent(path)
    lock = SqliteProcessLock(path)
    try:
        lock.acquire()
    except DatabaseInUse as exc:
        return str(exc)
    lock.release()
    return None


def _schema_refusal(url: str) -> str | None:
    """Why this build cannot serve the database's schema (a newer one), or None: a probe
    for a clean sentence; the app upgrades for real at start-up (server_stub.db.schema).
    A database that cannot be reached is left to the start-up, which reports it."""
    from sqlalchemy.exc import SQLAlchemyError

    from server_stub.db.engine import Database

    db = Database(url)
    try:
        return schema_refusal(db.engine)
    except SQLAlchemyError:
        return None
    finally:
        db.dispose()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `converge-server` console script."""
    args = build_parser().parse_args(argv)
    logformat.install(args.log_level, args.log_format)
    # SQLAlchemy logs statements with their parameters (titles, messages) at INFO: never,
    # whatever the level (CONTRACT §9.2: logs hold ids, not content).
    logging.getLogger("sqlalchemy").setLevel(logging.WARNING)
    try:
        settings = settings_from_args(args)
    except (OSError, ValueError) as exc:
        print(f"converge-server: {exc}", file=sys.stderr)
        return 2
    try:
        sockets = listen(settings.host, settings.port)
    except OSError as exc:
        print(_cannot_listen(settings.host, settings.port, exc), file=sys.stderr)
        return 1
    refusal = _sqlite_in_use(settings.database_url) or _schema_refusal(settings.database_url)
    if refusal is not None:
        for sock in sockets:
            sock.close()
        print(f"converge-server: {refusal}", file=sys.stderr)
        return 1
    raise_open_files_limit()  # before the app sizes its caps from it (server_stub.edge.limits)
    if HostPolicy(settings.allowed_hosts).refuses_bind(settings.host):
        log.warning(
            "serving on %s, but only requests whose Host is loopback%s are answered; add "
            "--allowed-host NAME for each name clients use to reach this server",
            settings.host,
            "".join(f" or {name}" for name in settings.allowed_hosts),
        )
    app = create_app(settings)
    code = serve(app, server_config(app, settings, args.log_level), sockets)
    if code:
        print("converge-server: could not start (see the log above)", file=sys.stderr)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
