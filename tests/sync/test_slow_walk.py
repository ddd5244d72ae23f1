"""A first sync on a slow link finishes over several passes.

The real stub, a real client; "slow" is a fault transport that holds an index request once
the pass has had its few pages, so the pass deadline (`Bounds.pass_seconds`) cuts it. No
timing is asserted: what the tests check is what each pass wrote and pruned.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx

from sync.api.bounds import Bounds
from sync.engine import SyncEngine
from sync.errors import WalkUnfinished
from sync.profile.profile import Profile
from tests.sync.faults import FaultTransport
from tests.sync.helpers import Server, run

INDEX = r"/v1/sessions"
LIMIT = 4
SESSIONS = 20  # five pages of four


class Stall:
    """Lets `left` cursor pages through, then holds every further one until the pass's
    deadline cuts it (a server that stopped answering in time)."""

    def __init__(self) -> None:
        self.left = 0
        self._never: asyncio.Event | None = None

    async def __call__(self, request: httpx.Request) -> None:
        if self.left <= 0:
            self._never = self._never or asyncio.Event()
            await self._never.wait()
        self.left -= 1


async def _open(folder: Path, url: str, transport: FaultTransport) -> SyncEngine:
    profile = Profile.load(folder, server=url, token="dev-alice", environ={})
    return await SyncEngine.open(
        profile,
        transport=transport,
        page_limit=LIMIT,
        retry_attempts=2,
        bounds=Bounds(pass_seconds=2.0),
    )


def _stalled(transport: FaultTransport) -> Stall:
    stall = Stall()
    transport.add(
        "GET", INDEX, "hook", hook=stall, times=None, when=lambda r: "cursor" in r.url.params
    )
    return stall


async def _ids(engine: SyncEngine) -> set[str]:
    return {row.id for row in await engine.rows()}


def test_a_slow_walk_completes_over_passes_and_prunes_only_after_completion_and_proof(
    live_server: Any, tmp_path: Path
) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            ids = [(await server.create()).id for _ in range(SESSIONS)]  # oldest first
            transport = FaultTransport()
            engine = await _open(tmp_path / "a", live_server.url, transport)
            try:
                assert (await engine.reconcile()).ok  # the mirror holds all twenty
                stall = _stalled(transport)
                await server.delete(ids[0])  # at the bottom: walked last
                stall.left = 1
                first = await engine.reconcile()
                assert isinstance(first.error, WalkUnfinished), repr(first.error)
                assert first.error.message == (
                    f"The server answered slowly: {2 * LIMIT:,} of about {SESSIONS} "
                    "conversations so far; Converge will go on."
                )
                assert first.pruned == () and ids[0] in await _ids(engine)
                # Mid-walk: one more deleted (below the cursor), one created (at the top,
                # above the cursor: the resumed walk must still see it).
                await server.delete(ids[1])
                created = (await server.create()).id
                reports = [first]
                for _ in range(8):
                    stall.left = 1
                    report = await engine.reconcile()
                    reports.append(report)
                    if report.error is None:
                        break
                    assert isinstance(report.error, WalkUnfinished), repr(report.error)
                    assert report.pruned == ()
                    assert {ids[0], ids[1]} <= await _ids(engine)  # never before the end
                last = reports[-1]
                assert last.ok and last.complete, repr(last)
                assert len(reports) > 2  # it took several passes
                assert set(last.pruned) == {ids[0], ids[1]}
                assert await _ids(engine) == {*ids[2:], created}
                # The proof: each pruned row was point-read (a 404) before it went.
                for sid in (ids[0], ids[1]):
                    assert transport.count("GET", rf"/v1/sessions/{sid}") >= 1
            finally:
                await engine.close()

    run(go(), timeout=60)


def test_a_walk_cut_by_a_process_restart_resumes_where_it_stopped(
    live_server: Any, tmp_path: Path
) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            ids = [(await server.create()).id for _ in range(SESSIONS)]
            transport = FaultTransport()
            engine = await _open(tmp_path / "a", live_server.url, transport)
            try:
                _stalled(transport).left = 1
                first = await engine.reconcile()
                assert isinstance(first.error, WalkUnfinished), repr(first.error)
                # A first sync has no previous count: no "about N" is claimed.
                assert first.error.message == (
                    f"The server answered slowly: {2 * LIMIT:,} conversations so far; "
                    "Converge will go on."
                )
                assert len(await _ids(engine)) == 2 * LIMIT  # the rows arrived already
            finally:
                await engine.close()
            transport = FaultTransport()  # a new process: a new engine on the same mirror
            engine = await _open(tmp_path / "a", live_server.url, transport)
            try:
                report = await engine.reconcile()
                assert report.ok and report.complete, repr(report)
                assert await _ids(engine) == set(ids)
                # One look at the top (304: unchanged) and the pages not walked yet.
                cursor_pages = [q for m, p, q in transport.log if p == INDEX and "cursor" in q]
                top = [q for m, p, q in transport.log if p == INDEX and "cursor" not in q]
                assert len(top) == 1 and len(cursor_pages) == SESSIONS // LIMIT - 2
                assert len(report.inserted) == SESSIONS - 2 * LIMIT
            finally:
                await engine.close()

    run(go(), timeout=60)


def test_a_session_updated_mid_walk_is_kept_with_its_new_updated_at_and_never_pruned(
    live_server: Any, tmp_path: Path
) -> None:
    """A run in an old session moves it to the top, above the walk's cursor, while a first
    walk is half done: the rest of the walk (below the cursor) never meets it, so only the
    resumed walk's look at the top can bring it in. It must end in the mirror with the
    `updated_at` the run gave it, and no pass may prune it."""

    async def go() -> None:
        async with Server(live_server.url) as server:
            ids = [(await server.create()).id for _ in range(SESSIONS)]  # oldest first
            transport = FaultTransport()
            engine = await _open(tmp_path / "a", live_server.url, transport)
            try:
                stall = _stalled(transport)
                stall.left = 1
                first = await engine.reconcile()  # a first sync: the eight newest only
                assert isinstance(first.error, WalkUnfinished), repr(first.error)
                assert ids[0] not in await _ids(engine)
                old = ids[0]  # at the bottom: not walked yet
                await server.wait_run(await server.start(old, "wake up"))
                moved = (await server.api.get_session(old)).updated_at
                reports = [first]
                for _ in range(8):
                    stall.left = 1
                    report = await engine.reconcile()
                    reports.append(report)
                    assert old not in report.pruned
                    if report.error is None:
                        break
                    assert isinstance(report.error, WalkUnfinished), repr(report.error)
                last = reports[-1]
                assert last.ok and last.complete, repr(last)
                assert await _ids(engine) == set(ids)
                row = {r.id: r for r in await engine.rows()}[old]
                assert row.updated_at == moved, (row.updated_at, moved)
                # A later pass (top unchanged) keeps it as it is.
                again = await engine.reconcile()
                assert again.ok and old not in again.pruned
                assert {r.id: r for r in await engine.rows()}[old].updated_at == moved
            finally:
                await engine.close()

    run(go(), timeout=60)


def test_a_complete_walk_whose_point_reads_stall_keeps_its_written_pages_in_the_report(
    live_server: Any, tmp_path: Path
) -> None:
    """The walk reached its end and wrote its pages (a new session among them); then the
    point read of a row it did not see stalls past the pass deadline. The pass concluded
    nothing, but what the walk wrote is in the mirror and was announced: the report says
    so, or `converge sync` would print "Nothing was changed." (`sync.cli.main._walk_kept`)."""

    async def go() -> None:
        async with Server(live_server.url) as server:
            ids = [(await server.create()).id for _ in range(LIMIT)]
            transport = FaultTransport()
            engine = await _open(tmp_path / "a", live_server.url, transport)
            try:
                assert (await engine.reconcile()).ok
                stall = Stall()
                transport.add("GET", rf"/v1/sessions/{ids[0]}", "hook", hook=stall, times=None)
                await server.delete(ids[0])  # the walk will not list it: point-read
                created = (await server.create()).id
                report = await engine.reconcile()
                assert report.error is not None and not report.complete, repr(report)
                assert report.inserted == (created,), repr(report)
                assert report.walked == LIMIT and report.pages >= 1, repr(report)
                assert created in await _ids(engine)  # the page the report counts is kept
                assert ids[0] in await _ids(engine)  # nothing pruned without its 404
            finally:
                await engine.close()

    run(go(), timeout=60)
