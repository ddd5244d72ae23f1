"""The engine's index watch (CONTRACT §9.1) against a REAL stub server: a change made by
another device reaches a watching device through the watch alone; a server without the
feature leaves the engine on its other triggers; errors back off and recover."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sync.engine import SyncEngine
from sync.events import IndexChanged, TriggerReason
from sync.reconcile.watch import Backoff, WatchState
from tests.sync.helpers import Server, device, run

INDEX = "/v1/sessions"


def _watching(request: Any) -> bool:
    return "prefer" in request.headers


async def _until(condition: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


def _removed(engine: SyncEngine, session_id: str) -> asyncio.Future[IndexChanged]:
    """The IndexChanged that removes `session_id` from the engine's mirror."""
    future: asyncio.Future[IndexChanged] = asyncio.get_running_loop().create_future()

    def listener(event: object) -> None:
        if isinstance(event, IndexChanged) and session_id in event.removed and not future.done():
            future.set_result(event)

    engine.subscribe(listener)
    return future


class Inserts:
    """Every row an engine inserts from now on, with the event that inserted it. Made
    before the change, so a pass that ends before the change's own request has answered
    (the device and the test share one loop) is not missed."""

    def __init__(self, engine: SyncEngine) -> None:
        self._seen: dict[str, IndexChanged] = {}
        self._waiting: dict[str, asyncio.Future[IndexChanged]] = {}
        engine.subscribe(self._heard)

    def _heard(self, event: object) -> None:
        if not isinstance(event, IndexChanged):
            return
        for session_id in event.inserted:
            self._seen.setdefault(session_id, event)
            waiter = self._waiting.pop(session_id, None)
            if waiter is not None and not waiter.done():
                waiter.set_result(event)

    async def of(self, session_id: str) -> IndexChanged:
        """The event that inserted `session_id` (waiting for it if it has not come)."""
        if session_id in self._seen:
            return self._seen[session_id]
        waiter = asyncio.get_running_loop().create_future()
        self._waiting[session_id] = waiter
        return await waiter


def _held(server: Any) -> int:
    return int(server.thread.app.state.converge.watches.held)


def test_a_delete_on_another_device_reaches_a_watching_device_through_the_watch_alone(
    live_server: Any, tmp_path: Path
) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            ids = [(await server.create()).id for _ in range(3)]
            async with (
                device(live_server.url, tmp_path / "a") as (a, _),
                device(live_server.url, tmp_path / "b") as (b, _),
            ):
                await a.reconcile(TriggerReason.CONNECT)
                await b.reconcile(TriggerReason.CONNECT)
                reasons: list[TriggerReason] = []
                b.add_pass_listener(lambda report: reasons.append(report.reason))
                b.start_watch()  # no timer, no foreground: the watch is the only trigger
                await _until(lambda: _held(live_server) == 1, "the watch to be held")
                gone = _removed(b, ids[1])
                assert (await a.delete(ids[1])).removed
                event = await gone
                assert event.report is not None
                assert event.report.reason is TriggerReason.WATCH
                await _until(lambda: bool(reasons), "the pass to end")
                assert set(reasons) == {TriggerReason.WATCH}
                assert [r.id for r in await b.rows()] == [r.id for r in await a.rows()]
                assert b.watch_state is WatchState.WATCHING

    run(go())


def test_a_session_made_elsewhere_enters_a_watching_mirror(
    live_server: Any, tmp_path: Path
) -> None:
    async def go() -> None:
        async with (
            Server(live_server.url) as server,
            device(live_server.url, tmp_path / "a") as (a, _),
        ):
            a.start_watch()  # no pass yet: the watch makes the first one for its ETag
            await _until(lambda: _held(live_server) == 1, "the watch to be held")
            inserts = Inserts(a)
            made = await server.control_session("made on another device")
            event = await inserts.of(made.id)
            assert event.report is not None and event.report.reason is TriggerReason.WATCH
            row = await a.row(made.id)
            assert row is not None and row.title == "made on another device"

    run(go())


def test_against_a_server_without_the_feature_the_engine_keeps_its_triggers(
    server_factory: Any, tmp_path: Path
) -> None:
    old_server = server_factory(index_watch=False)

    async def go() -> None:
        async with (
            Server(old_server.url) as server,
            device(old_server.url, tmp_path / "a") as (a, transport),
        ):
            await a.reconcile(TriggerReason.CONNECT)
            a.start_watch()
            await _until(lambda: a.watch_state is WatchState.UNSUPPORTED, "the fallback")
            assert transport.count("GET", INDEX) == 2  # the pass, one watch: no loop
            made = await server.create()
            report = await a.reconcile(TriggerReason.FOREGROUND)
            assert report.inserted == (made.id,)
            a.start_watch()  # asking again does not reopen a watch the server refused
            assert a.watch_state is WatchState.UNSUPPORTED
            assert transport.count("GET", INDEX) == 3

    run(go())


