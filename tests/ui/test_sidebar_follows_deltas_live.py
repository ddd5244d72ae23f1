"""The window's sidebar follows a real engine's mirror writes by deltas, and re-reads the
mirror whole only when it missed a write."""

from __future__ import annotations

from sync import SessionRow, SessionView
from tests.ui.conftest import Harness, run


def ts(hour: int, minute: int = 0) -> str:
    return f"2026-11-29T{hour:02d}:{minute:02d}:00.000000Z"


def _count_full_reads(harness: Harness) -> list[str]:
    """Route the sidebar's full reads through a counter (the engine's own read behind it)."""
    reads: list[str] = []
    engine = harness.engine

    async def rows(filter_text: str) -> list[SessionRow]:
        reads.append(filter_text)
        return await engine.rows(filter_text)

    harness.controller.sidebar.set_source(rows, lambda: engine.last_change_seq)
    return reads


def test_a_pass_reaches_the_sidebar_as_a_delta_without_a_full_read(harness: Harness) -> None:
    old = harness.create("Oldest plan", ts(8))
    reads = _count_full_reads(harness)
    run(harness.loop, harness.sync())
    assert harness.ids() == [old]
    reads.clear()  # the start: full reads

    new = harness.create("Newest plan", ts(11))
    harness.api().post(f"/v1/sessions/{old}/messages", json={"text": "again"})
    run(harness.loop, harness.engine.reconcile())
    run(harness.loop, harness.controller.wait_idle())

    shown = list(harness.window.model.rows())
    assert {r.id for r in shown} == {old, new}
    assert shown == sorted(shown, key=lambda r: (r.updated_at, r.id), reverse=True)
    assert reads == [], "the pass was applied as a delta"
    assert [r.title for r in shown if r.id == new] == ["Newest plan"]


def test_a_write_the_sidebar_missed_makes_it_read_the_mirror_whole(harness: Harness) -> None:
    first = harness.create("First", ts(8))
    reads = _count_full_reads(harness)
    run(harness.loop, harness.sync())
    reads.clear()

    # A write nobody announced (another writer of this mirror object).
    stray = SessionView("ses_stray", "Stray", ts(1), ts(9), None, None)
    harness.engine.mirror.apply([stray])
    second = harness.create("Second", ts(10))
    run(harness.loop, harness.engine.reconcile())  # announced, but after the stray write
    run(harness.loop, harness.controller.wait_idle())

    assert reads == [""], "the gap was noticed and the mirror re-read"
    assert set(harness.ids()) == {first, second}  # the pass pruned the stray (404)
