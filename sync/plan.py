"""The pure reconcile planner (CONTRACT §7, ADR-0050 §8), testable without a network.

Two steps, both pure functions:

1. `plan_walk(walk, mirror, complete)`: what the walk saw is upserted (only rows that are new
   or differ); a mirror row absent from a COMPLETE walk becomes a point-read candidate. An
   interrupted walk yields no point reads, hence no prunes.
2. `plan_prunes(results)`: after `GET /v1/sessions/{id}` for each candidate, prune exactly the
   ones that answered 404; refresh the ones that answered 200; keep every other (401, 403,
   5xx, network error). The point read is what saves a session that moved between keyset
   pages during the walk from being mistaken for a deletion.

`plan_walk_sliced` is the same planner for the event loop: with 100,000 sessions the plan is
tens of milliseconds of Python, which on the UI thread would stall the window (the issue's
limit is 50 ms). It runs the very same steps (`_plan_steps`) and yields to the loop between
slices of `PLAN_SLICE` items, so its result is `plan_walk`'s by construction.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum

from sync.errors import SyncError
from sync.mirror import SessionRow
from sync.models import SessionView


@dataclass(frozen=True)
class WalkPlan:
    inserts: list[SessionView] = field(default_factory=list)
    updates: list[SessionView] = field(default_factory=list)
    point_reads: list[str] = field(default_factory=list)
    unchanged: int = 0

    @property
    def upserts(self) -> list[SessionView]:
        return [*self.inserts, *self.updates]


#: Items planned between two yields to the event loop (about 1–2 ms of work on a slow core).
PLAN_SLICE = 5000


def dedupe_walk(walk: Iterable[SessionView]) -> dict[str, SessionView]:
    """One view per id; if a (misbehaving) walk repeats an id, the latest updated_at wins."""
    seen: dict[str, SessionView] = {}
    for view in walk:
        _keep_latest(seen, view)
    return seen


def _keep_latest(seen: dict[str, SessionView], view: SessionView) -> None:
    prior = seen.get(view.id)
    if prior is None or view.updated_at >= prior.updated_at:
        seen[view.id] = view


def differs(row: SessionRow, view: SessionView) -> bool:
    """`row != view`, field by field, the one that usually differs first (the planner
    compares every walked session)."""
    return (
        row.updated_at != view.updated_at
        or row.title != view.title
        or row.id != view.id
        or row.created_at != view.created_at
        or row.active_run_id != view.active_run_id
        or row.last_run_id != view.last_run_id
    )


def _plan_steps(
    walk: Iterable[SessionView],
    mirror: Mapping[str, SessionRow],
    complete: bool,
    slice_size: int,
) -> Generator[None, None, WalkPlan]:
    """The planner, yielding after every `slice_size` items of each of its three loops."""
    seen: dict[str, SessionView] = {}
    count = 0
    for view in walk:
        prior = seen.get(view.id)  # dedupe_walk's rule, inline: this loop is the hot one
        if prior is None or view.updated_at >= prior.updated_at:
            seen[view.id] = view
        count += 1
        if count == slice_size:
            count = 0
            yield
    inserts: list[SessionView] = []
    updates: list[SessionView] = []
    unchanged = 0
    get = mirror.get
    for view in seen.values():
        row = get(view.id)
        if row is None:
            inserts.append(view)
        elif differs(row, view):
            updates.append(view)
        else:
            unchanged += 1
        count += 1
        if count == slice_size:
            count = 0
            yield
    point_reads: list[str] = []
    if complete:
        for sid in mirror:
            if sid not in seen:
                point_reads.append(sid)
            count += 1
            if count == slice_size:
                count = 0
                yield
        point_reads.sort()
    return WalkPlan(inserts=inserts, updates=updates, point_reads=point_reads, unchanged=unchanged)


def plan_walk(
    walk: Iterable[SessionView], mirror: Mapping[str, SessionRow], *, complete: bool
) -> WalkPlan:
    """Upserts from what the walk saw; point reads only when the walk covered everything."""
    steps = _plan_steps(walk, mirror, complete, PLAN_SLICE)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            plan: WalkPlan = done.value
            return plan


async def plan_walk_sliced(
    walk: Iterable[SessionView],
    mirror: Mapping[str, SessionRow],
    *,
    complete: bool,
    slice_size: int = PLAN_SLICE,
) -> WalkPlan:
    """`plan_walk` on the event loop, yielding to it every `slice_size` items.

    Not `asyncio.to_thread`: the work is pure Python, so a thread would hold the GIL in 5 ms
    turns against the UI thread and gain nothing on a loaded machine; slices keep every
    turn short and in the loop's own order. `mirror` must not change while this runs (the
    reconciler passes its private snapshot).
    """
    steps = _plan_steps(walk, mirror, complete, max(1, slice_size))
    while True:
        try:
            next(steps)
        except StopIteration as done:
            plan: WalkPlan = done.value
            return plan
        await asyncio.sleep(0)


class PointReadOutcome(Enum):
    FOUND = "found"  # 200: the session lives (it moved during the walk); refresh it
    ABSENT = "absent"  # 404: the server confirms it is gone; prune
    UNKNOWN = "unknown"  # anything else: keep the row, conclude nothing


@dataclass(frozen=True)
class PointRead:
    session_id: str
    outcome: PointReadOutcome
    view: SessionView | None = None
    detail: str = ""
    error: SyncError | None = field(default=None, compare=False)  # why it was UNKNOWN


@dataclass(frozen=True)
class PrunePlan:
    prunes: list[str] = field(default_factory=list)
    refreshes: list[SessionView] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


def plan_prunes(results: Iterable[PointRead]) -> PrunePlan:
    """Prune only on a confirmed 404; 200 refreshes; everything else keeps the row."""
    prunes: list[str] = []
    refreshes: list[SessionView] = []
    kept: list[str] = []
    for result in results:
        if result.outcome is PointReadOutcome.ABSENT:
            prunes.append(result.session_id)
        elif result.outcome is PointReadOutcome.FOUND and result.view is not None:
            refreshes.append(result.view)
        else:
            kept.append(result.session_id)
    return PrunePlan(prunes=prunes, refreshes=refreshes, kept=kept)
