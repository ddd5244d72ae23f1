"""Property: whatever the server does during a walk, no live session is pruned, and after a
quiet pass the mirror equals the server's index.

Hypothesis draws an initial index, a page size, and a schedule of mutations (through the API
and the control plane) to run between specific pages of the walk, against a REAL stub server.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sync.errors import Conflict
from sync.wire.models import SessionPage
from tests.sync.helpers import Server, device, run

Op = tuple[str, int]

ops = st.one_of(
    st.tuples(st.just("create"), st.just(0)),
    st.tuples(st.just("control"), st.integers(0, 3000)),  # days in the past
    st.tuples(st.just("run"), st.integers(0, 50)),
    st.tuples(st.just("delete"), st.integers(0, 50)),
)

_folders = itertools.count()


async def apply(server: Server, op: Op, live: list[str]) -> None:
    kind, arg = op
    if kind == "create":
        live.append((await server.create()).id)
    elif kind == "control":
        year = 2026 - (arg // 365) - 1
        day = arg % 28 + 1
        view = await server.control_session(
            f"imported {arg}", updated_at=f"{year:04d}-01-{day:02d}T12:00:00.000000Z"
        )
        live.append(view.id)
    elif live:
        sid = live[arg % len(live)]
        try:
            if kind == "run":
                await server.start(sid, f"touch {arg}")
            else:
                await server.delete(sid)
                live.remove(sid)
        except Conflict:
            pass  # a run is active: the server refuses, which is fine


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    initial=st.integers(0, 6),
    page_limit=st.integers(1, 3),
    before=st.lists(ops, max_size=3),
    during=st.lists(st.tuples(st.integers(1, 6), ops), max_size=8),
)
def test_no_live_session_is_pruned_and_a_quiet_pass_converges(
    live_server: Any,
    tmp_path: Path,
    initial: int,
    page_limit: int,
    before: list[Op],
    during: list[tuple[int, Op]],
) -> None:
    folder = tmp_path / f"device{next(_folders)}"

    async def go() -> None:
        async with Server(live_server.url) as server:
            live = [(await server.create()).id for _ in range(initial)]
            armed = False

            async def hook(page_no: int, page: SessionPage) -> None:
                if armed:
                    for at, op in during:
                        if at == page_no:
                            await apply(server, op, live)

            async with device(
                live_server.url, folder, page_limit=page_limit, use_etag=False, page_hook=hook
            ) as (engine, _):
                assert (await engine.reconcile()).ok
                for op in before:
                    await apply(server, op, live)
                armed = True
                report = await engine.reconcile()
                armed = False
                assert report.ok, report.error
                for sid in report.pruned:
                    assert not await server.exists(sid), f"pruned live session {sid}"
                for sid in live:  # every session alive now and mirrored before stays
                    if sid in report.pruned:
                        raise AssertionError(f"{sid} is live but was pruned")
                await server.wait_quiet()
                quiet = await engine.reconcile()
                assert quiet.ok
                index = await server.index()
                mirror = {r.id: r for r in await engine.rows()}
                assert mirror == {sid: v for sid, v in index.items()}
            # leave the server empty for the next example
            for sid in index:
                await server.delete(sid)

    run(go())
