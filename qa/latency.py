"""Convergence latency of `converge qa`: how long a change made on one device takes to reach
every other open device's mirror (CONTRACT §9.1: "within a second" with watching devices).

A pure function over what the harness recorded, like `qa_checker`: the changes (a create,
timed from just before its request was sent, so the figure is an upper bound; a delete,
timed from its 204) and the devices' observations. For each change, the latency is the time
until the last other device that had to change did: for a delete, every device whose mirror
held the row when the 204 came; for a create, every device that ever showed the row. A
device may change *before* the 204 reaches the deleting device (its watch wakes at the
commit): that counts as 0. Whether a device held a deleted row is judged when the delete
was sent.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from qa.checker import Observation


@dataclass(frozen=True)
class Change:
    """A change one device made: `present` True for a create (the row must appear
    elsewhere), False for a delete (it must disappear); `at` is `time.monotonic()`."""

    session_id: str
    device: int
    at: float
    present: bool
    sent_at: float | None = None  # when the request left (default `at`)

    @property
    def kind(self) -> str:
        """ "create" or "delete": the two follow different paths on a watching device (a
        delete is a row missing from the walk, a create a row on its first page), so the
        report gives each its own figures."""
        return "create" if self.present else "delete"

    @property
    def since(self) -> float:
        return self.at if self.sent_at is None else min(self.sent_at, self.at)


@dataclass(frozen=True)
class Latencies:
    """Per change, seconds until every other device that had to follow did."""

    seconds: list[float]
    missed: int  # (change, device) pairs that never followed within the run
    #: Per change measured: (the slowest device, the change's `at`, when that device followed).
    slowest: list[tuple[int, float, float]] = field(default_factory=list)
    #: Per change measured, its `Change.kind` (empty when not recorded).
    kinds: list[str] = field(default_factory=list)

    def summary_ms(self, kind: str | None = None) -> dict[str, float | None]:
        """`{"p50", "p95", "p99", "max"}` in milliseconds (nearest rank), None without
        samples; over the changes of one `kind` when given."""
        seconds = self.seconds if kind is None else self.of_kind(kind)
        if not seconds:
            return {"p50": None, "p95": None, "p99": None, "max": None}
        ordered = sorted(seconds)
        return {
            "p50": round(_rank(ordered, 0.50) * 1000, 1),
            "p95": round(_rank(ordered, 0.95) * 1000, 1),
            "p99": round(_rank(ordered, 0.99) * 1000, 1),
            "max": round(ordered[-1] * 1000, 1),
        }

    def of_kind(self, kind: str) -> list[float]:
        if not self.kinds:
            return []
        return [s for s, k in zip(self.seconds, self.kinds, strict=True) if k == kind]

    def by_kind_ms(self) -> dict[str, dict[str, float | None]]:
        """`summary_ms` per kind of change, each with its sample count `n`."""
        return {
            kind: {**self.summary_ms(kind), "n": len(self.of_kind(kind))}
            for kind in sorted(set(self.kinds))
        }


def _rank(ordered: Sequence[float], q: float) -> float:
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def convergence_latencies(
    changes: Iterable[Change], observations: Iterable[Observation], devices: Iterable[int]
) -> Latencies:
    """The latency of each change over the other `devices` (see the module docstring)."""
    by_key: dict[tuple[int, str], list[Observation]] = defaultdict(list)
    for o in observations:
        by_key[(o.device, o.session_id)].append(o)
    for seen in by_key.values():
        seen.sort(key=lambda o: o.seq)
    device_list = list(devices)
    seconds: list[float] = []
    slowest: list[tuple[int, float, float]] = []
    kinds: list[str] = []
    missed = 0
    for change in changes:
        worst: float | None = None
        worst_at: tuple[int, float] = (-1, 0.0)
        for device in device_list:
            if device == change.device:
                continue
            seen = by_key.get((device, change.session_id), [])
            if not change.present:
                before = [o for o in seen if o.at <= change.since]
                if not before or not before[-1].present:
                    continue  # it did not hold the row when the delete left: nothing to do
            elif not any(o.present for o in seen):
                continue  # it never showed the row (deleted before it looked)
            followed = next(
                (o.at for o in seen if o.present is change.present and o.at >= change.since),
                None,
            )
            if followed is None:
                missed += 1
                continue
            latency = followed - change.at
            if worst is None or latency > worst:
                worst, worst_at = latency, (device, followed)
        if worst is not None:
            seconds.append(max(0.0, worst))
            slowest.append((worst_at[0], change.at, worst_at[1]))
            kinds.append(change.kind)
    return Latencies(seconds, missed, slowest, kinds)


def stages(
    latencies: Latencies, wakes: dict[int, list[float]], kind: str | None = None
) -> dict[str, dict[str, float]]:
    """Where the slowest device's time went, per change: from the change until that device's
    watch answered 200 (the server's commit and wake-up, the answer's way back, the
    harness's loop getting to it) and from there until its mirror followed (the pass: its
    pages, point reads and the mirror's write). p50/p95/max in ms over the changes whose
    slowest device had a watch answer in between; `n` says how many. Only the changes of
    one `kind` when given."""
    first: list[float] = []
    rest: list[float] = []
    kinds: list[str | None] = [*latencies.kinds] or [None] * len(latencies.slowest)
    for (device, at, followed), of in zip(latencies.slowest, kinds, strict=True):
        if kind is not None and of != kind:
            continue
        woke = next((w for w in sorted(wakes.get(device, ())) if at <= w <= followed), None)
        if woke is None:
            continue
        first.append(woke - at)
        rest.append(followed - woke)
    out: dict[str, dict[str, float]] = {}
    for name, values in (("change_to_watch_answer", first), ("watch_answer_to_mirror", rest)):
        ordered = sorted(values)
        if ordered:
            out[name] = {
                "p50": round(_rank(ordered, 0.50) * 1000, 1),
                "p95": round(_rank(ordered, 0.95) * 1000, 1),
                "max": round(ordered[-1] * 1000, 1),
                "n": len(ordered),
            }
    return out
