"""The walk's memory budget per pass (the client stays under 300 MB RSS against any
server).

`WalkGuard` charges each page `WALK_ITEM_BYTES` a session plus its body's bytes, and a pass
stops its share of the walk past `Bounds.walk_memory`. The walk writes each page as it
arrives and resumes in the next pass (`sync.reconcile.walk`), so a pass at its budget is
progress (`WalkUnfinished`, its pages kept), not a refusal; what ends a walk for good is
`Bounds.walk_total_items` over all its passes (or a repeating cursor, a page over its caps).

The figures themselves (RSS, seconds) are the bench's; these tests prove counts: where the
default budget ends a pass of an endless index and that it lets a real large account through
in one, that the charge is at least what a walked session really holds, and that the engine
ends a pass at the budget as progress and abandons the walk at its total, pruning nothing.
"""

from __future__ import annotations

import asyncio
import json
import tracemalloc
from pathlib import Path

import pytest

from sync.api.bounds import DEFAULT_BOUNDS, MIB, WALK_ITEM_BYTES, Bounds, PassBudgetSpent, WalkGuard
from sync.engine import SyncEngine
from sync.errors import WalkOutOfBounds, WalkUnfinished
from sync.events import EngineState, TriggerReason
from sync.profile.profile import Profile
from sync.reconcile.plan import dedupe_walk
from sync.wire.models import SessionView
from tests.sync.helpers import run
from tests.sync.hostile_server import ITEM_TIME, HostileServer, _item, hostile

__all__ = ["hostile"]  # the fixture, used by indirect parametrisation

KEPT = SessionView("ses_prefilled", "kept", ITEM_TIME, ITEM_TIME, None, None)
LIMIT = 200


def _real_item(n: int) -> dict[str, object]:
    """A session as the stub lists it: 30-character ids, distinct timestamps, a run id."""
    at = f"2026-01-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}.{n % 10**6:06d}Z"
    return {
        "id": f"ses_{n:026d}",
        "title": f"Conversation {n} about keyset pagination",
        "created_at": at,
        "updated_at": at.replace("2026-01-01", "2026-01-02"),
        "active_run_id": None,
        "last_run_id": f"run_{n:026d}",
    }


def _page_bytes(items: list[dict[str, object]]) -> int:
    return len(json.dumps({"items": items, "next_cursor": "c0000000000"}).encode())


def _default_guard() -> WalkGuard:
    """The guard the reconciler builds for an index walk, with the default bounds."""
    return DEFAULT_BOUNDS.index_walk()


def _items_within_budget(guard: WalkGuard, page_items: int, page_bytes: int) -> int:
    """Feed equal pages until the guard ends the pass at its budget; the items it had
    accepted by then."""
    accepted = 0
    with pytest.raises(PassBudgetSpent):
        while True:
            guard.page(page_items, page_bytes)
            accepted = guard.items
    return accepted


def test_the_default_budget_ends_a_pass_of_an_endless_index_at_a_quarter_of_a_million() -> None:
    # The endless index's pages: 200 sessions, ~38 KB. The old caps took 1,100,000 of them.
    page = _page_bytes([_item(i) for i in range(LIMIT)])
    accepted = _items_within_budget(_default_guard(), LIMIT, page)
    assert 200_000 <= accepted <= 300_000, accepted


def test_the_default_budget_ends_a_pass_of_huge_titles_at_its_bytes() -> None:
    # 200 sessions with ~19 KB titles fill a 4 MiB page: the characters are what is held.
    page = 4 * MIB - 1
    accepted = _items_within_budget(_default_guard(), LIMIT, page)
    assert accepted * 19_000 <= DEFAULT_BOUNDS.walk_memory, accepted


@pytest.mark.parametrize(
    "bounds",
    [Bounds(walk_items=3 * LIMIT), Bounds(walk_bytes=3 * 30_000), Bounds(walk_memory=3 * 100_000)],
    ids=["items", "bytes", "memory"],
)
def test_each_budget_of_the_index_walk_ends_the_pass_and_a_page_past_it_is_not_taken(
    bounds: Bounds,
) -> None:
    guard = bounds.index_walk()
    for _ in range(3):
        guard.page(LIMIT, 30_000)
    with pytest.raises(PassBudgetSpent):
        guard.page(LIMIT, 30_000)


def test_a_budget_below_one_page_refuses_rather_than_end_every_pass_with_nothing() -> None:
    with pytest.raises(WalkOutOfBounds):
        Bounds(walk_memory=MIB).index_walk().page(LIMIT, 2 * MIB)


def test_a_walk_that_cannot_resume_is_still_refused_at_its_budget() -> None:
    """A guard that is not the index walk's (a transcript is read whole) refuses."""
    guard = WalkGuard("conversation log", 1_000, 10**9, 10**9, max_memory=MIB)
    with pytest.raises(WalkOutOfBounds) as refused:
        while True:
            guard.page(LIMIT, 100_000)
    assert "MiB of memory" in refused.value.message


def test_the_index_walk_still_refuses_a_repeating_cursor_and_a_walk_of_empty_pages() -> None:
    guard = Bounds(walk_pages=3).index_walk()
    guard.cursor("c1")
    with pytest.raises(WalkOutOfBounds):
        guard.cursor("c1")
    with pytest.raises(WalkOutOfBounds):
        for _ in range(4):
            guard.page(0, 30)


