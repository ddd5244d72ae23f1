"""The client trusts no server (CONTRACT §10.1): against each misbehaviour of
`tests/sync/hostile_server.py`, the engine and the command line end with a clear error, in
bounded time (the test's own timeout), bounded memory (the gigabyte modes: the server counts
what it sent) and without pruning a pre-filled mirror.

Every misbehaviour here hung, crashed, read a gigabyte or pruned on the code before the
bounds (figures in `docs/sync.md`, "Bounds"), except `huge_headers`, which h11's own header
limit already turned into a `NetworkError`; it stays as a guard.
"""

from __future__ import annotations

import asyncio
import json
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from sync.api.bounds import Bounds
from sync.api.client import ApiClient
from sync.engine import SyncEngine
from sync.errors import (
    BadId,
    NetworkError,
    PassTooSlow,
    RateLimited,
    ResponseTooLarge,
    ResponseTooSlow,
    SyncError,
    UnexpectedResponse,
    WalkOutOfBounds,
)
from sync.mirror.store import Mirror
from sync.profile.profile import Profile
from sync.wire.models import Event, SessionView
from tests.sync.helpers import run
from tests.sync.hostile_server import ITEM_TIME, HostileServer, hostile
from tests.sync.test_cli_live import REPO, conn, converge

__all__ = ["hostile"]  # the fixture, used by indirect parametrisation

KEPT = SessionView("ses_prefilled", "kept", ITEM_TIME, ITEM_TIME, None, None)
#: A body the client stopped reading: its cap (4 MiB) plus what sockets buffer on the way.
STOPPED_READING = 32 << 20


async def _engine(server: HostileServer, folder: Path, bounds: Bounds) -> SyncEngine:
    """An engine for the hostile server whose mirror already holds `KEPT`."""
    profile = Profile.load(folder, server=server.url, token="dev-alice", environ={})
    engine = await SyncEngine.open(profile, retry_attempts=2, bounds=bounds)
    await asyncio.to_thread(engine.mirror.apply, [KEPT])
    return engine


def _prefill(server: HostileServer, folder: Path) -> None:
    async def fill() -> None:
        engine = await _engine(server, folder, Bounds())
        await engine.close()

    run(fill())


def _still_mirrored(server: HostileServer, folder: Path) -> bool:
    profile = Profile.load(folder, server=server.url, token="dev-alice", environ={})
    mirror = Mirror.open(profile.mirror_path, create=False)
    try:
        return mirror.get(KEPT.id) is not None
    finally:
        mirror.close()


