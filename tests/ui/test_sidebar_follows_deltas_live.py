"""The window's sidebar follows a real engine's mirror by pulling what changed since what it
shows: a pass is a delta, and a write the engine never announced (another process on the
same file) is pulled with the next announcement (decision 0209)."""

from __future__ import annotations

from sync import SessionView
from sync.mirror.reader import MirrorChanges
from sync.mirror.store import Mirror
from tests.ui.conftest import Harness, run


def ts(hour: int, minute: int = 0) -> str:
    return f"2026-11-29T{hour:02d}:{minute:02d}:00.000000Z"


def _count_whole_reads(harness: Harness) -> list[int | None]:
    """Route the sidebar's pulls through a counter (the engine's own read behind it);
    returns the `since` of every pull the mirror answered whole."""
    wholes: list[int | None] = []
    engine = harness.engine

    async def changes(since: int | None, filter_text: str, limit: int) -> MirrorChanges:
        got = await engine.changes_since(since, filter_text, limit)
        if got.whole:
            wholes.append(since)
        return got

    harness.controller.sidebar.set_source(engine.rows, changes)
    return wholes


def test_a_pass_reaches_the_sidebar_as_a_delta_without_a_full_read(harness: Harness) -> None:
    old = harness.create("Oldest plan", ts(8))
    wholes = _count_whole_reads(harness)
    run(harness.loop, harness.sync())
    assert harness.ids() == [old]
    wholes.clear()  # the start: whole reads

    new = harness.create("Newest plan", ts(11))
    harness.api().post(f"/v1/sessions/{old}/messages", json={"text": "again"})
    run(harness.loop, harness.engine.reconcile())
    run(harness.loop, harness.controller.wait_idle())

    shown = list(harness.window.model.rows())
    assert {r.id for r in shown} == {old, new}
    assert shown == sorted(shown, key=lambda r: (r.updated_at, r.id), reverse=True)
    assert wholes == [], "the pass was applied as a delta"
    assert [r.title for r in shown if r.id == new] == ["Newest plan"]


def test_a_write_by_another_process_on_the_mirror_is_pulled_with_the_next_change(
    harness: Harness,
) -> None:
    first = harness.create("First", ts(8))
    wholes = _count_whole_reads(harness)
    run(harness.loop, harness.sync())
    wholes.clear()

    # Another writer of the same file (`converge sync` in a terminal): nobody announces it.
    stray = SessionView("ses_stray", "Stray", ts(1), ts(9), None, None)
    other = Mirror.open(harness.engine.mirror.path)
    try:
        other.apply([stray])
    finally:
        other.close()
    run(harness.loop, harness.engine.delete(first))  # announced: "changed up to N"
    run(harness.loop, harness.controller.wait_idle())
    assert wholes == [], "pulled as a delta"
    assert harness.ids() == ["ses_stray"]