def test_the_default_budget_lets_a_real_200k_session_account_walk_whole() -> None:
    guard = _default_guard()
    page = _page_bytes([_real_item(i) for i in range(LIMIT)])
    for _ in range(200_000 // LIMIT):
        guard.page(LIMIT, page)
    assert guard.items == 200_000


@pytest.mark.parametrize(
    "make",
    [_item, _real_item, lambda n: {**_real_item(n), "title": "é" * 5_000 + str(n)}],
    ids=["endless-item", "real-item", "long-title"],
)
def test_the_charge_is_at_least_what_a_walked_session_holds(make: object) -> None:
    """tracemalloc: the parsed views of a pass's pages, were they all kept (the walk now
    writes and drops each page, so this is the most a pass could hold), are at most what
    the guard charged for them."""
    assert callable(make)
    bodies = [
        json.dumps({"items": [make(p * LIMIT + i) for i in range(LIMIT)], "next_cursor": None})
        for p in range(10)
    ]
    charged = sum(LIMIT * WALK_ITEM_BYTES + len(body.encode()) for body in bodies)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept: dict[str, SessionView] = {}
        for body in bodies:
            kept.update(
                dedupe_walk(SessionView.from_json(raw) for raw in json.loads(body)["items"])
            )
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(kept) == 10 * LIMIT
    assert held <= charged, (held, charged)


def _endless_pages_within(budget: int) -> int:
    """The endless index's pages (as `hostile_server` builds them) a walk takes before its
    charge passes `budget`: the page that passes it is the last one fetched."""
    charged, pages = 0, 0
    while charged <= budget:
        pages += 1
        items = [_item(pages * LIMIT + i) for i in range(LIMIT)]
        body = json.dumps({"items": items, "next_cursor": f"c{pages}"}).encode()
        charged += LIMIT * WALK_ITEM_BYTES + len(body)
    return pages


async def _open(folder: Path, hostile: HostileServer, bounds: Bounds) -> SyncEngine:
    profile = Profile.load(folder, server=hostile.url, token="dev-alice", environ={})
    return await SyncEngine.open(profile, retry_attempts=2, bounds=bounds)


@pytest.mark.parametrize("hostile", ["endless_index"], indirect=True)
def test_an_endless_index_ends_a_pass_at_its_budget_as_progress_and_the_walk_at_its_total(
    hostile: HostileServer, tmp_path: Path
) -> None:
    budget = 2 * MIB
    pages = _endless_pages_within(budget)

    async def scenario() -> None:
        engine = await _open(tmp_path, hostile, Bounds(walk_memory=budget, walk_total_items=LIMIT))
        try:
            await asyncio.to_thread(engine.mirror.apply, [KEPT])
            report = await engine.reconcile()
            # Progress, not an error: the pass ends at its budget, the walk goes on.
            assert isinstance(report.error, WalkUnfinished), repr(report.error)
            assert report.error.message == (
                f"The index is long: {(pages - 1) * LIMIT:,} conversations so far; "
                "Converge will go on."
            )
            assert engine.status.state is EngineState.WALKING, engine.status
            # The pages before the one past the budget are kept (the walk resumes from
            # there, sync.reconcile.walk); nothing is pruned.
            assert report.pruned == () and len(report.inserted) == (pages - 1) * LIMIT
            assert await engine.row(KEPT.id) is not None
            assert await engine.row(str(_item(pages * LIMIT)["id"])) is None  # refused page
            # The next pass finds the walk past its total over passes: it is abandoned, so
            # an endless index cannot fill the disk a pass at a time.
            again = await engine.reconcile()
            assert isinstance(again.error, WalkOutOfBounds), repr(again.error)
            assert "over several passes" in again.error.message
            assert again.pruned == () and await engine.row(KEPT.id) is not None
            assert await asyncio.to_thread(engine.mirror.get_state, "walk_cursor") is None
            # The window's own triggers start no new walk: said once, nothing asked.
            for reason in (TriggerReason.TIMER, TriggerReason.WATCH, TriggerReason.FOREGROUND):
                quiet = await engine.reconcile(reason)
                assert isinstance(quiet.error, WalkOutOfBounds), repr(quiet.error)
                assert quiet.requests == 0 and quiet.error.message == again.error.message
            asked = len(hostile.requests)
            # A sync the user asks for walks again (up to the bounds again).
            manual = await engine.reconcile(TriggerReason.MANUAL)
            assert isinstance(manual.error, WalkUnfinished), repr(manual.error)
            assert len(hostile.requests) > asked
        finally:
            await engine.close()

    run(scenario(), timeout=30)
    index_pages = [path for _, path in hostile.requests if path == "/v1/sessions"]
    assert len(index_pages) == 2 * pages  # the abandoned walk's triggers asked for nothing


@pytest.mark.parametrize("hostile", ["endless_index"], indirect=True)
def test_an_endless_index_is_abandoned_at_its_total_bytes_too(
    hostile: HostileServer, tmp_path: Path
) -> None:
    budget = 2 * MIB
    pages = _endless_pages_within(budget)

    async def scenario() -> None:
        engine = await _open(tmp_path, hostile, Bounds(walk_memory=budget, walk_total_bytes=MIB))
        try:
            reports = [await engine.reconcile()]
            while isinstance(reports[-1].error, WalkUnfinished) and len(reports) < 10:
                reports.append(await engine.reconcile())
            last = reports[-1]
            assert isinstance(last.error, WalkOutOfBounds), repr(last.error)
            assert "or 1 MiB over several passes" in last.error.message
            assert len(reports) < 10  # far fewer items than the default total
        finally:
            await engine.close()

    run(scenario(), timeout=30)
    assert pages > 1
