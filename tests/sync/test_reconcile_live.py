"""Reconcile against a REAL stub server (CONTRACT §7), with faults injected in front of it."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from sync.errors import BadCursor, NetworkError, SyncError
from sync.events import EngineState, TriggerReason
from sync.wire.models import SessionPage
from tests.sync.faults import FaultTransport
from tests.sync.helpers import Server, device, run

POINT_READ = r"/v1/sessions/ses_[^/]+"
INDEX = "/v1/sessions"


async def seed(server: Server, n: int) -> list[str]:
    """n sessions, oldest first (each creation bumps it to the top of the index)."""
    return [(await server.create()).id for _ in range(n)]


EVENTS = r"/v1/sessions/[^/]+/events"


def pass_requests(transport: FaultTransport) -> int:
    """The requests of the pass itself: its content phase's event pages, which run in the
    background after it (`sync.reconcile.content`), are not the walk's."""
    return sum(1 for _m, path, _q in transport.log if not re.fullmatch(EVENTS, path))


def test_first_sync_inserts_the_whole_index_with_titles(live_server: Any, tmp_path: Path) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            titled = await server.create("hello there")
            ids = await seed(server, 4)
            async with device(live_server.url, tmp_path / "a", page_limit=2) as (engine, _):
                report = await engine.reconcile(TriggerReason.CONNECT)
                assert report.ok and report.complete and report.pages == 3
                assert set(report.inserted) == {titled.id, *ids}
                rows = await engine.rows()
                index = await server.index()
                assert [r.id for r in rows] == sorted(
                    index, key=lambda i: (index[i].updated_at, i), reverse=True
                )
                assert {r.id: r.title for r in rows}[titled.id] == "hello there"

    run(go())


def test_two_devices_converge_after_a_delete(live_server: Any, tmp_path: Path) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            ids = await seed(server, 3)
            async with (
                device(live_server.url, tmp_path / "a") as (a, _),
                device(live_server.url, tmp_path / "b") as (b, _),
            ):
                await a.reconcile()
                await b.reconcile()
                outcome = await a.delete(ids[1])
                assert outcome.removed
                assert ids[1] not in {r.id for r in await a.rows()}
                report = await b.reconcile(TriggerReason.FOREGROUND)
                assert report.pruned == (ids[1],)
                assert [r.id for r in await b.rows()] == [r.id for r in await a.rows()]
                assert sorted(r.id for r in await b.rows()) == sorted({ids[0], ids[2]})

    run(go())


def test_prune_waits_for_a_point_read_404(live_server: Any, tmp_path: Path) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            ids = await seed(server, 3)
            async with device(live_server.url, tmp_path / "a") as (engine, transport):
                await engine.reconcile()
                await server.delete(ids[0])
                transport.clear()
                report = await engine.reconcile()
                assert report.pruned == (ids[0],)
                assert transport.count("GET", f"/v1/sessions/{ids[0]}") == 1
                assert transport.count("GET", POINT_READ) == 1  # only the absent one

    run(go())


def test_a_session_that_moves_during_the_walk_is_kept_and_refreshed(
    live_server: Any, tmp_path: Path
) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            ids = await seed(server, 6)  # ids[0] is the oldest: on the last page
            moved: list[str] = []

            async def bump_oldest_after_first_page(page_no: int, page: SessionPage) -> None:
                if page_no == 1 and not moved and armed:
                    run_id = await server.start(ids[0], "move me to the top")
                    await server.wait_run(run_id)
                    moved.append(run_id)

            armed = False
            async with device(
                live_server.url,
                tmp_path / "a",
                page_limit=2,
                use_etag=False,
                page_hook=bump_oldest_after_first_page,
            ) as (engine, transport):
                await engine.reconcile()
                before = await engine.row(ids[0])
                armed = True
                transport.clear()
                report = await engine.reconcile()
                assert moved, "the mutation ran during the walk"
                assert report.ok and report.pruned == ()
                # the walk missed it (it moved above the cursor), so it was point-read
                assert transport.count("GET", f"/v1/sessions/{ids[0]}") == 1
                assert ids[0] in report.updated
                after = await engine.row(ids[0])
                assert before is not None and after is not None
                assert after.updated_at > before.updated_at
                assert after.last_run_id == moved[0]

    run(go())


