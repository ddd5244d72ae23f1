"""The refresher: a write too big for a delta is covered by one full read of the mirror."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from app.loop import ConvergeEventLoop
from sync import IndexChanged, SessionRow
from tests.ui.conftest import row, run, until
from ui.session_model import SessionListModel
from ui.sidebar_refresher import DELTA_LIMIT, SidebarRefresher


def test_a_write_over_the_delta_limit_is_shown_by_a_full_read_not_applied_row_by_row(
    loop: ConvergeEventLoop,
) -> None:
    mirror = [row(f"ses_{i:05d}", "in the mirror") for i in range(DELTA_LIMIT + 1)]
    seq = 1
    reads = 0

    async def source(_filter: str) -> list[SessionRow]:
        nonlocal reads
        reads += 1
        return list(reversed(mirror))

    tasks: list[asyncio.Task[Any]] = []

    def spawn(coro: Coroutine[Any, Any, Any], _what: str) -> object:
        tasks.append(asyncio.ensure_future(coro))
        return tasks[-1]

    model = SessionListModel()
    refresher = SidebarRefresher(model, spawn=spawn, on_applied=lambda: None, group_by_date=False)
    refresher.set_source(source, lambda: seq)
    run(loop, refresher.refresh_now())
    assert reads == 1

    # The event's values differ from the mirror's: only a full read shows the mirror's.
    seq = 2
    written = tuple(row(f"ses_{i:05d}", "only in the event") for i in range(DELTA_LIMIT + 1))
    mirror = [row(r.id, "after the write") for r in written]
    refresher.index_changed(IndexChanged(seq=2, rows=written, after=1))

    async def settled() -> None:
        await until(lambda: reads == 2 and all(t.done() for t in tasks), what="a full read")

    run(loop, settled())
    assert {r.title for r in model.rows()} == {"after the write"}
