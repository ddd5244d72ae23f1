"""The process's Prometheus metrics (`GET /metrics`, docs/server.md "Metrics and logs").

Each app has its own `CollectorRegistry` (never prometheus-client's global one: a test
process runs many apps, and a fleet runs many processes), and every sample carries the
label `process`, the app's fleet id (`Database.instance_id`, the lease owner of its runs),
so the series of two processes behind one balancer never merge.

Two sources. What only this process knows (held watches, open SSE streams, request
latency, database errors answered) is kept in memory and costs the request path one
histogram observation. What the database knows for the whole fleet (the deletion outbox,
runs by status) is read at scrape time, cheaply: every count is an index range cut at
`COUNT_CAP` rows (`SELECT count(*) FROM (SELECT 1 … LIMIT cap)`), the outbox's oldest entry
is one primary-key seek, and one read serves every scrape within `DB_READ_SECONDS`, so a
scraper that polls hard costs the database at most one bounded read per second.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from prometheus_client import (
    CollectorRegistry,
    Counter,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy import func, literal, select
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from server_stub.db import outage
from server_stub.db.models import DeletionOutboxRow, RunRow
from server_stub.domain import timestamps

if TYPE_CHECKING:
    from server_stub.state import AppState

log = logging.getLogger(__name__)

#: Every database count stops at this many rows: the gauge then reads `COUNT_CAP`
#: (`converge_count_cap` says so), and a scrape never walks more of an index than this.
COUNT_CAP = 10_000
#: One database read serves every scrape within this many seconds.
DB_READ_SECONDS = 1.0
#: The statuses of `converge_runs` (the contract's RunView statuses).
RUN_STATUSES = ("queued", "running", "waiting_for_approval", "completed", "failed", "cancelled")
#: Request latency buckets (seconds): from fast loopback requests to held watches (up to 60 s).
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 30, 60)
#: The methods a latency series may name; anything else is counted as "other".
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


@dataclass
class _Series:
    """One latency histogram: a count per bucket (the last is +Inf), and the sum."""

    counts: list[int] = field(default_factory=lambda: [0] * (len(LATENCY_BUCKETS) + 1))
    total: float = 0.0


@dataclass(frozen=True)
class DatabaseCounts:
    """What one bounded read of the database found."""

    outbox_pending: int
    outbox_oldest_seconds: float
    runs: dict[str, int]


def _capped_count(s: Session, statement: object) -> int:
    inner = statement.limit(COUNT_CAP).subquery()  # type: ignore[attr-defined]
    return int(s.execute(select(func.count()).select_from(inner)).scalar_one())


def read_counts(s: Session) -> DatabaseCounts:
    """The outbox and run counts, each an index range of at most `COUNT_CAP` rows."""
    pending = _capped_count(s, select(literal(1)).select_from(DeletionOutboxRow))
    oldest = s.execute(
        select(DeletionOutboxRow.enqueued_at).order_by(DeletionOutboxRow.id).limit(1)
    ).scalar_one_or_none()
    runs = {
        status: _capped_count(s, select(literal(1)).where(RunRow.status == status))
        for status in RUN_STATUSES
    }
    age = 0.0 if oldest is None else timestamps.age_seconds(oldest)
    return DatabaseCounts(outbox_pending=pending, outbox_oldest_seconds=age, runs=runs)


def _read_counts(state: AppState) -> DatabaseCounts:
    """On a request thread: a bounded read is still too long to hold the loop for."""
    with state.db.read() as s:
        return read_counts(s)


class Metrics:
    """One app's registry: made by `create_app`, bound to the app's state by its lifespan
    (`bind`); until then a scrape reports nothing (no process label, no state to read)."""

    def __init__(self) -> None:
        disable_created_metrics()  # type: ignore[no-untyped-call]  # no `_created` series
        self.registry = CollectorRegistry(auto_describe=False)
        self.process = ""
        self.state: AppState | None = None
        self.latency: dict[tuple[str, str], _Series] = {}
        self.database_errors = Counter(
            "converge_database_errors",
            "Database errors that reached a request or a scrape, by kind (outage kinds "
            "answer 503; 'other' answers 500).",
            ["process", "kind"],
            registry=self.registry,
        )
        self._counts: DatabaseCounts | None = None
        self._read_at = -DB_READ_SECONDS
        self._lock: asyncio.Lock | None = None
        self.registry.register(_LiveCollector(self))

    def bind(self, state: AppState) -> None:
        """Start reporting for `state`'s process (its fleet id becomes the `process` label)."""
        self.state = state
        self.process = state.db.instance_id

    def observe(self, route: str, method: str, seconds: float) -> None:
        """Record one request's duration. On the loop only (the middleware's), so a plain
        list per series needs no lock, and this costs a fraction of prometheus-client's
        `Histogram.observe` (a lock per bucket)."""
        if method not in METHODS:
            method = "other"  # a client's method never makes a series of its own
        series = self.latency.get((route, method))
        if series is None:
            series = self.latency[(route, method)] = _Series()
        series.counts[bisect_left(LATENCY_BUCKETS, seconds)] += 1
        series.total += seconds

    def database_error(self, error: BaseException) -> None:
        """Count a database error by kind (`outage.kind`)."""
        if self.process:
            self.database_errors.labels(self.process, outage.kind(error)).inc()

    async def database_counts(self) -> DatabaseCounts | None:
        """The database's counts, read at most once per `DB_READ_SECONDS` however many
        scrapes (or outbox checks) ask; None while the database fails (counted)."""
        state = self.state
        if state is None:
            return None
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if time.monotonic() - self._read_at < DB_READ_SECONDS:
                return self._counts
            try:
                self._counts = await state.run(partial(_read_counts, state))
            except DBAPIError as exc:
                self.database_error(exc)
                self._counts = None
            self._read_at = time.monotonic()
            return self._counts

    async def exposition(self) -> bytes:
        """The text format of every metric, the database's counts read (bounded) first."""
        await self.database_counts()
        return generate_latest(self.registry)


