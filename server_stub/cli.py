"""`converge-server`: the stub on the command line (CONTRACT §5).

Stdout carries exactly one line, `listening on http://HOST:PORT`, written and flushed once
the socket accepts connections; everything else (logs, the access log) goes to stderr.
SIGINT and SIGTERM stop the server after in-flight requests finish, with exit status 0.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Generator, Sequence
from pathlib import Path

import uvicorn

from server_stub.app import create_app
from server_stub.auth import load_principals
from server_stub.config import ServerSettings, default_data_dir, default_database_url
from server_stub.hosts import HostPolicy, is_loopback_name
from server_stub.protocol import HEAD_LIMIT, bounded_protocol
from server_stub.runner import ConvergeServer
from server_stub.singleprocess import DatabaseInUse, SqliteProcessLock, sqlite_path

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
    p.add_argument("--artifacts", type=Path, help="object store folder (created when missing)")
    p.add_argument("--principals", type=Path, help="TOML file of [[principal]] tokens")
    p.add_argument("--seed", choices=["demo"], help="fill an empty database with demo history")
    p.add_argument("--control", action="store_true", help="serve the /_stub control plane")
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
        "--run-heartbeat",
        type=float,
        default=3.0,
        metavar="SECONDS",
        help="fleet: how often a process renews its runs' leases and looks for orphaned runs",
    )
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    return p


def settings_from_args(args: argparse.Namespace) -> ServerSettings:
    """Typed settings from parsed arguments (ValueError for a bad principals file)."""
    database = args.database
    if database is None:
        default_data_dir().mkdir(parents=True, exist_ok=True)
        database = default_database_url()
    principals = load_principals(args.principals) if args.principals else None
    allowed = tuple(args.allowed_host)
    HostPolicy(allowed)  # ValueError for a malformed name
    if args.control and not is_loopback_name(args.host):
        raise ValueError(
            f"--control is refused with --host {args.host}: the control plane has no "
            "authentication, so it is served on loopback only (use --host 127.0.0.1)"
        )
    return ServerSettings(
        database_url=database,
        artifacts_dir=args.artifacts,
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
        run_heartbeat_seconds=max(0.05, min(args.run_heartbeat, args.run_lease / 2)),
        run_reap_seconds=max(0.05, min(args.run_heartbeat, 2.0)),
    )


def _announce(server: uvicorn.Server) -> None:
    host, port = server.servers[0].sockets[0].getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    sys.stdout.write(f"listening on http://{shown}:{port}\n")
    sys.stdout.flush()


async def _serve(server: _Server) -> int:
    loop = asyncio.get_running_loop()

    def stop() -> None:
        if server.should_exit:
            server.force_exit = True
        server.should_exit = True

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop)
    task = asyncio.create_task(server.serve())
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
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = SqliteProcessLock(path)
    try:
        lock.acquire()
    except DatabaseInUse as exc:
        return str(exc)
    lock.release()
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `converge-server` console script."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    # SQLAlchemy logs statements with their parameters (titles, messages) at INFO: never,
    # whatever the level (CONTRACT §9.2: logs hold ids, not content).
    logging.getLogger("sqlalchemy").setLevel(logging.WARNING)
    try:
        settings = settings_from_args(args)
    except (OSError, ValueError) as exc:
        print(f"converge-server: {exc}", file=sys.stderr)
        return 2
    refusal = _sqlite_in_use(settings.database_url)
    if refusal is not None:
        print(f"converge-server: {refusal}", file=sys.stderr)
        return 1
    if HostPolicy(settings.allowed_hosts).refuses_bind(settings.host):
        log.warning(
            "serving on %s, but only requests whose Host is loopback%s are answered; add "
            "--allowed-host NAME for each name clients use to reach this server",
            settings.host,
            "".join(f" or {name}" for name in settings.allowed_hosts),
        )
    app = create_app(settings)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_config=None,
        log_level=args.log_level,
        timeout_graceful_shutdown=3,
        lifespan="on",
        http=bounded_protocol(settings.head_timeout),
        timeout_keep_alive=settings.timeout_keep_alive,
        h11_max_incomplete_event_size=HEAD_LIMIT,
        proxy_headers=False,  # the peer address is the socket's (the control plane's check)
    )
    code = asyncio.run(_serve(_Server(config, app)))
    if code:
        print("converge-server: could not start (see the log above)", file=sys.stderr)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