@pytest.mark.parametrize(
    ("action", "status"),
    [("refuse", 0), ("status", 503), ("status", 500), ("status", 401)],
    ids=["network", "503", "500", "401"],
)
def test_a_walk_interrupted_mid_way_prunes_nothing_and_keeps_what_it_walked(
    live_server: Any, tmp_path: Path, action: str, status: int
) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            ids = await seed(server, 6)
            async with device(live_server.url, tmp_path / "a", page_limit=2) as (engine, transport):
                await engine.reconcile()
                before = await engine.rows()
                await server.delete(ids[0])
                await server.delete(ids[5])
                created = await server.create()  # something to insert, too
                codes = {503: "unavailable", 500: "internal", 401: "unauthenticated"}
                transport.add(
                    "GET",
                    INDEX,
                    action,
                    status=status,
                    code=codes.get(status, ""),
                    times=None,
                    when=lambda r: "cursor" in r.url.params,
                )
                report = await engine.reconcile()
                assert report.error is not None and not report.complete
                if action == "refuse":
                    assert isinstance(report.error, NetworkError)
                # The first page (the new session on top) is kept; the walk goes on next
                # pass (sync.reconcile.walk); nothing is point-read or pruned before its end.
                assert report.pruned == () and report.inserted == (created.id,)
                assert transport.count("GET", POINT_READ) == 0
                assert {r.id for r in await engine.rows()} == {r.id for r in before} | {created.id}
                assert engine.status.state.value in {"offline", "trouble", "error"}

    run(go())


def test_a_bad_cursor_restarts_the_walk_once_then_concludes(
    live_server: Any, tmp_path: Path
) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            ids = await seed(server, 5)
            async with device(live_server.url, tmp_path / "a", page_limit=2) as (engine, transport):
                await engine.reconcile()
                await server.delete(ids[2])
                transport.add(
                    "GET",
                    INDEX,
                    "status",
                    status=400,
                    code="invalid_request",
                    times=1,
                    when=lambda r: "cursor" in r.url.params,
                )
                report = await engine.reconcile()
                assert report.ok and report.restarted
                assert report.pruned == (ids[2],)

    run(go())


def test_a_second_bad_cursor_aborts_without_pruning(live_server: Any, tmp_path: Path) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            ids = await seed(server, 5)
            async with device(live_server.url, tmp_path / "a", page_limit=2) as (engine, transport):
                await engine.reconcile()
                await server.delete(ids[2])
                transport.add(
                    "GET",
                    INDEX,
                    "status",
                    status=400,
                    code="invalid_request",
                    times=None,
                    when=lambda r: "cursor" in r.url.params,
                )
                report = await engine.reconcile()
                assert isinstance(report.error, BadCursor)
                assert report.pruned == ()
                assert ids[2] in {r.id for r in await engine.rows()}

    run(go())


@pytest.mark.parametrize(
    ("action", "status", "code", "state", "words"),
    [
        ("status", 503, "unavailable", EngineState.TROUBLE, "could not be checked"),
        ("status", 500, "internal", EngineState.ERROR, "could not be checked"),
        ("status", 401, "unauthenticated", EngineState.ERROR, "no longer accepts this token"),
        ("status", 403, "forbidden", EngineState.ERROR, "not allowed"),
        ("refuse", 0, "", EngineState.OFFLINE, "could not be checked"),
    ],
    ids=["503", "500", "401", "403", "network"],
)
def test_an_inconclusive_point_read_keeps_the_row_until_a_404_and_is_not_shown_as_synced(
    live_server: Any,
    tmp_path: Path,
    action: str,
    status: int,
    code: str,
    state: EngineState,
    words: str,
) -> None:
    """CONTRACT §7 keeps the row on anything but 404; the pass still writes what it learned,
    but it did not conclude, so the user is told (not "synced") and the next pass retries."""

    async def go() -> None:
        async with Server(live_server.url) as server:
            ids = await seed(server, 3)
            async with device(live_server.url, tmp_path / "a") as (engine, transport):
                first = await engine.reconcile()
                synced_at = engine.status.last_success
                assert first.ok and synced_at is not None
                await server.delete(ids[1])
                fresh = await server.create("written by the same pass")
                transport.add(
                    "GET", f"/v1/sessions/{ids[1]}", action, status=status, code=code, times=None
                )
                report = await engine.reconcile()
                # the data: the walk's insert is written, nothing pruned, the row kept
                assert report.error is None and report.complete
                assert report.inserted == (fresh.id,)
                assert report.pruned == () and report.kept == (ids[1],)
                assert ids[1] in {r.id for r in await engine.rows()}
                # the status: not a success
                assert not report.ok and report.point_read_error is not None
                assert engine.status.state is state, engine.status
                assert words in engine.status.message, engine.status.message
                assert "kept" in engine.status.message, engine.status.message
                assert engine.status.last_success == synced_at  # not a conclusive pass
                transport.clear()
                # the ETag was not stored, so the next pass is not short-circuited by a 304
                report = await engine.reconcile()
                assert not report.not_modified
                assert report.pruned == (ids[1],)
                assert report.ok and engine.status.state is EngineState.IDLE

    run(go())