@pytest.mark.parametrize(
    ("hostile", "bounds", "expected"),
    [
        ("endless_index", Bounds(walk_pages=40), WalkOutOfBounds),
        ("endless_index", Bounds(pass_seconds=1.0), PassTooSlow),
        ("repeating_cursor", Bounds(), WalkOutOfBounds),
        ("stuck_cursor", Bounds(), WalkOutOfBounds),
        ("content_length_lie", Bounds(request_seconds=2.0), ResponseTooSlow),
        ("declared_gigabyte", Bounds(), ResponseTooLarge),
        ("chunked_gigabyte", Bounds(), ResponseTooLarge),
        ("deep_json", Bounds(), UnexpectedResponse),
        ("too_many_items", Bounds(), UnexpectedResponse),
        ("huge_headers", Bounds(), NetworkError),
        ("rate_limited", Bounds(), RateLimited),
    ],
    indirect=["hostile"],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_a_hostile_index_ends_the_pass_with_a_clear_error_and_prunes_nothing(
    hostile: HostileServer, bounds: Bounds, expected: type[SyncError], tmp_path: Path
) -> None:
    async def scenario() -> None:
        engine = await _engine(hostile, tmp_path, bounds)
        try:
            report = await engine.reconcile()
            assert isinstance(report.error, expected), repr(report.error)
            assert report.error.message.endswith("."), report.error.message
            assert "Traceback" not in report.error.message
            assert report.pruned == ()
            assert await engine.row(KEPT.id) is not None
            assert engine.status.message == report.error.message
        finally:
            await engine.close()

    run(scenario(), timeout=30)
    assert hostile.sent < STOPPED_READING, f"the client read {hostile.sent:,} bytes"


@pytest.mark.parametrize("hostile", ["rate_limited"], indirect=True)
def test_a_long_retry_after_is_not_waited_out_and_says_when_to_try_again(
    hostile: HostileServer, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with ApiClient(hostile.url, "dev-alice") as api:
            with pytest.raises(RateLimited) as caught:
                await api.list_sessions()
        assert caught.value.retry_after == 3600
        assert caught.value.message == "The server is limiting requests; try again in 3600 s."

    run(scenario(), timeout=20)
    assert hostile.requests == [("GET", "/v1/sessions")]


@pytest.mark.parametrize("hostile", ["rate_limited_once"], indirect=True)
def test_a_short_retry_after_is_waited_out_and_the_pass_concludes(
    hostile: HostileServer, tmp_path: Path
) -> None:
    async def scenario() -> None:
        engine = await _engine(hostile, tmp_path, Bounds())
        try:
            report = await engine.reconcile()
        finally:
            await engine.close()
        assert report.ok, report.problem
        assert report.pruned == (KEPT.id,)  # the server's own 404 after a whole walk

    run(scenario(), timeout=20)
    assert hostile.requests[:2] == [("GET", "/v1/sessions")] * 2


@pytest.mark.parametrize("hostile", ["rate_limited_once"], indirect=True)
def test_a_retry_after_longer_than_the_pass_has_left_ends_the_pass_at_once(
    hostile: HostileServer, tmp_path: Path
) -> None:
    async def scenario() -> None:
        engine = await _engine(hostile, tmp_path, Bounds(pass_seconds=0.8))
        try:
            report = await engine.reconcile()
        finally:
            await engine.close()
        assert isinstance(report.error, RateLimited)
        assert report.pruned == ()

    run(scenario(), timeout=20)
    assert hostile.requests == [("GET", "/v1/sessions")]


@pytest.mark.parametrize(
    ("hostile", "expected"),
    [("events_stuck", WalkOutOfBounds), ("events_too_many", UnexpectedResponse)],
    indirect=["hostile"],
)
def test_a_transcript_that_would_not_end_is_refused(
    hostile: HostileServer, expected: type[SyncError], tmp_path: Path
) -> None:
    async def scenario() -> None:
        engine = await _engine(hostile, tmp_path, Bounds())
        try:
            with pytest.raises(expected) as caught:
                await engine.transcript(KEPT.id)  # what Export and the pane read
        finally:
            await engine.close()
        assert caught.value.message.endswith(".")

    run(scenario(), timeout=20)
    assert len(hostile.requests) <= 2


@pytest.mark.parametrize("hostile", ["artifact_larger_than_said"], indirect=True)
def test_artifact_content_longer_than_its_metadata_size_is_not_read(
    hostile: HostileServer, tmp_path: Path
) -> None:
    async def scenario() -> None:
        engine = await _engine(hostile, tmp_path, Bounds())
        try:
            with pytest.raises(ResponseTooLarge):
                await engine.artifact_file("art_1")
        finally:
            await engine.close()
        assert not any(engine.profile.cache_dir.iterdir())

    run(scenario(), timeout=20)


def test_event_data_nested_past_the_depth_bound_is_refused_without_recursion() -> None:
    data: object = "leaf"
    for _ in range(100_000):
        data = {"d": data}
    raw = {
        "session_id": "ses_1",
        "run_id": None,
        "sequence": 1,
        "type": "tool.invocation",
        "created_at": ITEM_TIME,
        "data": data,
    }
    with pytest.raises(UnexpectedResponse):
        Event.from_json(raw)


@pytest.mark.parametrize("hostile", ["events_stuck"], indirect=True)
@pytest.mark.parametrize("bad", ["", ".", ".."])
def test_an_id_that_is_a_dot_segment_is_refused_before_any_request(
    hostile: HostileServer, bad: str
) -> None:
    async def scenario() -> None:
        async with ApiClient(hostile.url, "dev-alice") as api:
            for call in (api.delete_session, api.get_session, api.session_events):
                with pytest.raises(BadId):
                    await call(bad)

    run(scenario(), timeout=20)
    assert hostile.requests == []


# -- the command line -----------------------------------------------------------------------


def _cli(server: HostileServer, folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    common = conn(server.url, folder)
    result: subprocess.CompletedProcess[str] = converge(*args, *common, timeout=60)
    return result


@pytest.mark.parametrize(
    "hostile",
    ["repeating_cursor", "deep_json", "chunked_gigabyte", "too_many_items", "rate_limited"],
    indirect=True,
)
def test_converge_sync_against_a_hostile_server_exits_1_in_one_sentence_and_keeps_the_mirror(
    hostile: HostileServer, tmp_path: Path
) -> None:
    _prefill(hostile, tmp_path)
    result = _cli(hostile, tmp_path, "sync")
    assert result.returncode == 1, result
    assert "Traceback" not in result.stderr
    # A looping cursor is seen after pages were written: they stay, and the sentence says
    # so (decision 0095); the others stop before any page is written.
    said = "stopped" if hostile.mode == "repeating_cursor" else "failed"
    assert result.stderr.startswith(f"converge: sync {said}: The server"), result.stderr
    assert result.stderr.count("\n") == 1
    assert _still_mirrored(hostile, tmp_path)
    assert hostile.sent < STOPPED_READING


@pytest.mark.parametrize("hostile", ["events_stuck"], indirect=True)
@pytest.mark.parametrize("bad", [".", ".."])
def test_converge_delete_of_a_dot_segment_sends_no_request(
    hostile: HostileServer, bad: str, tmp_path: Path
) -> None:
    result = _cli(hostile, tmp_path, "delete", bad, "--yes")
    assert result.returncode == 1, result
    assert "not a valid id" in result.stderr
    assert hostile.requests == []


@pytest.mark.parametrize("hostile", ["repeating_cursor"], indirect=True)
def test_converge_watch_against_a_looping_index_reports_failed_passes_and_stops_cleanly(
    hostile: HostileServer, tmp_path: Path
) -> None:
    _prefill(hostile, tmp_path)
    common = conn(hostile.url, tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.main", "watch", *common, "--json", "--interval", "0"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    stdout, stderr_pipe = proc.stdout, proc.stderr
    assert stdout is not None and stderr_pipe is not None

    def read_lines() -> None:
        for line in stdout:
            lines.put(line)

    reader = threading.Thread(target=read_lines, daemon=True)
    reader.start()
    try:
        reports = [json.loads(lines.get(timeout=30)) for _ in range(2)]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        reader.join(10)
    stderr = stderr_pipe.read()
    stderr_pipe.close()
    stdout.close()
    assert proc.returncode == 0, stderr
    for report in reports:
        assert report["ok"] is False
        assert "gave before" in report["error"]
        assert report["pruned"] == []
    assert "Traceback" not in stderr
    assert _still_mirrored(hostile, tmp_path)


@pytest.mark.parametrize("hostile", ["rate_limited"], indirect=True)
def test_converge_delete_refused_by_a_rate_limit_says_when_to_try_again_and_deletes_nothing(
    hostile: HostileServer, tmp_path: Path
) -> None:
    _prefill(hostile, tmp_path)
    result = _cli(hostile, tmp_path, "delete", KEPT.id, "--yes")
    assert result.returncode == 1, result
    assert "try again in 3600 s" in result.stderr
    assert "not confirmed" not in result.stderr  # a 429 is a refusal: nothing happened
    assert hostile.requests == [("DELETE", f"/v1/sessions/{KEPT.id}")]
    assert _still_mirrored(hostile, tmp_path)


@pytest.mark.parametrize("hostile", ["lone_surrogates"], indirect=True)
def test_text_holding_half_a_surrogate_pair_is_mirrored_with_a_replacement_character(
    hostile: HostileServer, tmp_path: Path
) -> None:
    """JSON can spell half of a UTF-16 pair (`"\\ud83d"`), which no UTF-8 text (nor the
    mirror) can hold: the half is shown as U+FFFD, as undecodable bytes are, and the pass
    and the transcript's fetch go on (they crashed on every sync before)."""
    result = _cli(hostile, tmp_path, "sync")
    assert (result.returncode, result.stderr) == (0, ""), result
    found = _cli(hostile, tmp_path, "search", "pair")
    assert found.returncode == 0, found
    assert "cut \ufffd\n" in found.stdout and "half \ufffd pair" in found.stdout
