"""The pure reconcile planner (CONTRACT §7, ADR-0050 §8), testable without a network.

The walk itself is `sync.reconcile.walk` (each page written as it arrives, "seen" kept in the
mirror); what stays here is pure:

1. `dedupe_walk(page)`: one view per id, the latest `updated_at` winning (a misbehaving
   server that repeats an id).
2. `plan_prunes(results)`: after `GET /v1/sessions/{id}` for each candidate, prune exactly the
   ones that answered 404; refresh the ones that answered 200; keep every other (401, 403,
   5xx, network error). The point read is what saves a session that moved between keyset
   pages during the walk from being mistaken for a deletion. `most_telling` picks which of
   the kept rows' errors the pass shows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum

from sync.errors import (
    Forbidden,
    NetworkError,
    SyncError,
    TlsError,
    Unauthenticated,
    Unavailable,
)
from sync.wire.models import SessionView


@dataclass(frozen=True)
class WalkPlan:
    """What a pass does once its walk is written: point-read the rows it did not see."""

    point_reads: list[str] = field(default_factory=list)


def dedupe_walk(walk: Iterable[SessionView]) -> dict[str, SessionView]:
    """One view per id; if a (misbehaving) walk repeats an id, the latest updated_at wins."""
    views = walk if isinstance(walk, list) else list(walk)
    by_id = {view.id: view for view in views}
    if len(by_id) == len(views):  # no id repeats (every page of a server that behaves)
        return by_id
    seen: dict[str, SessionView] = {}
    for view in views:
        prior = seen.get(view.id)
        if prior is None or view.updated_at >= prior.updated_at:
            seen[view.id] = view
    return seen


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


def _rank(error: SyncError) -> int:
    """Lower is more telling: what the user must act on comes before what will pass."""
    if isinstance(error, Unauthenticated):
        return 0
    if isinstance(error, Forbidden):
        return 1
    if isinstance(error, TlsError):
        return 1  # a certificate to trust: it will not pass by itself
    if isinstance(error, (NetworkError, Unavailable)):
        return 3  # the engine shows these as offline: they usually pass
    return 2  # 500, or an answer the contract does not allow


def most_telling(errors: Iterable[SyncError]) -> SyncError | None:
    """The error to show for a set of inconclusive point reads (first of the best rank)."""
    return min(errors, key=_rank, default=None)
