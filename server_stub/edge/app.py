"""`create_app(settings)`: the FastAPI app, whose lifespan owns every shared resource.

The lifespan opens the database (creating the schema), seeds it when asked, fails runs left
active by a previous process, removes byte objects a crash left without metadata, and
starts the maintenance loop; at shutdown it cancels agent tasks and maintenance and disposes
of the engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from starlette.applications import Starlette

from server_stub.config import ServerSettings
from server_stub.db.engine import Database
from server_stub.db.pgloop import PgLoopReader
from server_stub.domain.agent import AgentManager
from server_stub.domain.bus import FleetBus
from server_stub.domain.cursors import CursorCodec
from server_stub.domain.feeds import RunFeeds
from server_stub.domain.indexlease import LEASE_KEY, IndexLease
from server_stub.domain.indexversions import IndexVersions
from server_stub.domain.leases import fail_orphans, keep_leases
from server_stub.domain.maintenance import maintenance_loop, sweep_orphan_objects
from server_stub.domain.notifier import RunNotifier
from server_stub.domain.recall import backfill as backfill_recall_index
from server_stub.domain.scrub import Scrubber
from server_stub.domain.watches import IndexWatches
from server_stub.edge import control, schemas
from server_stub.edge.apidocs import install_docs
from server_stub.edge.auth import DEV_PRINCIPALS, TokenTable
from server_stub.edge.bodylimit import BodyLimitMiddleware
from server_stub.edge.errors import install_error_handlers
from server_stub.edge.hosts import HostCheckMiddleware, HostPolicy
from server_stub.edge.indexpath import IndexPathMiddleware
from server_stub.edge.limits import connection_caps, log_accept_errors_once, open_files_limit
from server_stub.edge.ratelimit import RateLimitMiddleware
from server_stub.observe.metrics import Metrics, watch_outbox
from server_stub.observe.ratelog import RepeatLog, flush_every
from server_stub.observe.requests import MetricsEndpoint, ObserveMiddleware, parse_networks
from server_stub.routes import api_router, route_templates
from server_stub.routes.events import events_of
from server_stub.routes.runs import read_after
from server_stub.routes.sessions import delete_of, list_sessions
from server_stub.state import AppState, RequestThreads
from server_stub.storage.objectstore import FilesystemObjectStore, ObjectStore
from server_stub.storage.private import ensure_parent
from server_stub.storage.singleprocess import SqliteProcessLock, sqlite_path

log = logging.getLogger(__name__)

API_DESCRIPTION = (
    "Stub of the shared core's sixteen public routes (the fourteen-route baseline plus the "
    "session list and delete of ADR-0050). Authenticate with `Authorization: Bearer <token>`."
)


def create_app(settings: ServerSettings) -> FastAPI:
    """Build the app for `settings` (nothing is opened until the lifespan starts)."""

    metrics = (
        Metrics()
    )  # one registry per app (per process in a fleet): server_stub.observe.metrics

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        lock = _sqlite_lock(settings.database_url)
        try:
            loop = asyncio.get_running_loop()
            state = await asyncio.to_thread(_open_state, settings, loop, metrics)
            app.state.converge = state
            metrics.bind(state)
            try:
                await _start_up(state)
            except BaseException:
                await state.bus.close()
                await asyncio.to_thread(state.db.dispose)
                raise
        except BaseException:
            if lock is not None:
                lock.release()
            raise
        background = [
            asyncio.create_task(
                maintenance_loop(state.db, state.store, settings.maintenance_interval),
                name="maintenance",
            ),
            asyncio.create_task(
                keep_leases(
                    state.db,
                    state.agents.owner,
                    state.bus.owner_alive,
                    state.notifier.notify,
                    state.agents.executing,
                    lease=settings.run_lease_seconds,
                    heartbeat=settings.run_heartbeat_seconds,
                    reap=settings.run_reap_seconds,
                ),
                name="leases",
            ),
            asyncio.create_task(flush_every(state.repeat_log), name="repeat-log"),
            *(
                [asyncio.create_task(state.lease.run(), name="index-lease")]
                if state.lease is not None
                else []
            ),
            asyncio.create_task(
                watch_outbox(
                    metrics,
                    settings.outbox_warn_seconds,
                    settings.repeat_log_interval,
                    logging.getLogger("server_stub.outbox").warning,
                ),
                name="outbox-watch",
            ),
        ]
        restore_handler = log_accept_errors_once(asyncio.get_running_loop(), state.repeat_log)
        try:
            yield
        finally:
            restore_handler()
            state.watches.close()  # normally done earlier, by `release_held_watches`
            for task in background:
                task.cancel()
            for task in background:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            await state.feeds.close()
            await state.agents.shutdown()
            await state.scrubber.shutdown()
            if state.lease is not None:
                await state.lease.close()
            if state.pg_reader is not None:
                await state.pg_reader.close()
            await state.bus.close()
            await asyncio.to_thread(state.db.dispose)
            if lock is not None:
                lock.release()

    app = FastAPI(
        title="Converge stub server",
        version="1.0",
        description=API_DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,  # served by install_docs, from local files
        redoc_url=None,
        # No OpenTelemetry here (the server's own metrics are `server_stub.observe.metrics`): off,
        # FastAPI asks on every request whether a provider was configured meanwhile (three
        # environment reads, a visible share of a 304's time in process).
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.router.redirect_slashes = False  # `/v1/sessions/` is an unknown route, not a redirect
    install_error_handlers(app)
    install_docs(app)
    app.include_router(api_router())
    if settings.control:
        app.include_router(control.router)
    # Added first, so innermost: every check below still runs before it (`indexpath`).
    app.add_middleware(
        IndexPathMiddleware, endpoint=list_sessions, events=events_of, delete=delete_of
    )
    app.add_middleware(BodyLimitMiddleware, deadline=settings.body_timeout)
    app.add_middleware(RateLimitMiddleware, settings=settings)  # outside: refuses unread
    # Just inside the Host check: a rebinding page never reads /metrics (`observe`).
    app.add_middleware(
        MetricsEndpoint, metrics=metrics, allowed=parse_networks(settings.metrics_from)
    )
    # A request naming another host is refused before anything but the observer.
    app.add_middleware(HostCheckMiddleware, policy=HostPolicy(settings.allowed_hosts))
    # Added last, so outermost: every answer, refusals included, has a request id and a time.
    app.add_middleware(
        ObserveMiddleware,
        metrics=metrics,
        templates=route_templates(),
        log_access=settings.access_log,
    )

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            for item in schema["paths"].values():
                for operation in item.values():
                    operation.get("responses", {}).pop("422", None)  # we answer 400 instead
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            components.pop("HTTPValidationError", None)
            components.pop("ValidationError", None)
            for name, value in schemas.EXTRA_COMPONENTS.items():
                components.setdefault(name, value)
            schema["components"]["securitySchemes"] = {
                "bearer": {"type": "http", "scheme": "bearer"}
            }
            schema["security"] = [{"bearer": []}]
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


def _sqlite_lock(url: str) -> SqliteProcessLock | None:
    """Take the single-process lock of a SQLite database (DatabaseInUse when taken)."""
    path = sqlite_path(url)
    if path is None:
        return None
    ensure_parent(path)
    lock = SqliteProcessLock(path)
    lock.acquire()
    return lock


async def _start_up(state: AppState) -> None:
    """Join the fleet, fail the runs of processes that stopped (never a live process's),
    index old memories for recall, and remove byte objects no row names (safe beside other
    live processes: an artifact's intent row is committed before its bytes are written)."""
    await state.bus.start()
    failed = await asyncio.to_thread(
        fail_orphans, state.db, state.agents.owner, state.bus.owner_alive
    )
    if failed:
        log.info("failed %d runs left active by a stopped process", len(failed))
    indexed = await asyncio.to_thread(backfill_recall_index, state.db)
    if indexed:
        log.info("indexed the words of %d memories for recall", indexed)
    orphans = await asyncio.to_thread(sweep_orphan_objects, state.db, state.store)
    if orphans:
        log.info("removed %d byte objects left without metadata by a crash", orphans)


def release_held_watches(app: Starlette) -> None:
    """Answer every held index watch now (304) and hold no new one. uvicorn waits for
    in-flight requests *before* the lifespan's shutdown, so its servers call this when they
    begin to shut down (`runner.py`, `cli.py`); otherwise a watch would hold the graceful
    shutdown for up to 60 s. On the loop."""
    state = getattr(app.state, "converge", None)
    if isinstance(state, AppState):
        state.watches.close()


def _open_store(settings: ServerSettings) -> ObjectStore:
    """The folder store, or a bucket's (boto3, a slow import, only then; decision 0150)."""
    if settings.s3_url is None:
        return FilesystemObjectStore(settings.resolved_artifacts_dir())
    from server_stub.storage.s3store import S3Location, S3ObjectStore

    return S3ObjectStore(
        S3Location.parse(settings.s3_url),
        endpoint=settings.s3_endpoint,
        region=settings.s3_region,
        profile=settings.s3_profile,
        timeout=settings.s3_timeout,
        compact_url=settings.s3_compact_url,
    )


def _open_state(
    settings: ServerSettings, loop: asyncio.AbstractEventLoop, metrics: Metrics
) -> AppState:
    db = Database(settings.database_url)
    db.vacuum_full = settings.pg_vacuum_full
    log.info("database schema %s", db.create_schema())
    store = _open_store(settings)
    if settings.seed == "demo":
        from server_stub.domain.seed import seed_demo

        seed_demo(db, store)
    notifier = RunNotifier(loop)
    agents = AgentManager(db, store, notifier, loop, settings.agent_delay)
    caps = connection_caps(open_files_limit())  # the limit raised at start (limits.py)
    threads = RequestThreads()  # requests' and feeds' polls: one bound below the pool's size
    feeds = RunFeeds(
        notifier,
        partial(read_after, db),
        threads.run,
        max_streams_per_principal=settings.max_streams_per_principal,
        max_streams_per_process=settings.max_streams_per_process or caps.streams,
        poll_seconds=settings.feed_poll_seconds,
    )
    # Held index watches wake after this process's commits (Database.index_listener) and
    # after other processes' (the fleet bus's index messages, PostgreSQL NOTIFY).
    watches = IndexWatches(
        loop,
        max_per_principal=settings.max_watches_per_principal,
        max_per_process=settings.max_watches_per_process or caps.watches,
    )
    # Remembered versions are forgotten right after this process's commits, before the
    # writer's request answers (`indexversions`); on PostgreSQL they are used only while
    # this process holds the index-cache lease (`indexlease`, decision 0190).
    versions = IndexVersions(enabled=db.is_sqlite)

    def index_changed(tenant: str, principal: str) -> None:
        versions.forget(tenant, principal)
        watches.principal_index_changed(tenant, principal)

    db.index_listener = index_changed
    bus = FleetBus(db, notifier)
    bus.on_index_change(index_changed)
    pg_reader = None if db.is_sqlite else PgLoopReader(settings.database_url)
    lease = None
    if pg_reader is not None and settings.index_lease:
        db.meta_value(LEASE_KEY, "")  # the lease's row, free
        lease = IndexLease(pg_reader, versions, db.instance_id)
        bus.on_cache_revoke(lease.revoked)
        bus.on_disconnect = lease.lost
    return AppState(
        bus=bus,
        settings=settings,
        db=db,
        tokens=TokenTable(settings.principals or DEV_PRINCIPALS),
        cursors=CursorCodec(db.cursor_key()),
        store=store,
        notifier=notifier,
        feeds=feeds,
        epoch=db.epoch(),
        agents=agents,
        loop=loop,
        scrubber=Scrubber(db, loop),
        watches=watches,
        repeat_log=RepeatLog(logging.getLogger("server_stub.load"), settings.repeat_log_interval),
        versions=versions,
        pg_reader=pg_reader,
        lease=lease,
        threads=threads,
        metrics=metrics,
    )
