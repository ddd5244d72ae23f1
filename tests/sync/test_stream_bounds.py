"""A hostile live stream and a server having trouble, as the client meets them.

Against `tests/sync/hostile_server.py`: a run's SSE stream whose line or frame never ends is
cut at its cap (`Bounds.sse_line_bytes`, `sse_frame_bytes`) with `ResponseTooLarge`, having
read a few MiB of the gigabyte on offer; a frame nested 100,000 deep is an
`UnexpectedResponse`, not a `RecursionError` out of the pane's task; a stream of nothing but
keep-alives is never cut. A 503 with `Retry-After` is waited out as the server asked (when
short enough), and a persistent one leaves the engine "having trouble", neither offline nor
in error, and `converge sync` says the same sentence and exits 1.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sync.api.bounds import KIB, Bounds
from sync.api.client import ApiClient
from sync.api.conversation import follow_run
from sync.engine import SyncEngine
from sync.errors import (
    ResponseTooLarge,
    ResponseTooSlow,
    SyncError,
    Unavailable,
    UnexpectedResponse,
)
from sync.events import EngineState
from sync.profile.profile import Profile
from tests.sync.helpers import run
from tests.sync.hostile_server import HostileServer, hostile
from tests.sync.test_cli_live import conn, converge
from tests.sync.test_hostile_server import KEPT, _engine, _prefill, _still_mirrored

__all__ = ["hostile"]  # the fixture, used by indirect parametrisation

#: `Unavailable`'s sentence, and what a pass (the engine's status, `converge sync`) says.
DOWN = "The server is having trouble (its database is unavailable)."
TROUBLE = "The server is having trouble (its database is unavailable); Converge will try again."
#: A stream the client stopped reading: its cap (8 MiB) plus what sockets buffer.
STOPPED_READING = 32 << 20


async def _follow(server: HostileServer, folder: Path, bounds: Bounds) -> list[str]:
    """The event types the engine's live follow of run `run_1` delivers."""
    profile = Profile.load(folder, server=server.url, token="dev-alice", environ={})
    engine = await SyncEngine.open(profile, retry_attempts=1, bounds=bounds)
    try:
        return [event.type async for event in engine.stream_run("run_1")]
    finally:
        await engine.close()


@pytest.mark.parametrize(
    ("hostile", "words"),
    [("sse_endless_line", "a line longer"), ("sse_huge_frame", "an event longer")],
    indirect=["hostile"],
)
def test_a_live_stream_that_never_ends_its_line_or_frame_is_cut_at_its_cap(
    hostile: HostileServer, words: str, tmp_path: Path
) -> None:
    async def scenario() -> None:
        with pytest.raises(ResponseTooLarge) as caught:
            await _follow(hostile, tmp_path, Bounds())
        assert caught.value.message == (
            f"The server's live event stream sent {words} than the 8 MiB this client "
            "accepts; the stream was closed."
        )

    run(scenario(), timeout=30)
    assert hostile.sent < STOPPED_READING, f"the client read {hostile.sent:,} bytes"
    assert len(hostile.requests) == 1  # a refused stream is not reconnected to


@pytest.mark.parametrize("hostile", ["sse_trickle"], indirect=True)
def test_a_live_event_trickled_a_byte_at_a_time_is_cut_by_its_deadline_and_not_resumed(
    hostile: HostileServer, tmp_path: Path
) -> None:
    async def scenario() -> None:
        with pytest.raises(ResponseTooSlow) as caught:
            await _follow(hostile, tmp_path, Bounds(sse_event_seconds=0.5))
        assert caught.value.message == (
            "The server's live event stream did not finish sending an event within 0.5 s; "
            "the stream was closed."
        )

    run(scenario(), timeout=30)
    assert len(hostile.requests) == 1


@pytest.mark.parametrize("hostile", ["sse_deep_json"], indirect=True)
def test_a_live_frame_nested_too_deep_is_refused_with_a_sentence_not_a_recursion_error(
    hostile: HostileServer, tmp_path: Path
) -> None:
    async def scenario() -> None:
        with pytest.raises(SyncError) as caught:
            await _follow(hostile, tmp_path, Bounds())
        assert type(caught.value) is UnexpectedResponse
        assert caught.value.message == "The server sent JSON nested too deeply to read."

    run(scenario(), timeout=30)


