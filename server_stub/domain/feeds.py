"""One reader per run, fanned out to every SSE stream of that run.

A stream that read the database itself would cost a read per stream per change (and per
poll), through the shared thread pool, and other principals' lists would wait behind them.
So the first stream of a run starts a `RunFeed` whose single task reads the run's new events
once per wake-up and appends them to a buffer; every stream walks that buffer at its own
cursor and sleeps on the feed's `changed` event, so a keep-alive or an idle stream costs no
database work at all.

The feed lives while it has subscribers and until the run's terminal event is read; the
last subscriber to leave stops it. Everything here runs on the app's event loop (no locks).
Caps bound the streams one principal may hold and the streams of the whole process (each an
open socket, so a file descriptor: `server_stub.edge.limits`); past either, `StreamLimitReached`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable
from functools import partial
from typing import Any

from server_stub.domain.notifier import RunNotifier, wait_for

Reader = Callable[[str, int], tuple[list[dict[str, Any]], bool]]
"""`(run_id, after) -> (events after it, run is terminal)`: one blocking database read."""

Offload = Callable[[Callable[[], tuple[list[dict[str, Any]], bool]]], Any]


class StreamLimitReached(Exception):
    """The principal (`scope="principal"`) or the whole process (`scope="process"`) already
    holds the maximum number of concurrent event streams."""

    def __init__(self, limit: int, scope: str = "principal") -> None:
        super().__init__(f"at most {limit} concurrent event streams per {scope}")
        self.limit = limit
        self.scope = scope


class RunFeed:
    """The buffered events of one run and the single task that reads them."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.events: list[dict[str, Any]] = []
        self.terminal = False
        self.failed: BaseException | None = None
        self.subscribers = 0
        self.changed = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    def publish(self, items: list[dict[str, Any]], terminal: bool) -> None:
        """Append what the reader found and wake every stream."""
        self.events.extend(items)
        self.terminal = self.terminal or terminal
        changed, self.changed = self.changed, asyncio.Event()
        changed.set()


class RunFeeds:
    """The live feeds of one app, keyed by run id, and the per-principal stream count."""

    def __init__(
        self,
        notifier: RunNotifier,
        reader: Reader,
        offload: Offload,
        *,
        max_streams_per_principal: int,
        max_streams_per_process: int,
        poll_seconds: float,
    ) -> None:
        self._notifier = notifier
        self._reader = reader
        self._offload = offload
        self._feeds: dict[str, RunFeed] = {}
        self._streams: dict[tuple[str, str], int] = {}
        self.max_streams = max_streams_per_principal
        self.max_process_streams = max_streams_per_process
        self.total_streams = 0
        self.poll_seconds = poll_seconds
        self.reads = 0  # database reads made by feed readers (the bench reports it)

    def runs_followed(self) -> int:
        """How many runs have a live feed (a reader task) now."""
        return len(self._feeds)

    def open_streams(self, tenant: str, principal: str) -> int:
        """How many event streams the principal holds now."""
        return self._streams.get((tenant, principal), 0)

    def reserve(self, tenant: str, principal: str) -> None:
        """Count one more stream of the principal, or raise StreamLimitReached (the
        principal's cap is checked first: a principal at its own cap is told so)."""
        key = (tenant, principal)
        count = self._streams.get(key, 0)
        if count >= self.max_streams:
            raise StreamLimitReached(self.max_streams)
        if self.total_streams >= self.max_process_streams:
            raise StreamLimitReached(self.max_process_streams, "process")
        self._streams[key] = count + 1
        self.total_streams += 1

    def unreserve(self, tenant: str, principal: str) -> None:
        """Give back a stream reserved with `reserve`."""
        key = (tenant, principal)
        if key not in self._streams:
            return
        self.total_streams -= 1
        count = self._streams[key] - 1
        if count > 0:
            self._streams[key] = count
        else:
            self._streams.pop(key, None)

    async def follow(
        self, run_id: str, after: int, keepalive: float
    ) -> AsyncGenerator[dict[str, Any] | None]:
        """The run's events after `after`, live until its terminal event; `None` items are
        keep-alive ticks (at least every `keepalive` seconds without an event)."""
        feed = self._join(run_id)
        try:
            index = 0
            while True:
                changed = feed.changed
                events = feed.events
                while index < len(events):
                    item = events[index]
                    index += 1
                    if item["sequence"] > after:
                        yield item
                if feed.terminal:
                    return
                if feed.failed is not None:
                    raise feed.failed
                if not await wait_for(changed, keepalive):
                    yield None
        finally:
            self._leave(feed)

    def _join(self, run_id: str) -> RunFeed:
        feed = self._feeds.get(run_id)
        if feed is None:
            feed = RunFeed(run_id)
            self._feeds[run_id] = feed
            feed.task = asyncio.get_running_loop().create_task(
                self._read(feed), name=f"feed-{run_id}"
            )
        feed.subscribers += 1
        return feed

    def _leave(self, feed: RunFeed) -> None:
        feed.subscribers -= 1
        if feed.subscribers > 0:
            return
        if self._feeds.get(feed.run_id) is feed:
            del self._feeds[feed.run_id]
        if feed.task is not None and not feed.task.done():
            feed.task.cancel()

    async def _read(self, feed: RunFeed) -> None:
        """The feed's only reader: read once per wake-up (or poll), publish, repeat."""
        cursor = 0
        try:
            while True:
                wake = self._notifier.waiter(feed.run_id)
                self.reads += 1
                items, terminal = await self._offload(partial(self._reader, feed.run_id, cursor))
                if items:
                    cursor = items[-1]["sequence"]
                feed.publish(items, terminal)
                if terminal:
                    self._notifier.release(feed.run_id, wake)
                    break
                await wait_for(wake, self.poll_seconds)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the streams end; their clients reconnect with Last-Event-ID
            feed.failed = exc
            feed.publish([], False)
        finally:
            if self._feeds.get(feed.run_id) is feed and (feed.terminal or feed.failed):
                del self._feeds[feed.run_id]

    async def close(self) -> None:
        """Stop every reader (app shutdown)."""
        tasks = [f.task for f in self._feeds.values() if f.task is not None]
        self._feeds.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
