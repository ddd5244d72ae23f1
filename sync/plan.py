"""The pure reconcile planner (CONTRACT §7, ADR-0050 §8), testable without a network.

Two steps, both pure functions:

1. `plan_walk(walk, mirror, complete)`: what the walk saw is upserted (only rows that are new
   or differ); a mirror row absent from a COMPLETE walk becomes a point-read candidate. An
   interrupted walk yields no point reads, hence no prunes.
2. `plan_prunes(results)`: after `GET /v1/sessions/{id}` for each candidate, prune exactly the
   ones that answered 404; refresh the ones that answered 200; keep every other (401, 403,
   5xx, network error). The point read is what saves a session that moved between keyset
   pages during the walk from being mistaken for a deletion.

`WalkPlanner` is the same planner fed page by page while the walk runs: each page costs the
event loop about a millisecond, and the mirror snapshot it is given shrinks as the walk
matches its rows, so a pass over 100,000 sessions never holds the walked views and the
snapshot's rows at once, and never frees them all in one go at its end (freeing 100,000
views and 100,000 rows took 20–26 ms of the UI thread, measured with `python -m bench ui`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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


def dedupe_walk(walk: Iterable[SessionView]) -> dict[str, SessionView]:
    """One view per id; if a (misbehaving) walk repeats an id, the latest updated_at wins."""
    seen: dict[str, SessionView] = {}
    for view in walk:
        prior = seen.get(view.id)
        if prior is None or view.updated_at >= prior.updated_at:
            seen[view.id] = view
    return seen


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


class WalkPlanner:
    """`plan_walk`, fed one page at a time.

    It owns `mirror` (a private snapshot, `Mirror.snapshot()`) and empties it as the walk
    goes: a walked row that matches is dropped at once (only its id and `updated_at` stay,
    for a repeat), so what remains at `finish` is exactly the rows the walk did not list.

    A walk that repeats an id (a session that moved pages during the walk) keeps the
    latest `updated_at`, like `dedupe_walk`. One difference from comparing everything at
    the end: a repeat, not older, of a session whose first sighting matched the mirror is
    planned as an update, because the row it would be compared with is already dropped.
    Writing a row with the values it has is harmless; dropping a needed write would not be.
    """

    def __init__(self, mirror: dict[str, SessionRow]) -> None:
        self._rest = mirror
        self._matched: dict[str, str] = {}  # walked, equal to the mirror: id -> updated_at
        self._inserts: dict[str, SessionView] = {}
        self._updates: dict[str, SessionView] = {}
        self.walked = 0

    def add(self, views: Iterable[SessionView]) -> None:
        rest, matched, inserts, updates = self._rest, self._matched, self._inserts, self._updates
        for view in views:
            self.walked += 1
            sid = view.id
            row = rest.pop(sid, None)
            if row is not None:  # first sighting of a mirror row
                if differs(row, view):
                    updates[sid] = view
                else:
                    matched[sid] = row.updated_at
                continue
            prior = inserts.get(sid) or updates.get(sid)
            if prior is not None:
                if view.updated_at >= prior.updated_at:
                    (inserts if sid in inserts else updates)[sid] = view
            elif sid in matched:
                if view.updated_at >= matched[sid]:
                    del matched[sid]
                    updates[sid] = view
            else:
                inserts[sid] = view

    def saw(self, session_id: str) -> bool:
        """True if the walk listed this session."""
        return (
            session_id in self._matched
            or session_id in self._inserts
            or session_id in self._updates
        )

    def finish(self, *, complete: bool) -> WalkPlan:
        """The plan; point reads (the mirror rows the walk did not list) only when the walk
        covered the whole index."""
        point_reads = sorted(self._rest) if complete else []
        return WalkPlan(
            inserts=list(self._inserts.values()),
            updates=list(self._updates.values()),
            point_reads=point_reads,
            unchanged=len(self._matched),
        )


def plan_walk(
    walk: Iterable[SessionView], mirror: Mapping[str, SessionRow], *, complete: bool
) -> WalkPlan:
    """Upserts from what the walk saw; point reads only when the walk covered everything."""
    planner = WalkPlanner(dict(mirror))
    planner.add(walk)
    return planner.finish(complete=complete)


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
