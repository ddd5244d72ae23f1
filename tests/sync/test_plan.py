"""The pure reconcile planner: upserts, point reads and prunes without a network."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sync.mirror import SessionRow
from sync.models import SessionView
from sync.plan import (
    PointRead,
    PointReadOutcome,
    WalkPlanner,
    dedupe_walk,
    differs,
    plan_prunes,
    plan_walk,
)

T0 = "2026-01-01T00:00:00.000000Z"


def view(sid: str, updated: str = T0, title: str | None = "t") -> SessionView:
    return SessionView(sid, title, "2026-01-01T00:00:00.000000Z", updated, None, None)


def row(v: SessionView) -> SessionRow:
    return v


def test_walk_inserts_new_rows_and_updates_only_changed_ones() -> None:
    same, changed, new = view("ses_a"), view("ses_b"), view("ses_c")
    mirror = {"ses_a": row(same), "ses_b": row(view("ses_b", title="old"))}
    plan = plan_walk([same, changed, new], mirror, complete=True)
    assert [v.id for v in plan.inserts] == ["ses_c"]
    assert [v.id for v in plan.updates] == ["ses_b"]
    assert plan.unchanged == 1
    assert plan.point_reads == []


def test_rows_absent_from_a_complete_walk_become_point_reads_not_prunes() -> None:
    mirror = {"ses_gone": row(view("ses_gone")), "ses_here": row(view("ses_here"))}
    plan = plan_walk([view("ses_here")], mirror, complete=True)
    assert plan.point_reads == ["ses_gone"]


def test_interrupted_walk_plans_no_point_reads() -> None:
    mirror = {"ses_gone": row(view("ses_gone"))}
    plan = plan_walk([view("ses_new")], mirror, complete=False)
    assert plan.point_reads == []
    assert [v.id for v in plan.inserts] == ["ses_new"]


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
    mirror_ids=st.sets(ids),
    walk_ids=st.lists(ids),
    complete=st.booleans(),
    outcomes=st.lists(st.sampled_from(list(PointReadOutcome)), min_size=12, max_size=12),
)
def test_planner_never_prunes_a_walked_or_unconfirmed_session(
    mirror_ids: set[str],
    walk_ids: list[str],
    complete: bool,
    outcomes: list[PointReadOutcome],
) -> None:
    mirror = {sid: row(view(sid, title="m")) for sid in mirror_ids}
    plan = plan_walk([view(s) for s in walk_ids], mirror, complete=complete)
    assert set(plan.point_reads) == ((mirror_ids - set(walk_ids)) if complete else set())
    assert {v.id for v in plan.upserts} <= set(walk_ids)
    reads = [PointRead(sid, outcomes[int(sid[4:])], view=view(sid)) for sid in plan.point_reads]
    prunes = plan_prunes(reads)
    confirmed = {r.session_id for r in reads if r.outcome is PointReadOutcome.ABSENT}
    assert set(prunes.prunes) == confirmed
    assert not set(prunes.prunes) & set(walk_ids)
    assert set(prunes.prunes) | set(prunes.kept) | {v.id for v in prunes.refreshes} == set(
        plan.point_reads
    )


fields = st.sampled_from(["a", "b"])


def reference_plan(
    walk: list[SessionView], mirror: dict[str, SessionRow], complete: bool
) -> tuple[set[str], set[str], list[str]]:
    """The rule written plainly: dedupe (latest wins), compare with the mirror at the end."""
    seen = dedupe_walk(walk)
    inserts = {sid for sid in seen if sid not in mirror}
    updates = {sid for sid, v in seen.items() if sid in mirror and mirror[sid] != v}
    point_reads = sorted(set(mirror) - set(seen)) if complete else []
    return inserts, updates, point_reads


@settings(max_examples=300, deadline=None)
@given(
    mirror=st.dictionaries(ids, st.tuples(fields, fields, fields)),
    walk=st.lists(st.tuples(ids, fields, fields, fields)),
    complete=st.booleans(),
    page=st.integers(1, 5),
)
def test_the_page_by_page_planner_plans_what_the_plain_rule_plans(
    mirror: dict[str, tuple[str, str, str]],
    walk: list[tuple[str, str, str, str]],
    complete: bool,
    page: int,
) -> None:
    """Fed in pages of any size: the same inserts and point reads as deduping the whole walk
    and comparing at the end; every update the rule wants, with the latest view; more
    updates only for a repeated id (rewriting a row with its own values is harmless)."""

    def make(sid: str, updated: str, title: str, run: str) -> SessionView:
        return SessionView(sid, title, T0, f"2026-01-0{1 + (updated == 'b')}", run, None)

    rows = {sid: row(make(sid, *f)) for sid, f in mirror.items()}
    views = [make(*w) for w in walk]
    planner = WalkPlanner(dict(rows))
    for start in range(0, len(views), page):
        planner.add(views[start : start + page])
    plan = planner.finish(complete=complete)
    inserts, updates, point_reads = reference_plan(views, rows, complete)
    latest = dedupe_walk(views)
    assert {v.id for v in plan.inserts} == inserts
    assert plan.point_reads == point_reads
    assert {v.id for v in plan.updates} >= updates
    repeated = {sid for sid in latest if sum(v.id == sid for v in views) > 1}
    assert {v.id for v in plan.updates} - updates <= repeated
    for v in plan.upserts:
        assert v.updated_at == latest[v.id].updated_at
    assert plan.unchanged + len(plan.upserts) == len(latest)
    assert all(planner.saw(sid) for sid in latest)
    for v in views:
        if v.id in rows:
            assert differs(rows[v.id], v) == (rows[v.id] != row(v))


def test_the_planner_lets_go_of_matched_rows_as_the_walk_goes() -> None:
    """The snapshot it owns only keeps the rows not walked yet: a 100,000-row pass never
    holds every row until its end (and never frees them all in one step)."""
    views = [view(f"ses_{i:05d}") for i in range(1_000)]
    snapshot = {v.id: row(v) for v in views}
    planner = WalkPlanner(snapshot)
    planner.add(views[:600])
    assert len(snapshot) == 400
    planner.add(views[600:])
    assert snapshot == {}
    assert planner.finish(complete=True) == plan_walk(
        views, {v.id: v for v in views}, complete=True
    )
