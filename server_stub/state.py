"""The shared resources of one running app, owned by its lifespan (never import-time globals)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

import anyio.to_thread
from anyio import CapacityLimiter
from starlette.requests import Request

from server_stub.config import ServerSettings
from server_stub.db.engine import Database, LockedNow
from server_stub.db.pgloop import PgLoopReader
from server_stub.domain.bus import FleetBus
from server_stub.domain.cursors import CursorCodec
from server_stub.domain.feeds import RunFeeds
from server_stub.domain.indexlease import IndexLease
from server_stub.domain.indexversions import IndexVersions
from server_stub.domain.legacytitles import DerivedTitles
from server_stub.domain.notifier import RunNotifier
from server_stub.domain.scrub import Scrubber
from server_stub.domain.watches import IndexWatches
from server_stub.edge.auth import TokenTable
from server_stub.observe.metrics import Metrics
from server_stub.observe.ratelog import RepeatLog
from server_stub.storage.objectstore import ObjectStore

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from server_stub.domain.agent import AgentManager

T = TypeVar("T")

#: Worker threads that run requests' database work at once. Below the pool's size
#: (`server_stub.db.engine.POOL_SIZE`), so that requests never take a connection the pool
#: would close on return (above its size it opens and closes one per request under many
#: clients); on a small machine more threads only queue for the CPU.
REQUEST_THREADS = 16


class RequestThreads:
    """The worker threads of blocking database work done for clients: requests
    (`AppState.run`) and run feeds' polls share them, so that together they never check
    out more connections than the pool keeps."""

    def __init__(self, size: int = REQUEST_THREADS) -> None:
        self._size = size
        self._limiter: CapacityLimiter | None = None

    async def run(self, fn: Callable[[], T]) -> T:
        """Run `fn` on a worker thread, at most `size` at once (on the loop only)."""
        if self._limiter is None:  # made on the loop, where anyio knows its backend
            self._limiter = CapacityLimiter(self._size)
        return await anyio.to_thread.run_sync(fn, limiter=self._limiter)


@dataclass
class AppState:
    """Everything a route needs."""

    settings: ServerSettings
    db: Database
    tokens: TokenTable
    cursors: CursorCodec
    store: ObjectStore
    notifier: RunNotifier
    feeds: RunFeeds
    bus: FleetBus
    epoch: str
    agents: AgentManager
    loop: asyncio.AbstractEventLoop
    scrubber: Scrubber
    watches: IndexWatches
    #: Warnings that repeat (cap refusals, accept errors): once per interval.
    repeat_log: RepeatLog
    #: Principals' index versions remembered by this process (`indexversions`: always on
    #: SQLite, on PostgreSQL while `lease` is held).
    versions: IndexVersions
    #: PostgreSQL: the index's reads on the loop (`server_stub.db.pgloop`); None on SQLite.
    pg_reader: PgLoopReader | None
    #: PostgreSQL: this process's side of the index-cache lease (`indexlease`); else None.
    lease: IndexLease | None = None
    #: The request threads, shared with `feeds` (which was given `threads.run`).
    threads: RequestThreads = field(default_factory=RequestThreads)
    #: Legacy sessions' derived titles remembered by this process (`legacytitles`).
    titles: DerivedTitles = field(default_factory=DerivedTitles)
    #: The app's metrics (`server_stub.observe.metrics`), bound to this state by the lifespan.
    metrics: Metrics = field(default_factory=Metrics)
    extra: dict[str, object] = field(default_factory=dict)

    async def run(self, fn: Callable[[], T]) -> T:
        """Run blocking database work off the event loop, on the request threads."""
        return await self.threads.run(fn)

    async def read(self, fn: Callable[[Session], T]) -> T:
        """`fn` in a read transaction: on SQLite on the loop itself (`Database.read_now`: a
        small read costs less than the hop to a thread), unless the database is locked at
        that instant; then, and always on PostgreSQL (whose round trips must never hold the
        loop), on a worker thread. `fn` only reads: running it twice is harmless."""
        if self.db.is_sqlite:
            try:
                with self.db.read_now() as s:
                    return fn(s)
            except LockedNow:
                pass

        def in_thread() -> T:
            with self.db.read() as s:
                return fn(s)

        return await self.run(in_thread)


def get_state(request: Request) -> AppState:
    """The app's state (set by the lifespan)."""
    state = request.app.state.converge
    assert isinstance(state, AppState)
    return state