@pytest.mark.parametrize("hostile", ["sse_keepalives"], indirect=True)
def test_a_stream_of_keep_alives_is_never_cut_however_long_it_lasts(
    hostile: HostileServer, tmp_path: Path
) -> None:
    # 20,000 keep-alives are 280 KB, far past caps of 1 KiB: only an unfinished line counts.
    bounds = Bounds(sse_line_bytes=KIB, sse_frame_bytes=KIB)
    types = run(_follow(hostile, tmp_path, bounds), timeout=30)
    assert types == ["run.started", "run.completed"]
    assert hostile.sent > 100 * KIB


# -- 503 with Retry-After (CONTRACT §10.2) --------------------------------------------------


@pytest.mark.parametrize("hostile", ["unavailable_once"], indirect=True)
def test_a_503_is_retried_after_the_servers_retry_after_not_the_short_backoff(
    hostile: HostileServer,
) -> None:
    async def scenario() -> None:
        # The normal backoff here is 10-20 ms: a gap of a second is the server's Retry-After.
        async with ApiClient(
            hostile.url, "dev-alice", retry_initial_wait=0.01, retry_max_wait=0.01
        ) as api:
            page = await api.list_sessions()
        assert page is not None and page.items == []

    run(scenario(), timeout=20)
    assert hostile.requests == [("GET", "/v1/sessions")] * 2
    assert hostile.arrived[1] - hostile.arrived[0] >= 1.0


@pytest.mark.parametrize("hostile", ["unavailable_long"], indirect=True)
def test_a_503_whose_retry_after_is_past_the_bound_is_not_waited_and_says_the_server_has_trouble(
    hostile: HostileServer,
) -> None:
    async def scenario() -> None:
        async with ApiClient(hostile.url, "dev-alice", retry_attempts=3) as api:
            with pytest.raises(Unavailable) as caught:
                await api.list_sessions()
        assert caught.value.retry_after == 3600
        assert caught.value.message == DOWN

    run(scenario(), timeout=20)
    assert hostile.requests == [("GET", "/v1/sessions")]


@pytest.mark.parametrize("hostile", ["unavailable"], indirect=True)
def test_a_persistent_503_leaves_the_engine_having_trouble_not_offline_and_prunes_nothing(
    hostile: HostileServer, tmp_path: Path
) -> None:
    async def scenario() -> None:
        engine = await _engine(hostile, tmp_path, Bounds())
        try:
            report = await engine.reconcile()
            assert isinstance(report.error, Unavailable)
            assert report.pruned == ()
            assert await engine.row(KEPT.id) is not None
            assert engine.status.state is EngineState.TROUBLE
            assert engine.status.message == TROUBLE
        finally:
            await engine.close()

    run(scenario(), timeout=20)
    assert hostile.requests == [("GET", "/v1/sessions")] * 2  # retry_attempts=2, 1 s apart


@pytest.mark.parametrize("hostile", ["unavailable"], indirect=True)
def test_converge_sync_against_a_server_having_trouble_says_so_and_exits_1(
    hostile: HostileServer, tmp_path: Path
) -> None:
    _prefill(hostile, tmp_path)
    result = converge("sync", *conn(hostile.url, tmp_path), timeout=60)
    assert result.returncode == 1, result
    assert result.stderr == f"converge: sync failed: {TROUBLE} Nothing was changed.\n"
    assert _still_mirrored(hostile, tmp_path)


@pytest.mark.parametrize("hostile", ["unavailable_long"], indirect=True)
def test_a_live_follow_refused_with_a_long_retry_after_ends_with_the_trouble_sentence(
    hostile: HostileServer, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with ApiClient(hostile.url, "dev-alice") as api:
            with pytest.raises(Unavailable) as caught:
                async for _ in follow_run(api, "run_1", reconnect_delay=0.01):
                    pass
        assert caught.value.message == DOWN

    run(scenario(), timeout=20)
    assert hostile.requests == [("GET", "/v1/runs/run_1/events")]
