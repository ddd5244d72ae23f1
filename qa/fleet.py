"""The devices of one `converge qa` run, in this process (`LocalFleet`).

The harness never holds a `Device` itself: it asks a fleet, by device index, to start a run,
delete, reconcile, trigger, reconnect or sample, and at the end collects what the devices
observed. `LocalFleet` runs its devices on the current event loop; `qa.workers.WorkerFleet`
spreads them over worker processes (each a `LocalFleet` behind a pipe, `qa.worker`) with the
same methods and results, so the workload, the schedule and the checks are the same code
either way (decision 0214).

Every result carries the times it was taken at (`time.monotonic()` in the process that ran
the device), so a delete's `sent_at`/`done_at` and a create's `sent_at` are measured next to
the request, not around a pipe.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from qa.checker import Observation, RowKey, Source
from qa.device import Device, Recorder, RequestStats
from sync.delete.outcome import DeleteStatus
from sync.errors import NotFound, RunInProgress, SyncError
from sync.events import TriggerReason

log = logging.getLogger(__name__)

LAG_PERIOD = 0.05  # the loop-lag probe's sleep


@dataclass(frozen=True)
class DeviceSpec:
    """What opens one device, in any process."""

    index: int
    folder: str
    url: str
    token: str
    interval: float
    page_limit: int
    watch: bool
    proxy_port: int | None = None


class SendStatus(Enum):
    OK = "ok"
    BUSY = "run_busy"  # 409: a run is already active
    GONE = "run_session_gone"  # 404
    FAILED = "failed"  # any other SyncError (`error` names it)


@dataclass(frozen=True)
class Sent:
    status: SendStatus
    session_id: str | None
    sent_at: float  # just before the first request left
    error: str = ""  # the SyncError's class name, for FAILED


@dataclass(frozen=True)
class Deleted:
    """A server-first delete as the harness records it (`qa.checker.DeleteAttempt`)."""

    status: DeleteStatus
    removed: bool
    row_before: bool
    row_after: bool
    sent_at: float
    done_at: float


@dataclass
class Totals:
    """What the devices did over the run, gathered when they close."""

    counters: Counter[str] = field(default_factory=Counter)  # `Recorder`'s pass counters
    stats: RequestStats = field(default_factory=RequestStats)
    wakes: dict[int, list[float]] = field(default_factory=dict)
    loop_lag: list[float] = field(default_factory=list)  # the devices' loops (seconds late)

    def add(self, other: Totals) -> None:
        self.counters.update(other.counters)
        self.stats.requests += other.stats.requests
        self.stats.statuses.update(other.stats.statuses)
        self.stats.network_errors += other.stats.network_errors
        self.stats.routes.update(other.stats.routes)
        self.wakes.update(other.wakes)
        self.loop_lag.extend(other.loop_lag)

    def to_json(self) -> dict[str, Any]:
        return {
            "counters": dict(self.counters),
            "requests": self.stats.requests,
            "statuses": {str(k): v for k, v in self.stats.statuses.items()},
            "network_errors": self.stats.network_errors,
            "routes": dict(self.stats.routes),
            "wakes": {str(k): v for k, v in self.wakes.items()},
            "loop_lag": self.loop_lag,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], shift: float = 0.0) -> Totals:
        stats = RequestStats(
            requests=int(data["requests"]),
            statuses=Counter({int(k): int(v) for k, v in data["statuses"].items()}),
            network_errors=int(data["network_errors"]),
            routes=Counter({str(k): int(v) for k, v in data["routes"].items()}),
        )
        return cls(
            counters=Counter({str(k): int(v) for k, v in data["counters"].items()}),
            stats=stats,
            wakes={int(k): [float(t) - shift for t in v] for k, v in data["wakes"].items()},
            loop_lag=[float(x) for x in data["loop_lag"]],
        )


def observation_to_json(o: Observation) -> list[Any]:
    return [o.seq, o.at, o.device, o.session_id, o.present, o.source.value]


def observation_from_json(item: Sequence[Any], shift: float = 0.0) -> Observation:
    seq, at, device, sid, present, source = item
    return Observation(
        int(seq), float(at) - shift, int(device), str(sid), bool(present), Source(source)
    )


def rows_to_json(rows: Iterable[RowKey]) -> list[list[Any]]:
    return [list(astuple(row)) for row in rows]


def rows_from_json(items: Iterable[Sequence[Any]]) -> list[RowKey]:
    return [RowKey(*item) for item in items]


def merge_observations(parts: Iterable[Iterable[Observation]]) -> list[Observation]:
    """One run-wide sequence from several processes' observations: ordered by time (one
    clock, see `qa.workers`), a process's own order kept among equal times, renumbered."""
    tagged = [
        (o.at, part, o.seq, o) for part, observations in enumerate(parts) for o in observations
    ]
    tagged.sort(key=lambda t: (t[0], t[1], t[2]))
    return [
        Observation(seq, o.at, o.device, o.session_id, o.present, o.source)
        for seq, (_at, _part, _old, o) in enumerate(tagged)
    ]


