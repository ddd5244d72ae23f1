"""Server-first delete against a REAL stub server (CONTRACT §7, ADR-0050 §3–§4, §8)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sync.delete.outcome import DeleteStatus
from sync.errors import NotFound
from tests.sync.helpers import Server, device, run


def test_delete_removes_the_row_only_after_the_server_answers_204(
    live_server: Any, tmp_path: Path
) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            victim = await server.create("delete me")
            keep = await server.create("keep me")
            async with device(live_server.url, tmp_path / "a") as (engine, transport):
                await engine.reconcile()
                outcome = await engine.delete(victim.id)
                assert outcome.status is DeleteStatus.DELETED and outcome.removed
                assert [r.id for r in await engine.rows()] == [keep.id]
                assert transport.count("DELETE", f"/v1/sessions/{victim.id}") == 1
                assert not await server.exists(victim.id)
                # a repeat is idempotent (tombstone 204)
                again = await engine.delete(victim.id)
                assert again.status is DeleteStatus.DELETED

    run(go())


def test_a_204_lost_in_transit_is_not_confirmed_keeps_the_row_and_a_retry_converges(
    live_server: Any, tmp_path: Path
) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            victim = await server.create("lost answer")
            async with (
                device(live_server.url, tmp_path / "a") as (a, transport),
                device(live_server.url, tmp_path / "b") as (b, _),
            ):
                await a.reconcile()
                await b.reconcile()
                transport.add("DELETE", f"/v1/sessions/{victim.id}", "lose_response")
                lost = await a.delete(victim.id)
                # The request reached the server: not "nothing was deleted" (CONTRACT §9.2).
                assert lost.status is DeleteStatus.UNCONFIRMED and not lost.removed
                assert "not confirmed" in lost.message
                assert victim.id in {r.id for r in await a.rows()}
                # the server did delete it: the owner's point read says so
                try:
                    await server.api.get_session(victim.id)
                    raise AssertionError("expected 404")
                except NotFound as exc:
                    assert exc.reason == "deleted"
                retry = await a.delete(victim.id)
                assert retry.status is DeleteStatus.DELETED  # 204 again, thanks to the tombstone
                assert victim.id not in {r.id for r in await a.rows()}
                report = await b.reconcile()
                assert report.pruned == (victim.id,)
                assert [r.id for r in await a.rows()] == [r.id for r in await b.rows()]

    run(go())


async def active_session(server: Server, seconds: int = 20) -> tuple[str, str]:
    view = await server.create()
    run_id = await server.start(view.id, f"/wait {seconds}")
    return view.id, run_id


def test_409_keeps_the_row_names_the_run_and_never_cancels_it(
    live_server: Any, tmp_path: Path
) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            sid, run_id = await active_session(server)
            async with device(live_server.url, tmp_path / "a") as (engine, transport):
                await engine.reconcile()
                outcome = await engine.delete(sid)
                assert outcome.status is DeleteStatus.ACTIVE_RUN and not outcome.removed
                assert outcome.active_run_id == run_id
                assert run_id in outcome.message
                row = await engine.row(sid)
                assert row is not None and row.active_run_id == run_id
                assert transport.count("POST", r"/v1/runs/.*/cancel") == 0
                state = await server.api.get_run(run_id)
                assert not state.is_terminal and not state.cancel_requested
                # the separate, explicit action: stop the run, then delete
                stopped = await engine.stop_run_and_delete(sid, timeout=15)
                assert stopped.status is DeleteStatus.DELETED, stopped.message
                assert await engine.row(sid) is None
                assert not await server.exists(sid)

    run(go())


def test_bulk_delete_reports_one_outcome_per_session(live_server: Any, tmp_path: Path) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            ok = (await server.create("fine")).id
            busy, busy_run = await active_session(server)
            failing = (await server.create("server trouble")).id
            never = "ses_neverexisted0000000"
            async with device(live_server.url, tmp_path / "a") as (engine, transport):
                await engine.reconcile()
                transport.add("DELETE", f"/v1/sessions/{failing}", "status", status=503, times=None)
                outcomes = await engine.delete_many([ok, busy, failing, never])
                assert [o.session_id for o in outcomes] == [ok, busy, failing, never]
                assert [o.status for o in outcomes] == [
                    DeleteStatus.DELETED,
                    DeleteStatus.ACTIVE_RUN,
                    DeleteStatus.FAILED,
                    DeleteStatus.ALREADY_GONE,
                ]
                assert outcomes[1].active_run_id == busy_run
                remaining = {r.id for r in await engine.rows()}
                assert remaining == {busy, failing}
                assert await server.exists(failing) and await server.exists(busy)
            await server.api.cancel_run(busy_run)

    run(go())


def test_delete_removes_cached_artifact_bytes(live_server: Any, tmp_path: Path) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            view = await server.create("/artifact notes.txt hello bytes")
            other = await server.create("/artifact keep.txt other bytes")
            async with device(live_server.url, tmp_path / "a") as (engine, _):
                await engine.reconcile()
                paths = {}
                for sid in (view.id, other.id):
                    events = await engine.transcript(sid)
                    art = next(e for e in events if e.type == "artifact.created")
                    paths[sid] = await engine.artifact_file(art.data["artifact_id"])
                assert paths[view.id].read_bytes() == b"hello bytes"
                assert paths[view.id].parent == engine.profile.cache_dir
                outcome = await engine.delete(view.id)
                assert outcome.removed
                assert not paths[view.id].exists()
                assert paths[other.id].read_bytes() == b"other bytes"

    run(go())


def test_stop_run_and_delete_waits_for_the_run_to_end(live_server: Any, tmp_path: Path) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            # A run that would outlast the delete's own 15 s timeout many times over: a
            # DELETED outcome shows the cancel ended it (waiting it out would time out).
            sid, run_id = await active_session(server, seconds=3600)
            async with device(live_server.url, tmp_path / "a") as (engine, transport):
                await engine.reconcile()
                outcome = await engine.stop_run_and_delete(sid, timeout=15)
                assert outcome.status is DeleteStatus.DELETED
                order = [(m, p) for m, p, _ in transport.log if m in {"POST", "DELETE"}]
                assert order == [
                    ("POST", f"/v1/runs/{run_id}/cancel"),
                    ("DELETE", f"/v1/sessions/{sid}"),
                ]

    run(go())
