"""A simulated device of `converge qa`, and what the harness records about it.

Each device is what a real client is: its own profile folder, mirror and `SyncEngine`, with
the reconcile timer running. Several live in one process on one asyncio loop. The harness
watches a device in two ways: the engine's `IndexChanged` events (what was inserted,
updated, pruned, deleted, and when) and samples of the mirror, both turned into
`qa_checker.Observation`s; its HTTP traffic is counted by a wrapping transport.

A device's view is its mirror at a change sequence (decision 0209), as the window's
sidebar is: on an `IndexChanged` with a larger number than the view's, the device pulls
what changed since (`SyncEngine.changes_since`) and records each changed row as present and
each removed id as absent, in the mirror's order, whatever the order the events came in.
Pulls and samples read the mirror one at a time, each numbered before its read, so the
observations' order is the order of the mirror states they read. The events still say why
a row left (a pass's prune, the device's own delete) and what a pass cost.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from qa.checker import Observation, RowKey, Source
from qa.proxy import proxied_transport
from sync.engine import SyncEngine
from sync.events import EngineEvent, IndexChanged, TriggerReason
from sync.profile.profile import Profile
from sync.wire.models import SessionView

log = logging.getLogger(__name__)


@dataclass
class RequestStats:
    """HTTP traffic of some clients: requests sent, answers by status, transport failures."""

    requests: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    network_errors: int = 0
    routes: Counter[str] = field(default_factory=Counter)  # requests by `route_of`

    @property
    def server_errors(self) -> int:
        return sum(n for status, n in self.statuses.items() if status >= 500)

    @property
    def client_errors(self) -> int:
        return sum(n for status, n in self.statuses.items() if 400 <= status < 500)

    def to_json(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "by_status": {str(k): v for k, v in sorted(self.statuses.items())},
            "client_errors": self.client_errors,
            "server_errors": self.server_errors,
            "network_errors": self.network_errors,
            "by_route": dict(sorted(self.routes.items())),
        }


def route_of(request: httpx.Request) -> str:
    """Which kind of request this is, for the per-pass figures: `watch` (a held index
    request), `index` (a walk's first page), `index_page` (a page after a cursor),
    `point_read`, `events` (the content phase), `run` (start, cancel, read), `create`,
    `delete`, or `other`."""
    parts = request.url.path.strip("/").split("/")[1:]  # after the version
    method = request.method
    if parts == ["sessions"]:
        if method == "POST":
            return "create"
        if "prefer" in request.headers:
            return "watch"
        return "index_page" if "cursor" in request.url.params else "index"
    if len(parts) == 2 and parts[0] == "sessions":
        return "delete" if method == "DELETE" else "point_read"
    if len(parts) == 3 and parts[0] == "sessions" and parts[2] == "events":
        return "events"
    if "runs" in parts:
        return "run"
    return "other"


def plain_transport(url: str) -> httpx.AsyncHTTPTransport:
    """A transport for `url`. For plain http it skips loading the CA bundle, which costs
    noticeable event-loop time per client (the harness makes one per device, per
    reconnect and per truth walk); https keeps full verification."""
    return httpx.AsyncHTTPTransport(verify=url.startswith("https:"))


class CountingTransport(httpx.AsyncBaseTransport):
    """Counts every request and its outcome, then delegates to a normal transport."""

    def __init__(
        self,
        stats: RequestStats,
        inner: httpx.AsyncBaseTransport | None = None,
        wakes: list[float] | None = None,
    ):
        self.stats = stats
        self._inner = inner if inner is not None else httpx.AsyncHTTPTransport()
        self._wakes = wakes  # when a held watch's 200 arrived (`qa.latency.stages`)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.stats.requests += 1
        self.stats.routes[route_of(request)] += 1
        try:
            response = await self._inner.handle_async_request(request)
        except httpx.TransportError:
            self.stats.network_errors += 1
            raise
        self.stats.statuses[response.status_code] += 1
        if self._wakes is not None and response.status_code == 200 and "prefer" in request.headers:
            self._wakes.append(time.monotonic())
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


class Recorder:
    """The run's observation log, with one sequence shared by every device."""

    def __init__(self) -> None:
        self.observations: list[Observation] = []
        self._seq = itertools.count()
        # What the devices' passes reported (passes that changed nothing emit no event).
        self.passes = 0  # passes started, over every device and engine
        self.point_reads = 0  # mirror rows the walk missed, read one by one
        self.rescued = 0  # ... that answered 200: they moved during the walk, kept
        self.kept = 0  # ... whose point read was inconclusive, kept
        self.pulls = 0  # reads of what changed in a device's mirror since its view

    def next_seq(self) -> int:
        return next(self._seq)

    def observe(
        self,
        device: int,
        session_id: str,
        present: bool,
        source: Source,
        *,
        seq: int | None = None,
        at: float | None = None,
    ) -> None:
        self.observations.append(
            Observation(
                seq=self.next_seq() if seq is None else seq,
                at=time.monotonic() if at is None else at,
                device=device,
                session_id=session_id,
                present=present,
                source=source,
            )
        )


class Device:
    """One simulated client: profile folder, mirror, engine with its timer, a listener."""

    def __init__(
        self,
        index: int,
        folder: Path,
        *,
        url: str,
        token: str,
        interval: float,
        stats: RequestStats,
        recorder: Recorder,
        retry_attempts: int = 2,
        page_limit: int = 200,
        watch: bool = False,
        proxy_port: int | None = None,
    ) -> None:
        self.index = index
        self.proxy_port = proxy_port  # its fault proxy (`qa.proxy`), when the run has one
        self.profile = Profile.load(folder, server=url, token=token, environ={})
        self.url = url
        self.interval = interval
        self.stats = stats
        self.recorder = recorder
        self.retry_attempts = retry_attempts
        self.page_limit = page_limit
        self.watch = watch
        self._engine: SyncEngine | None = None
        self._unsubscribe: Any = None
        self.reopened = 0
        self._sampled: dict[str, bool] = {}
        # The view: the mirror's change sequence it shows (None: read whole next) and its
        # ids; kept across a reopen (the same mirror file).
        self._view_seq: int | None = None
        self._view: set[str] = set()
        self._heard = 0  # the largest IndexChanged.seq heard
        self._why: dict[str, Source] = {}  # removals an event explained, until pulled
        self._reading = asyncio.Lock()  # pulls and samples read one at a time
        self._puller: asyncio.Task[None] | None = None
        self.wakes: list[float] = []  # its watch's 200s, when their heads arrived

    @property
    def engine(self) -> SyncEngine:
        if self._engine is None:
            raise RuntimeError(f"device {self.index} is not open")
        return self._engine

    async def open(self) -> None:
        """Open the engine on the profile's mirror, start the timer, trigger CONNECT, and
        keep an index watch open when the device watches."""
        engine = await SyncEngine.open(
            self.profile,
            transport=CountingTransport(self.stats, self._transport(), self.wakes),
            timer_interval=self.interval,
            retry_attempts=self.retry_attempts,
            page_limit=self.page_limit,
        )
        self._engine = engine
        self._unsubscribe = engine.subscribe(self._on_event)
        engine.start_timer(self.interval)
        engine.trigger(TriggerReason.CONNECT)
        if self.watch:
            engine.start_watch()

    def _transport(self) -> httpx.AsyncBaseTransport:
        if self.proxy_port is None:
            return plain_transport(self.url)
        return proxied_transport(self.url, self.proxy_port)

    async def close(self) -> None:
        engine, self._engine = self._engine, None
        if engine is None:
            return
        self.recorder.passes += engine.passes_started
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        puller, self._puller = self._puller, None
        if puller is not None:
            puller.cancel()
            await asyncio.gather(puller, return_exceptions=True)
        await engine.close()

    async def reopen(self) -> None:
        """A reconnect: the engine goes away and comes back on the same mirror."""
        await self.close()
        await self.open()
        self.reopened += 1

    def _on_event(self, event: EngineEvent) -> None:
        if not isinstance(event, IndexChanged):
            return
        report = event.report
        if report is not None:
            point_reads = max(0, report.requests - report.pages)
            self.recorder.point_reads += point_reads
            self.recorder.kept += len(report.kept)
            self.recorder.rescued += max(0, point_reads - len(report.pruned) - len(report.kept))
        # A pass reports its prunes; the delete service and single-row refreshes do not.
        removal = Source.PRUNED if event.report is not None else Source.DELETED
        for sid in event.removed:
            self._why[sid] = removal
        self._heard = max(self._heard, event.seq)
        if self._puller is None and (self._view_seq is None or event.seq > self._view_seq):
            self._puller = asyncio.ensure_future(self._pull())

    async def _pull(self) -> None:
        """Bring the view up to the largest number heard (events meanwhile: once more)."""
        try:
            while self._view_seq is None or self._heard > self._view_seq:
                async with self._reading:
                    seq, at = self.recorder.next_seq(), time.monotonic()
                    changes = await self.engine.changes_since(self._view_seq)
                self.recorder.pulls += 1
                self._record(changes.rows, changes.removed, changes.whole, seq, at)
                self._view_seq = changes.seq
        except Exception:
            log.exception("device %d: reading its mirror's changes failed", self.index)
        finally:
            self._puller = None

    def _record(
        self, rows: list[SessionView], removed: list[str], whole: bool, seq: int, at: float
    ) -> None:
        ids = {row.id for row in rows}
        if whole:
            removed = sorted(self._view - ids)
        for sid in removed:
            if sid in self._view and sid not in ids:
                self._view.discard(sid)
                source = self._why.pop(sid, Source.REMOVED)
                self.recorder.observe(self.index, sid, False, source, seq=seq, at=at)
        for row in rows:
            if whole and row.id in self._view:
                continue  # a whole read says only what changed against the view
            source = Source.UPDATED if row.id in self._view else Source.INSERTED
            self._view.add(row.id)
            self.recorder.observe(self.index, row.id, True, source, seq=seq, at=at)

    async def has_row(self, session_id: str) -> bool:
        return await self.engine.row(session_id) is not None

    async def sample(self, watched: set[str]) -> list[RowKey]:
        """Read the mirror; record presence or absence of each `watched` id (the deleted
        ones: the only ids whose later presence can be a violation)."""
        async with self._reading:
            seq = self.recorder.next_seq()
            at = time.monotonic()
            rows = await self.engine.rows()
        ids = {row.id for row in rows}
        for sid in sorted(watched):
            present = sid in ids
            if self._sampled.get(sid) is present:
                continue  # only changes are recorded, so long runs stay small
            self._sampled[sid] = present
            self.recorder.observe(self.index, sid, present, Source.SAMPLE, seq=seq, at=at)
        return [RowKey.of(row) for row in rows]
