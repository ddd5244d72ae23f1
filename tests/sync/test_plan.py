"""The pure reconcile planner: deduplicating a page and deciding prunes without a network.

(The walk's upserts and point-read candidates are the mirror's: `tests/sync/test_slow_walk.py`
and `tests/sync/test_reconcile_live.py`.)"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sync.models import SessionView
from sync.plan import PointRead, PointReadOutcome, dedupe_walk, plan_prunes

T0 = "2026-01-01T00:00:00.000000Z"


def view(sid: str, updated: str = T0, title: str | None = "t") -> SessionView:
    return SessionView(sid, title, "2026-01-01T00:00:00.000000Z", updated, None, None)


def test_a_repeated_walk_item_keeps_the_latest_version() -> None:
    old = view("ses_a", "2026-01-01T00:00:00.000000Z", "old")
    new = view("ses_a", "2026-01-02T00:00:00.000000Z", "new")
    assert dedupe_walk([new, old])["ses_a"] == new
    assert dedupe_walk([old, new])["ses_a"] == new


def test_prune_only_on_404_refresh_on_200_keep_on_anything_else() -> None:
    fresh = view("ses_moved", "2026-02-01T00:00:00.000000Z")
    plan = plan_prunes(
        [
            PointRead("ses_deleted", PointReadOutcome.ABSENT, detail="deleted"),
            PointRead("ses_moved", PointReadOutcome.FOUND, view=fresh),
            PointRead("ses_503", PointReadOutcome.UNKNOWN, detail="503"),
            PointRead("ses_401", PointReadOutcome.UNKNOWN, detail="401"),
        ]
    )
    assert plan.prunes == ["ses_deleted"]
    assert plan.refreshes == [fresh]
    assert sorted(plan.kept) == ["ses_401", "ses_503"]


ids = st.sampled_from([f"ses_{i}" for i in range(12)])


@settings(max_examples=200, deadline=None)
@given(
    candidates=st.sets(ids),
    outcomes=st.lists(st.sampled_from(list(PointReadOutcome)), min_size=12, max_size=12),
)
def test_prunes_are_exactly_the_confirmed_absences_and_every_candidate_is_accounted_for(
    candidates: set[str], outcomes: list[PointReadOutcome]
) -> None:
    reads = [PointRead(sid, outcomes[int(sid[4:])], view=view(sid)) for sid in candidates]
    prunes = plan_prunes(reads)
    confirmed = {r.session_id for r in reads if r.outcome is PointReadOutcome.ABSENT}
    assert set(prunes.prunes) == confirmed
    assert set(prunes.prunes) | set(prunes.kept) | {v.id for v in prunes.refreshes} == candidates
