"""Load bounds: one database reader per run for all its streams, a per-principal stream cap,
recall through the word index (and the purge removing it)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import httpx

from server_stub.state import AppState
from tests.conftest import LiveServer
from tests.server.conftest import (
    new_session,
    residue,
    run_events,
    run_to_end,
    start_run,
    wait_terminal,
    wait_until,
)

SSE = {"Accept": "text/event-stream"}


def _state(server: LiveServer) -> AppState:
    state = server.thread.server.config.app.state.converge
    assert isinstance(state, AppState)
    return state


@contextlib.contextmanager
def _open_stream(client: httpx.Client, run_id: str) -> Iterator[httpx.Response]:
    with client.stream("GET", f"/v1/runs/{run_id}/events", headers=SSE) as response:
        yield response


def test_many_streams_of_one_run_share_one_reader(
    start_server: Callable[..., LiveServer],
) -> None:
    # No poll while the test runs: every read is a wake-up by one of the run's changes.
    server = start_server(feed_poll_seconds=600)
    alice = server.client("dev-alice")
    sid = new_session(alice)
    run = start_run(alice, sid, "/wait 30")
    state = _state(server)
    with contextlib.ExitStack() as stack:
        streams = [stack.enter_context(_open_stream(alice, run["id"])) for _ in range(12)]
        # Each stream has begun its replay, so all twelve are on the one live feed before
        # the run can end (a stream joining after the end starts a feed of its own).
        lines = [s.iter_lines() for s in streams]
        for stream_lines in lines:
            assert next(stream_lines).startswith("id: ")
        assert state.feeds.runs_followed() == 1
        assert alice.post(f"/v1/runs/{run['id']}/cancel").status_code == 202
        bodies = ["\n".join(stream_lines) for stream_lines in lines]
    first = bodies[0]
    assert "event: run.cancelled" in first
    assert all(body.count("event: ") == first.count("event: ") for body in bodies)
    # One feed for the run: it reads once per change of the run (its few events and
    # status changes), whatever the number of streams; twelve streams each reading once
    # per change made at least twelve reads.
    assert len(run_events(alice, run["id"])) == 3
    assert state.feeds.reads < len(streams)


def test_a_client_leaving_stops_the_runs_reader_and_frees_its_slot(
    live_server: LiveServer,
) -> None:
    alice = live_server.client("dev-alice")
    run = start_run(alice, new_session(alice), "/wait 30")
    state = _state(live_server)
    with _open_stream(alice, run["id"]) as stream:
        lines = stream.iter_lines()  # kept: dropping the iterator closes the connection
        assert next(lines).startswith("id: ")  # the replay has begun: the feed is live
        assert state.feeds.runs_followed() == 1
        assert state.feeds.open_streams("acme", "alice") == 1
    wait_until(lambda: state.feeds.runs_followed() == 0)
    wait_until(lambda: state.feeds.open_streams("acme", "alice") == 0)
    assert alice.post(f"/v1/runs/{run['id']}/cancel").status_code == 202
    wait_terminal(alice, run["id"])


def test_stream_cap_per_principal_answers_503_in_the_envelope(
    start_server: Callable[..., LiveServer],
) -> None:
    server = start_server(max_streams_per_principal=2)
    alice, bob = server.client("dev-alice"), server.client("dev-bob")
    sid = new_session(alice)
    run = start_run(alice, sid, "/wait 30")
    with _open_stream(alice, run["id"]) as one, _open_stream(alice, run["id"]) as two:
        assert one.status_code == two.status_code == 200
        # (a plain client: the fixture's clients treat any 5xx as a server failure)
        refused = httpx.get(
            f"{server.url}/v1/runs/{run['id']}/events",
            headers={**SSE, "Authorization": "Bearer dev-alice"},
        )
        assert refused.status_code == 503
        assert refused.headers["retry-after"]
        error = refused.json()["error"]
        assert error["code"] == "unavailable"
        assert error["details"] == {"reason": "too_many_streams", "limit": 2}
        # JSON reads are not streams, and another principal has its own allowance.
        assert alice.get(f"/v1/runs/{run['id']}/events").status_code == 200
        bob_sid = new_session(bob)
        bob_run = run_to_end(bob, bob_sid)
        assert bob.get(f"/v1/runs/{bob_run['id']}/events", headers=SSE).status_code == 200
    # Closing a stream gives its slot back.
    with _open_stream(alice, run["id"]) as again:
        assert again.status_code == 200
    assert alice.post(f"/v1/runs/{run['id']}/cancel").status_code == 202
    wait_terminal(alice, run["id"])


def test_recall_matches_through_the_word_index_and_the_purge_removes_it(
    live_server: LiveServer,
) -> None:
    alice = live_server.client("dev-alice")
    source = new_session(alice)
    run_to_end(alice, source, "/remember Otters hold hands while sleeping")
    other = new_session(alice)
    run = run_to_end(alice, other, "do OTTERS sleep?")
    state = _state(live_server)
    from sqlalchemy import func, select

    from server_stub.db.models import MemoryWordRow, RecallTraceItemRow, RecallTraceRow

    with state.db.read() as s:
        recalled = s.scalar(
            select(func.count())
            .select_from(RecallTraceItemRow)
            .join(RecallTraceRow, RecallTraceRow.id == RecallTraceItemRow.trace_id)
            .where(RecallTraceRow.run_id == run["id"])
        )
        words = s.scalar(select(func.count()).select_from(MemoryWordRow))
    assert recalled == 1
    assert words == 5  # otters, hold, hands, while, sleeping
    assert residue(live_server, source)["rows"]["memory_words"] == 5
    assert alice.delete(f"/v1/sessions/{source}").status_code == 204
    assert residue(live_server, source)["rows"]["memory_words"] == 0


def test_a_large_memory_is_indexed_in_batches_and_recalled_by_its_last_word(
    live_server: LiveServer,
) -> None:
    from server_stub.domain.recall import BATCH

    alice = live_server.client("dev-alice")
    source = new_session(alice)
    words = [f"word{i:05d}" for i in range(BATCH + 700)]  # sorted: the last is in batch 2
    run_to_end(alice, source, "/remember " + " ".join(words))
    assert residue(live_server, source)["rows"]["memory_words"] == len(words)
    other = new_session(alice)
    run = run_to_end(alice, other, f"what about {words[-1]}?")
    state = _state(live_server)
    from sqlalchemy import func, select

    from server_stub.db.models import RecallTraceItemRow, RecallTraceRow

    with state.db.read() as s:
        recalled = s.scalar(
            select(func.count())
            .select_from(RecallTraceItemRow)
            .join(RecallTraceRow, RecallTraceRow.id == RecallTraceItemRow.trace_id)
            .where(RecallTraceRow.run_id == run["id"])
        )
    assert recalled == 1
    assert alice.delete(f"/v1/sessions/{source}").status_code == 204
    assert residue(live_server, source)["rows"]["memory_words"] == 0