def test_triggers_during_a_pass_coalesce_into_exactly_one_more_pass(
    live_server: Any, tmp_path: Path
) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            await seed(server, 3)
            gate = asyncio.Event()
            entered = asyncio.Event()

            async def hold_first_pass(page_no: int, page: SessionPage) -> None:
                if not gate.is_set():
                    entered.set()
                    await gate.wait()

            async with device(live_server.url, tmp_path / "a", page_hook=hold_first_pass) as (
                engine,
                transport,
            ):
                engine.trigger(TriggerReason.CONNECT)
                await entered.wait()
                for reason in [TriggerReason.TIMER, TriggerReason.FOREGROUND] * 5:
                    engine.trigger(reason)
                follow_up = asyncio.ensure_future(engine.reconcile(TriggerReason.MANUAL))
                gate.set()
                report = await follow_up
                assert report.ok
                assert engine.passes_started == 2
                for _ in range(20):
                    await asyncio.sleep(0.01)
                assert engine.passes_started == 2
                # two passes, each starting with a first-page request
                assert sum(1 for m, p, q in transport.log if p == INDEX and "cursor" not in q) == 2

    run(go())


def test_an_unchanged_index_costs_one_request_thanks_to_the_etag(
    live_server: Any, tmp_path: Path
) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            await seed(server, 5)
            async with device(live_server.url, tmp_path / "a", page_limit=2) as (engine, transport):
                first = await engine.reconcile()
                assert first.pages == 3
                await engine.content.wait_idle()  # the first pass's transcripts
                transport.clear()
                second = await engine.reconcile()
                assert second.ok and second.not_modified
                assert pass_requests(transport) == 1
                assert transport.requests[0].headers.get("If-None-Match")
                created = await server.create()
                transport.clear()
                third = await engine.reconcile()
                assert third.inserted == (created.id,)
                assert pass_requests(transport) == 3  # 6 sessions, 2 a page, no point read
            # the ETag survives in the mirror across restarts of the engine
            async with device(live_server.url, tmp_path / "a", page_limit=2) as (engine, transport):
                again = await engine.reconcile()
                assert again.not_modified and pass_requests(transport) == 1

    run(go())


def test_without_etag_an_unchanged_index_is_walked_in_full(
    live_server: Any, tmp_path: Path
) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            await seed(server, 5)
            async with device(live_server.url, tmp_path / "a", page_limit=2, use_etag=False) as (
                engine,
                transport,
            ):
                await engine.reconcile()
                transport.clear()
                report = await engine.reconcile()
                assert not report.not_modified and not report.changed
                assert pass_requests(transport) == 3

    run(go())


def test_the_timer_triggers_passes(live_server: Any, tmp_path: Path) -> None:
    async def go() -> None:
        async with device(live_server.url, tmp_path / "a") as (engine, _):
            engine.start_timer(0.05)
            async with asyncio.timeout(10):
                while engine.passes_started < 3:
                    await asyncio.sleep(0.01)
            engine.stop_timer()

    run(go())


