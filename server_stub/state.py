"""The shared resources of one running app, owned by its lifespan (never import-time globals)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from server_stub.auth import TokenTable
from server_stub.bus import FleetBus
from server_stub.config import ServerSettings
from server_stub.cursors import CursorCodec
from server_stub.db.engine import Database
from server_stub.feeds import RunFeeds
from server_stub.notifier import RunNotifier
from server_stub.objectstore import ObjectStore
from server_stub.ratelog import RepeatLog
from server_stub.scrub import Scrubber
from server_stub.watches import IndexWatches

if TYPE_CHECKING:
    from server_stub.agent import AgentManager

T = TypeVar("T")


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
    extra: dict[str, object] = field(default_factory=dict)

    async def run(self, fn: Callable[[], T]) -> T:
        """Run blocking database work off the event loop."""
        return await run_in_threadpool(fn)


def get_state(request: Request) -> AppState:
    """The app's state (set by the lifespan)."""
    state = request.app.state.converge
    assert isinstance(state, AppState)
    return state