def test_watch_errors_back_off_with_jitter_and_the_watch_recovers(
    live_server: Any, tmp_path: Path
) -> None:
    async def go() -> None:
        async with (
            Server(live_server.url) as server,
            device(live_server.url, tmp_path / "a") as (a, transport),
        ):
            await a.reconcile(TriggerReason.CONNECT)
            transport.add(
                "GET", INDEX, "status", status=500, code="internal", times=3, when=_watching
            )
            a.start_watch()
            watch = a.watch
            assert watch is not None
            watch.backoff = Backoff(initial=0.01, maximum=0.05)
            await _until(lambda: _held(live_server) == 1, "the watch after three errors")
            assert watch.backoff.attempt == 3  # three pauses, growing
            inserts = Inserts(a)
            made = await server.create()
            await inserts.of(made.id)
            assert a.watch_state is WatchState.WATCHING

    run(go())


def test_closing_the_engine_cancels_the_open_watch(live_server: Any, tmp_path: Path) -> None:
    async def go() -> None:
        async with device(live_server.url, tmp_path / "a") as (a, _):
            await a.reconcile(TriggerReason.CONNECT)
            a.start_watch()
            await _until(lambda: _held(live_server) == 1, "the watch to be held")
            watch = a.watch
            assert watch is not None and watch.running
            await a.close()
            assert not watch.running and a.watch_state is WatchState.OFF
            await _until(lambda: _held(live_server) == 0, "the server to let the watch go")

    run(go())


def test_a_window_detaching_cancels_the_watch_without_waiting_and_close_awaits_it(
    live_server: Any, tmp_path: Path
) -> None:
    async def go() -> None:
        async with device(live_server.url, tmp_path / "a") as (a, _):
            await a.reconcile(TriggerReason.CONNECT)
            a.start_watch()
            await _until(lambda: _held(live_server) == 1, "the watch to be held")
            watch = a.watch
            assert watch is not None
            a.cancel_watch()  # synchronous, as WindowController.detach calls it
            assert not watch.running and a.watch_state is WatchState.OFF
            await a.stop_watch()  # waits for the cancelled task's end
            await _until(lambda: _held(live_server) == 0, "the server to let the watch go")
            a.start_watch()  # and it can be opened again
            await _until(lambda: _held(live_server) == 1, "the watch to be held again")

    run(go())


def test_backoff_grows_with_jitter_up_to_its_ceiling_and_resets() -> None:
    backoff = Backoff(initial=1.0, factor=2.0, maximum=8.0, rng=random.Random(7))
    delays = [backoff.next_delay() for _ in range(6)]
    ceilings = [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    for delay, ceiling in zip(delays, ceilings, strict=True):
        assert ceiling / 2 <= delay <= ceiling
    assert len(set(delays)) == len(delays)  # jittered, not in step
    backoff.reset()
    assert backoff.next_delay() <= 1.0


def test_a_server_that_ignores_if_none_match_ends_the_watch_instead_of_a_busy_loop(
    tmp_path: Path,
) -> None:
    """A unit case (httpx.MockTransport): every first page answers 200 with one fixed ETag,
    whatever If-None-Match says. The watch must give up after one look, not spin passes."""
    import httpx

    from sync.profile.profile import Profile

    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        body: dict[str, object] = {"items": [], "next_cursor": None}
        return httpx.Response(200, json=body, headers={"ETag": '"always"'})

    async def go() -> None:
        profile = Profile.load(tmp_path / "p", server="http://test", token="t", environ={})
        engine = await SyncEngine.open(profile, transport=httpx.MockTransport(handler))
        try:
            await engine.reconcile(TriggerReason.CONNECT)
            engine.start_watch()
            await _until(lambda: engine.watch_state is WatchState.UNSUPPORTED, "the fallback")
            watches = [r for r in seen if "prefer" in r.headers]
            assert len(watches) == 1
        finally:
            await engine.close()

    run(go())


def test_an_unexpected_error_in_the_watch_backs_off_and_the_watch_carries_on(
    tmp_path: Path, caplog: Any
) -> None:
    """A unit case (httpx.MockTransport): reading the stored ETag fails once with an error
    that is no SyncError (a bug, a mirror fault). The loop must not die of it while
    `watch_state` still says WATCHING (a window that believes it watches, and a server that
    holds nothing for it): it is logged, paused like any failure, and the watch goes on."""
    import httpx

    from sync.api.client import ApiClient
    from sync.reconcile.watch import IndexWatch

    watches: list[httpx.Request] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        watches.append(request)
        if len(watches) > 1:
            await asyncio.Event().wait()  # held, as a server holds it, until stop() cancels
        headers = {"ETag": '"e1"', "Preference-Applied": "wait=1"}
        return httpx.Response(304, headers=headers)

    reads = 0

    async def current_etag() -> str | None:
        nonlocal reads
        reads += 1
        if reads == 1:
            raise RuntimeError("injected: the ETag read failed")
        return '"e1"'

    async def changed() -> bool:
        return True

    async def go() -> None:
        api = ApiClient("http://test", "t", transport=httpx.MockTransport(handler))
        watch = IndexWatch(
            api, current_etag=current_etag, changed=changed, backoff=Backoff(0.01, 1.5, 0.05)
        )
        try:
            watch.start()
            await _until(lambda: len(watches) >= 2, "the watch to go on after the error")
            assert watch.running and watch.state is WatchState.WATCHING
        finally:
            await watch.stop()
            await api.aclose()

    with caplog.at_level("ERROR", logger="sync.reconcile.watch"):
        run(go())
    assert any("injected" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)
