"""The refresher shows the mirror at a change sequence and pulls what changed since it
(decision 0209): events late, out of order, dropped or from another writer of the file leave
the list equal to the mirror, and a change too big for a delta is one whole read."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.loop import ConvergeEventLoop
from sync import IndexChanged, SessionView
from sync.mirror.reader import MirrorChanges
from sync.mirror.store import Mirror
from tests.ui.conftest import row, run, until
from ui.sidebar.model import SessionListModel
from ui.sidebar.refresher import DELTA_LIMIT, SidebarRefresher
from ui.sidebar.row import SidebarRow


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[Mirror]:
    m = Mirror.open(tmp_path / "mirror.sqlite3")
    try:
        yield m
    finally:
        m.close()


class Follower:
    """A refresher whose rows and changes come from a real mirror file, as through the
    engine (`SyncEngine.rows`, `SyncEngine.changes_since`: a worker thread each)."""

    def __init__(self, mirror: Mirror) -> None:
        self.mirror = mirror
        self.answers: list[MirrorChanges] = []
        self.tasks: list[asyncio.Task[Any]] = []
        self.model = SessionListModel()
        self.refresher = SidebarRefresher(
            self.model, spawn=self._spawn, on_applied=lambda: None, group_by_date=False
        )
        self.refresher.set_source(self._rows, self._changes)

    def _spawn(self, coro: Coroutine[Any, Any, Any], _what: str) -> object:
        self.tasks.append(asyncio.ensure_future(coro))
        return self.tasks[-1]

    async def _rows(self, filter_text: str) -> list[SessionView]:
        return await asyncio.to_thread(self.mirror.rows, filter_text)

    async def _changes(self, since: int | None, filter_text: str, limit: int) -> MirrorChanges:
        got = await asyncio.to_thread(self.mirror.changes_since, since, filter_text, limit)
        self.answers.append(got)
        return got

    async def settled(self) -> None:
        await until(lambda: all(t.done() for t in self.tasks), what="the refresher idle")
        for task in self.tasks:
            task.result()  # a failure in the loop fails the test

    def shown(self) -> list[SidebarRow]:
        return list(self.model.rows())


def stamp(n: int) -> str:
    return f"2026-11-{1 + n // 1440:02d}T{n // 60 % 24:02d}:{n % 60:02d}:00.000000Z"


def test_a_change_over_the_delta_limit_is_shown_by_one_whole_read(
    loop: ConvergeEventLoop, mirror: Mirror
) -> None:
    mirror.apply([row("ses_first", "first", stamp(0))])
    follower = Follower(mirror)
    run(loop, follower.refresher.refresh_now())
    big = [row(f"ses_{i:05d}", "many", stamp(i + 1)) for i in range(DELTA_LIMIT + 1)]
    applied = mirror.apply(big)
    follower.answers.clear()
    follower.refresher.index_changed(IndexChanged(seq=applied.seq))
    run(loop, follower.settled())
    assert [a.whole for a in follower.answers] == [True]
    assert follower.shown() == mirror.rows()


def test_an_event_for_what_is_shown_already_reads_nothing(
    loop: ConvergeEventLoop, mirror: Mirror
) -> None:
    first = mirror.apply([row("ses_a", "a", stamp(1))])
    follower = Follower(mirror)
    run(loop, follower.refresher.refresh_now())
    follower.answers.clear()
    follower.refresher.index_changed(IndexChanged(seq=first.seq))  # a late event
    run(loop, follower.settled())
    assert follower.answers == []


def test_a_write_by_another_mirror_object_is_pulled_on_the_next_event(
    loop: ConvergeEventLoop, mirror: Mirror
) -> None:
    mirror.apply([row("ses_a", "a", stamp(1))])
    follower = Follower(mirror)
    run(loop, follower.refresher.refresh_now())
    other = Mirror.open(mirror.path)  # `converge sync` in a terminal, say
    try:
        other.apply([row("ses_theirs", "theirs", stamp(2))])
    finally:
        other.close()
    ours = mirror.apply((), ["ses_a"])
    follower.answers.clear()
    follower.refresher.index_changed(IndexChanged(removed=("ses_a",), seq=ours.seq))
    run(loop, follower.settled())
    assert [r.id for r in follower.shown()] == ["ses_theirs"]
    assert [a.whole for a in follower.answers] == [False]


@pytest.mark.parametrize("seed", range(12))
def test_events_late_out_of_order_or_dropped_leave_the_sidebar_equal_to_the_mirror(
    loop: ConvergeEventLoop, mirror: Mirror, seed: int
) -> None:
    """Random writes by two mirror objects on one file; their events delivered shuffled,
    some dropped (the newest always arrives), between steps of the refresher's loop."""
    rng = random.Random(seed)
    other = Mirror.open(mirror.path)
    try:
        follower = Follower(mirror)
        run(loop, follower.refresher.refresh_now())
        events: list[IndexChanged] = []
        for clock in range(1, 31):
            writer = rng.choice((mirror, other))
            have = [r.id for r in writer.rows()]
            if have and rng.random() < 0.3:
                applied = writer.apply((), rng.sample(have, min(len(have), rng.randint(1, 2))))
            else:
                sid = rng.choice(have) if have and rng.random() < 0.5 else f"ses_{clock:03d}"
                applied = writer.apply([row(sid, rng.choice(("x", "y", None)), stamp(clock))])
            if applied.seq:
                events.append(IndexChanged(removed=tuple(applied.removed), seq=applied.seq))
        newest = max(events, key=lambda e: e.seq)
        delivered = [e for e in events if e is newest or rng.random() < 0.5]
        rng.shuffle(delivered)

        async def deliver() -> None:
            for event in delivered:
                follower.refresher.index_changed(event)
                for _ in range(rng.randint(0, 3)):
                    await asyncio.sleep(0)  # a pull may be under way meanwhile
            await follower.settled()

        run(loop, deliver())
        assert follower.shown() == mirror.rows()
        assert follower.refresher.shown_seq == newest.seq
    finally:
        other.close()
