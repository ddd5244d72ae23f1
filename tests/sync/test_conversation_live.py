"""Opening conversations against a REAL stub server: event pages, live runs, artifact bytes."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from sync.api.conversation import transcript
from sync.errors import IntegrityError, MessageTooLong
from sync.wire.models import Event
from tests.sync.helpers import Server, device, run


def test_transcript_reads_every_page_in_sequence_order(live_server: Any, tmp_path: Path) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            view = await server.create("first")
            for text in ("second", "third"):
                await server.wait_run(await server.start(view.id, text))
            events = await transcript(server.api, view.id, page_limit=4)
            assert [e.sequence for e in events] == list(range(1, len(events) + 1))
            assert len(events) > 8  # several pages of 4
            assert [e.data["content"][0]["text"] for e in events if e.type == "message.user"] == [
                "first",
                "second",
                "third",
            ]
            async with device(live_server.url, tmp_path / "a") as (engine, _):
                assert await engine.transcript(view.id) == events

    run(go())


def test_send_message_starts_a_run_in_a_new_session_and_mirrors_it(
    live_server: Any, tmp_path: Path
) -> None:
    async def go() -> None:
        async with device(live_server.url, tmp_path / "a") as (engine, _):
            view, run_view = await engine.send_message(None, "  Plan the   trip  ")
            assert run_view.session_id == view.id
            assert view.title == "Plan the trip"
            events = [e async for e in engine.stream_run(run_view.id)]
            assert events[-1].type == "run.completed"
            row = await engine.row(view.id)
            assert row is not None and row.title == "Plan the trip"
            assert row.active_run_id is None and row.last_run_id == run_view.id

    run(go())


def test_a_message_longer_than_the_server_takes_is_refused_before_any_request(
    live_server: Any, tmp_path: Path
) -> None:
    """Refused by the server, it would have left an empty conversation behind (the session is
    created first); refused here, nothing is sent and the words say why."""

    async def go() -> None:
        async with device(live_server.url, tmp_path / "a") as (engine, transport):
            sent = len(transport.requests)
            with pytest.raises(MessageTooLong) as refused:
                await engine.send_message(None, "x" * 100_001)
            assert "100,001 characters" in refused.value.message
            assert "100,000" in refused.value.message
            assert len(transport.requests) == sent
            view, _run = await engine.send_message(None, "é" * 100_000)  # the bound itself
            assert view.title == "é" * 64

    run(go())


def test_a_dropped_stream_resumes_with_last_event_id_without_gaps_or_repeats(
    live_server: Any, tmp_path: Path
) -> None:
    async def go() -> None:
        async with device(live_server.url, tmp_path / "a") as (engine, transport):
            view, run_view = await engine.send_message(None, "/wait 2")
            path = f"/v1/runs/{run_view.id}/events"
            transport.add("GET", path, "cut_stream", frames=2, times=1)
            seen: list[Event] = [e async for e in engine.stream_run(run_view.id)]
            sequences = [e.sequence for e in seen]
            assert sequences == sorted(set(sequences))
            assert sequences == list(range(sequences[0], sequences[0] + len(sequences)))
            assert seen[0].type == "run.started" and seen[-1].type == "run.completed"
            streams = [r for r in transport.requests if r.url.path == path]
            assert len(streams) >= 2
            assert streams[0].headers.get("Last-Event-ID") is None
            resumed_from = int(streams[1].headers["Last-Event-ID"])
            assert resumed_from >= seen[0].sequence
            full = await engine.transcript(view.id)
            assert [e.sequence for e in full if e.run_id == run_view.id] == sequences

    run(go())


def test_stream_after_a_sequence_replays_only_what_follows(
    live_server: Any, tmp_path: Path
) -> None:
    async def go() -> None:
        async with device(live_server.url, tmp_path / "a") as (engine, _):
            _view, run_view = await engine.send_message(None, "hello")
            everything = [e async for e in engine.stream_run(run_view.id)]
            tail = [e async for e in engine.stream_run(run_view.id, after=everything[1].sequence)]
            assert tail == everything[2:]

    run(go())


def test_artifact_bytes_are_cached_and_verified(live_server: Any, tmp_path: Path) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            view = await server.create("/artifact report.txt the quarterly numbers")
            async with device(live_server.url, tmp_path / "a") as (engine, transport):
                events = await engine.transcript(view.id)
                art_id = next(e for e in events if e.type == "artifact.created").data["artifact_id"]
                path = await engine.artifact_file(art_id)
                assert path.read_bytes() == b"the quarterly numbers"
                transport.clear()
                assert await engine.artifact_file(art_id) == path
                assert transport.log == []  # served from the cache
                # bytes whose checksum does not match are refused and never kept
                path.write_bytes(b"tampered")
                meta = await engine.api.get_artifact(art_id)
                assert meta.sha256 == hashlib.sha256(b"the quarterly numbers").hexdigest()
                fresh = await engine.artifact_file(art_id)  # re-downloaded
                assert fresh.read_bytes() == b"the quarterly numbers"

                # a body that is not the artifact's bytes (the injected envelope, status 200)
                transport.add(
                    "GET", f"/v1/artifacts/{art_id}/content", "status", status=200, code="x"
                )
                fresh.unlink()
                with pytest.raises(IntegrityError):
                    await engine.artifact_file(art_id)
                assert not any(p.name.endswith(".bin") for p in engine.profile.cache_dir.iterdir())

    run(go())


def test_an_approval_is_decided_through_the_engine_while_following_the_run(
    live_server: Any, tmp_path: Path
) -> None:
    async def go() -> None:
        async with device(live_server.url, tmp_path / "a") as (engine, _):
            _view, run_view = await engine.send_message(None, "/approve shell")
            types: list[str] = []
            async for event in engine.stream_run(run_view.id):
                types.append(event.type)
                if event.type == "approval.requested":
                    approval = await engine.decide_approval(event.data["approval_id"], "approve")
                    assert approval.status == "approved"
            assert "tool.invocation" in types and types[-1] == "run.completed"
            assert (await engine.get_run(run_view.id)).status == "completed"

    run(go())


def test_cancelling_a_run_through_the_engine_ends_it(live_server: Any, tmp_path: Path) -> None:
    async def go() -> None:
        async with device(live_server.url, tmp_path / "a") as (engine, _):
            view, run_view = await engine.send_message(None, "/wait 20")
            cancelled = await engine.cancel_run(run_view.id)
            assert cancelled.cancel_requested
            last = [e async for e in engine.stream_run(run_view.id)][-1]
            assert last.type == "run.cancelled"
            row = await engine.row(view.id)
            assert row is not None and row.active_run_id is None
            assert row.last_run_id == run_view.id

    run(go())