class LocalFleet:
    """Devices on this process's event loop."""

    def __init__(self) -> None:
        self.recorder = Recorder()
        self.stats = RequestStats()
        self.devices: dict[int, Device] = {}
        self.loop_lag: list[float] = []
        self._lag: asyncio.Task[None] | None = None

    async def open(self, specs: Sequence[DeviceSpec]) -> None:
        if self._lag is None:
            self._lag = asyncio.get_running_loop().create_task(self._measure_lag())
        for spec in specs:
            device = Device(
                spec.index,
                Path(spec.folder),
                url=spec.url,
                token=spec.token,
                interval=spec.interval,
                stats=self.stats,
                recorder=self.recorder,
                page_limit=spec.page_limit,
                watch=spec.watch,
                proxy_port=spec.proxy_port,
            )
            await device.open()
            self.devices[spec.index] = device

    async def _measure_lag(self) -> None:
        while True:
            before = time.monotonic()
            await asyncio.sleep(LAG_PERIOD)
            self.loop_lag.append(max(0.0, time.monotonic() - before - LAG_PERIOD))

    async def send(self, index: int, session_id: str | None, text: str) -> Sent:
        """Start a run (in a new session when `session_id` is None)."""
        sent = time.monotonic()
        try:
            view, _run = await self.devices[index].engine.send_message(session_id, text)
        except RunInProgress:
            return Sent(SendStatus.BUSY, None, sent)
        except NotFound:
            return Sent(SendStatus.GONE, None, sent)
        except SyncError as exc:
            return Sent(SendStatus.FAILED, None, sent, type(exc).__name__)
        return Sent(SendStatus.OK, view.id, sent)

    async def delete(self, index: int, session_id: str, *, stop_run: bool = False) -> Deleted:
        device = self.devices[index]
        row_before = await device.has_row(session_id)
        sent = time.monotonic()
        if stop_run:
            outcome = await device.engine.stop_run_and_delete(session_id, timeout=15.0)
        else:
            outcome = await device.engine.delete(session_id)
        done = time.monotonic()
        row_after = await device.has_row(session_id)
        return Deleted(outcome.status, outcome.removed, row_before, row_after, sent, done)

    async def reconcile(self, index: int) -> None:
        await self.devices[index].engine.reconcile(TriggerReason.MANUAL)

    async def trigger(self, index: int) -> None:
        self.devices[index].engine.trigger(TriggerReason.FOREGROUND)

    async def reopen(self, index: int) -> None:
        await self.devices[index].reopen()

    async def sample(self, watched: set[str]) -> dict[int, list[RowKey]]:
        """Every device's mirror, by device index (and the `watched` ids' presence recorded)."""
        indices = sorted(self.devices)
        rows = await asyncio.gather(*(self.devices[i].sample(watched) for i in indices))
        return dict(zip(indices, rows, strict=True))

    async def stop_timers(self) -> None:
        for device in self.devices.values():
            device.engine.stop_timer()

    async def observations(self) -> list[Observation]:
        return list(self.recorder.observations)

    async def close(self) -> Totals:
        """Close every device (its pass count goes into the recorder) and give the totals."""
        for device in self.devices.values():
            try:
                await device.close()
            except Exception:
                log.exception("closing device %d failed", device.index)
        if self._lag is not None:
            self._lag.cancel()
            self._lag = None
        r = self.recorder
        by_source = Counter(o.source.value for o in r.observations)
        counters = Counter(
            {
                "passes": r.passes,
                "inserted": by_source["inserted"],
                "updated": by_source["updated"],
                "pruned": by_source["pruned"],
                "removed_by_delete": by_source["deleted"],
                "point_reads": r.point_reads,
                "rescued_by_point_read": r.rescued,
                "kept_inconclusive": r.kept,
                "mirror_pulls": r.pulls,
            }
        )
        wakes = {i: list(d.wakes) for i, d in self.devices.items()}
        return Totals(counters, self.stats, wakes, list(self.loop_lag))

    def __len__(self) -> int:
        return len(self.devices)


ENGINE_COUNTERS = (
    "passes",
    "inserted",
    "updated",
    "pruned",
    "removed_by_delete",
    "point_reads",
    "rescued_by_point_read",
    "kept_inconclusive",
    "mirror_pulls",
)