class _LiveCollector(Collector):
    """Gauges read when scraped: the process's held connections, the database's counts
    (as of the last `database_counts` read)."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterable[Metric]:
        return list(self._families())

    def _families(self) -> Iterator[Metric]:
        m = self._metrics
        state = m.state
        if state is None:
            return
        labels = ["process"]
        latency = HistogramMetricFamily(
            "converge_request_duration_seconds",
            "Time from a request's arrival to the end of its response, by route template "
            "(event streams are not observed: see converge_sse_streams).",
            labels=["process", "route", "method"],
        )
        for (route, method), series in list(m.latency.items()):
            cumulative, buckets = 0, []
            for bound, count in zip((*LATENCY_BUCKETS, math.inf), series.counts, strict=True):
                cumulative += count
                buckets.append(("+Inf" if bound == math.inf else str(float(bound)), cumulative))
            latency.add_metric([m.process, route, method], buckets, series.total)
        yield latency
        watches = GaugeMetricFamily(
            "converge_held_watches", "Index watches (Prefer: wait) held now.", labels=labels
        )
        watches.add_metric([m.process], state.watches.held)
        yield watches
        streams = GaugeMetricFamily(
            "converge_sse_streams", "Run event streams open now.", labels=labels
        )
        streams.add_metric([m.process], state.feeds.total_streams)
        yield streams
        cap = GaugeMetricFamily(
            "converge_count_cap",
            "Database counts below stop at this value (a scrape reads no more rows).",
            labels=labels,
        )
        cap.add_metric([m.process], COUNT_CAP)
        yield cap
        counts = m._counts
        up = GaugeMetricFamily(
            "converge_database_up",
            "1 when the last read of the database's counts succeeded.",
            labels=labels,
        )
        up.add_metric([m.process], 0 if counts is None else 1)
        yield up
        if counts is None:
            return
        pending = GaugeMetricFamily(
            "converge_outbox_pending",
            "Byte deletes waiting in the deletion outbox (whole fleet; capped).",
            labels=labels,
        )
        pending.add_metric([m.process], counts.outbox_pending)
        yield pending
        oldest = GaugeMetricFamily(
            "converge_outbox_oldest_seconds",
            "Age of the oldest deletion outbox entry (0 when empty).",
            labels=labels,
        )
        oldest.add_metric([m.process], counts.outbox_oldest_seconds)
        yield oldest
        runs = GaugeMetricFamily(
            "converge_runs", "Runs by status (whole fleet; capped).", labels=["process", "status"]
        )
        for status, count in counts.runs.items():
            runs.add_metric([m.process, status], count)
        yield runs


async def watch_outbox(
    metrics: Metrics, threshold: float, interval: float, warn: Callable[..., None]
) -> None:
    """Every `interval` seconds, warn (once) when the outbox's oldest entry is older than
    `threshold` seconds: byte deletes that keep failing are seen without a scraper. A
    background task of the app; `warn` is a logger's `warning`."""
    while True:
        await asyncio.sleep(interval)
        counts = await metrics.database_counts()
        if counts is not None and counts.outbox_oldest_seconds > threshold:
            warn(
                "deletion outbox: %d byte deletes pending, the oldest for %.0f s (over %.0f s):"
                " the object store keeps failing them (GET /_stub/outbox, the maintenance log)",
                counts.outbox_pending,
                counts.outbox_oldest_seconds,
                threshold,
            )