def test_engine_events_report_changes_and_status(live_server: Any, tmp_path: Path) -> None:
    from sync.events import EngineState, IndexChanged, StatusChanged

    async def go() -> None:
        async with Server(live_server.url) as server:
            ids = await seed(server, 2)
            async with device(live_server.url, tmp_path / "a") as (engine, transport):
                events: list[Any] = []
                unsubscribe = engine.subscribe(events.append)
                await engine.reconcile()
                changes = [e for e in events if isinstance(e, IndexChanged)]
                assert len(changes) == 1 and set(changes[0].inserted) == set(ids)
                states = [e.status.state for e in events if isinstance(e, StatusChanged)]
                assert states == [EngineState.SYNCING, EngineState.IDLE]
                transport.add("GET", INDEX, "refuse", times=None)
                await engine.reconcile()
                assert engine.status.state is EngineState.OFFLINE
                assert "Cannot reach" in engine.status.message
                unsubscribe()
                count = len(events)
                transport.clear()
                await engine.reconcile()
                assert len(events) == count

    run(go())


def test_reconcile_reports_errors_instead_of_raising(tmp_path: Path) -> None:
    async def go() -> None:
        async with device("http://127.0.0.1:9", tmp_path / "a") as (engine, _):
            report = await engine.reconcile()
            assert isinstance(report.error, SyncError)

    run(go())


def test_switching_a_profile_to_another_principal_keeps_each_accounts_mirror_apart(
    live_server: Any, tmp_path: Path
) -> None:
    async def go() -> None:
        async with Server(live_server.url) as alice, Server(live_server.url, "dev-bob") as bob:
            alices = await seed(alice, 2)
            bobs = await seed(bob, 1)
            async with device(live_server.url, tmp_path / "p") as (engine, _):
                await engine.reconcile()
                assert {r.id for r in await engine.rows()} == set(alices)
            async with device(live_server.url, tmp_path / "p", token="dev-bob") as (engine, _):
                report = await engine.reconcile()
                # Bob's account has its own mirror (CONTRACT §9.3): nothing of alice's to
                # point-read, so nothing pruned (alice's rows would be, on their 404s).
                assert report.pruned == () and set(report.inserted) == set(bobs)
                assert {r.id for r in await engine.rows()} == set(bobs)
            async with device(live_server.url, tmp_path / "p") as (engine, _):
                assert {r.id for r in await engine.rows()} == set(alices)  # untouched

    run(go())


def test_a_pass_with_nothing_to_point_read_reads_the_mirror_once_and_writes_it_once(
    live_server: Any, tmp_path: Path
) -> None:
    """Every watching device makes such a pass per change: its mirror work is what many
    devices on few cores multiply (`python -m bench device_cost`). Its
    last page concludes the walk in the page's own transaction (`WalkEnd`)."""

    async def go() -> None:
        async with Server(live_server.url) as server:
            await seed(server, 3)
            async with device(live_server.url, tmp_path / "a") as (engine, _):
                await engine.reconcile(TriggerReason.CONNECT)
                await engine.content.wait_idle()
                created = await server.create()
                begun: list[str] = []
                mirror: Any = engine.mirror
                transaction = mirror._transaction

                def counted(pool: list[Any], begin: str) -> Any:
                    begun.append("read" if pool is mirror._readers else "write")
                    return transaction(pool, begin)

                # The content phase the pass kicks reads the mirror from its own task,
                # which may begin before the pass returns: it is held until the count
                # is taken (its own cost is `test_content_pace`'s and device_cost's).
                content_kick = engine.content.kick
                engine.content.kick = lambda: begun.append("kick")  # type: ignore[method-assign]
                mirror._transaction = counted
                try:
                    report = await engine.reconcile()
                finally:
                    del mirror._transaction
                    engine.content.kick = content_kick  # type: ignore[method-assign]
                content_kick()
                await engine.content.wait_idle()
                assert report.ok and report.complete and report.inserted == (created.id,)
                assert begun == ["read", "write", "kick"]
                # ... and it concluded: the next pass is the ETag's one request
                again = await engine.reconcile()
                assert again.not_modified

    run(go())
