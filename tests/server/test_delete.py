"""Route 4: ADR-0050 §3–§7 deletion: idempotence, 409, atomicity, purge, outbox, residue."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import event

from server_stub.db.engine import Database, LockedNow
from server_stub.db.models import Base
from server_stub.domain import purge
from tests.conftest import LiveServer, ServerFactory
from tests.server.conftest import (
    BOTH_STORES,
    message,
    new_session,
    residue,
    run_events,
    run_to_end,
    start_run,
    wait_status,
    wait_terminal,
)
from tests.server.test_equal_cost_404s import QUIET, _Statements
from tests.server.test_events_route_rows import _Loads
from tests.server.test_index_floor import _statements
from tests.server.test_metrics import scrape, value


def _assert_clean(server: LiveServer, session_id: str) -> dict[str, Any]:
    audit = residue(server, session_id)
    dirty = {table: n for table, n in audit["rows"].items() if n}
    assert not dirty, f"rows still refer to the deleted session: {dirty}"
    assert audit["objects"] == 0
    assert audit["outbox"] == 0
    assert audit["tombstone"] is True
    assert sorted(audit["tombstone_columns"]) == sorted(
        ["session_id", "tenant", "principal", "deleted_at"]
    )
    return audit


def test_delete_is_204_then_204_again_and_404_for_others(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    run_to_end(alice, sid)
    first = alice.delete(f"/v1/sessions/{sid}")
    assert first.status_code == 204 and first.content == b""
    again = alice.delete(f"/v1/sessions/{sid}")
    assert again.status_code == 204 and again.content == b""
    # The same principal through another token with the scope: 204 too.
    assert live_server.client("dev-alice").delete(f"/v1/sessions/{sid}").status_code == 204
    for token in ("dev-bob", "dev-carol"):
        other = live_server.client(token).delete(f"/v1/sessions/{sid}")
        assert other.status_code == 404
        assert "details" not in other.json()["error"]
    assert [i["id"] for i in alice.get("/v1/sessions").json()["items"]] == []
    _assert_clean(live_server, sid)


def test_delete_of_someone_elses_session_deletes_nothing(live_server: LiveServer) -> None:
    bob = live_server.client("dev-bob")
    sid = new_session(bob)
    run_to_end(bob, sid)
    assert live_server.client("dev-alice").delete(f"/v1/sessions/{sid}").status_code == 404
    assert live_server.client("dev-carol").delete(f"/v1/sessions/{sid}").status_code == 404
    assert bob.get(f"/v1/sessions/{sid}").status_code == 200
    assert residue(live_server, sid)["tombstone"] is False


def test_active_run_blocks_delete_with_409_and_nothing_is_deleted(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    run = start_run(alice, sid, "/approve rm")
    wait_status(alice, run["id"], "waiting_for_approval")
    response = alice.delete(f"/v1/sessions/{sid}")
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "invalid_state"
    assert error["details"] == {"reason": "active_run_exists", "active_run_id": run["id"]}
    assert alice.get(f"/v1/sessions/{sid}").status_code == 200
    assert len(run_events(alice, run["id"])) >= 3
    assert residue(live_server, sid)["tombstone"] is False
    # A delete never cancels the run by itself.
    assert alice.get(f"/v1/runs/{run['id']}").json()["cancel_requested"] is False
    alice.post(f"/v1/runs/{run['id']}/cancel")
    wait_terminal(alice, run["id"])
    assert alice.delete(f"/v1/sessions/{sid}").status_code == 204


def _full_session(alice: httpx.Client) -> tuple[str, dict[str, Any]]:
    """A session with artifacts, memories, a skill, an approval, a rejection, a failure."""
    sid = new_session(alice)
    run_to_end(alice, sid, "/artifact plan.txt the plan")
    run_to_end(alice, sid, "/artifact other.txt more text")
    run_to_end(alice, sid, "/remember alice likes sailing boats")
    skill_run = run_to_end(alice, sid, "/skill sailing")
    approve = start_run(alice, sid, "/approve weather")
    wait_status(alice, approve["id"], "waiting_for_approval")
    events = alice.get(f"/v1/sessions/{sid}/events", params={"limit": 1000}).json()["items"]
    approval_id = next(
        e["data"]["approval_id"] for e in events if e["type"] == "approval.requested"
    )
    assert (
        alice.post(
            f"/v1/approvals/{approval_id}/decision", json={"decision": "approve"}
        ).status_code
        == 200
    )
    wait_terminal(alice, approve["id"])
    run_to_end(alice, sid, "/fail")
    run_to_end(alice, sid, "tell me about sailing")  # recalls the memory
    events = alice.get(f"/v1/sessions/{sid}/events", params={"limit": 1000}).json()["items"]
    memory_id = next(e["data"]["memory_id"] for e in events if e["type"] == "memory.formed")
    skill_id = next(e["data"]["skill_id"] for e in events if e["type"] == "skill.published")
    artifacts = [e["data"]["artifact_id"] for e in events if e["type"] == "artifact.created"]
    rejection = alice.post(
        f"/v1/memories/{memory_id}/rejection", json={"session_id": sid, "reason": "no"}
    )
    assert rejection.status_code == 201
    return sid, {
        "memory_id": memory_id,
        "skill_id": skill_id,
        "skill_run": skill_run["id"],
        "artifacts": artifacts,
    }


@BOTH_STORES  # the bytes' part of deletion, on the folder and on SeaweedFS
def test_delete_purges_the_whole_graph_and_leaves_zero_residue(live_server: LiveServer) -> None:
    alice = live_server.client()
    control = live_server.control()
    sid, ids = _full_session(alice)
    assert control.post("/_stub/maintenance").status_code == 200  # consolidation records
    before = residue(live_server, sid)
    for table in (
        "sessions",
        "runs",
        "events",
        "checkpoints",
        "projections",
        "approvals",
        "tool_invocations",
        "artifacts",
        "recall_traces",
        "memories",
        "memory_words",
        "memory_rejections",
        "consolidation_records",
        "knowledge_documents",
        "skill_revisions",
    ):
        assert before["rows"][table] > 0, table
    assert before["objects"] == 2 and before["tombstone"] is False
    assert len(alice.get("/v1/knowledge/documents").json()["items"]) == 2
    assert alice.delete(f"/v1/sessions/{sid}").status_code == 204
    _assert_clean(live_server, sid)
    # The skill survives, its revisions detached from the deleted run.
    skill = alice.get(f"/v1/skills/{ids['skill_id']}").json()
    assert [r["authoring_run_id"] for r in skill["revisions"]] == [None]
    assert alice.get("/v1/memories").json()["items"] == []
    assert alice.get("/v1/knowledge/documents").json()["items"] == []
    for artifact_id in ids["artifacts"]:
        assert alice.get(f"/v1/artifacts/{artifact_id}").status_code == 404
        assert alice.get(f"/v1/artifacts/{artifact_id}/content").status_code == 404


def test_audit_names_every_table(live_server: LiveServer) -> None:
    from server_stub.db.models import Base

    alice = live_server.client()
    sid = new_session(alice)
    tables = set(residue(live_server, sid)["rows"])
    expected = {t.name for t in Base.metadata.sorted_tables} - {
        "deletion_tombstones",
        "deletion_outbox",
    }
    assert tables == expected


def test_reinforced_memory_survives_deleting_the_reinforcing_session(
    live_server: LiveServer,
) -> None:
    alice = live_server.client()
    origin = new_session(alice)
    run_to_end(alice, origin, "/remember the cat is called Miso")
    reinforcing = new_session(alice)
    run_to_end(alice, reinforcing, "/remember the cat is called Miso")
    run_to_end(alice, reinforcing, "/remember the cat is called Miso")
    events = run_events(alice, alice.get(f"/v1/sessions/{reinforcing}").json()["last_run_id"])
    formed = next(e for e in events if e["type"] == "memory.formed")
    assert formed["data"]["reinforced"] is True
    memories = alice.get("/v1/memories").json()["items"]
    assert len(memories) == 1
    memory = memories[0]
    assert memory["source_session_id"] == origin and memory["reinforcement_count"] == 2
    assert formed["data"]["memory_id"] == memory["id"]
    assert alice.delete(f"/v1/sessions/{reinforcing}").status_code == 204
    _assert_clean(live_server, reinforcing)
    after = alice.get("/v1/memories").json()["items"]
    assert after == [memory]  # count unchanged: single-source memories cannot subtract
    assert alice.delete(f"/v1/sessions/{origin}").status_code == 204
    assert alice.get("/v1/memories").json()["items"] == []
    _assert_clean(live_server, origin)


def test_recall_traces_elsewhere_pointing_at_a_removed_memory_are_removed(
    live_server: LiveServer,
) -> None:
    alice = live_server.client()
    source = new_session(alice)
    run_to_end(alice, source, "/remember lighthouses are tall")
    other = new_session(alice)
    run_to_end(alice, other, "how tall are lighthouses")
    before_other = residue(live_server, other)["rows"]["recall_traces"]
    assert residue(live_server, source)["rows"]["recall_traces"] == 2  # own run + the recall
    assert alice.delete(f"/v1/sessions/{source}").status_code == 204
    _assert_clean(live_server, source)
    # The other session lost exactly the trace that pointed at the removed memory.
    assert residue(live_server, other)["rows"]["recall_traces"] == before_other - 1
    assert alice.get(f"/v1/sessions/{other}").status_code == 200


def test_rejections_recorded_in_a_deleted_session_go_with_it(live_server: LiveServer) -> None:
    alice = live_server.client()
    source = new_session(alice)
    run_to_end(alice, source, "/remember tea over coffee")
    memory_id = alice.get("/v1/memories").json()["items"][0]["id"]
    context = new_session(alice)
    response = alice.post(f"/v1/memories/{memory_id}/rejection", json={"session_id": context})
    assert response.status_code == 201
    assert response.json()["session_id"] == context and response.json()["id"].startswith("mrj_")
    assert alice.get("/v1/memories").json()["items"][0]["rejected"] is True
    assert alice.delete(f"/v1/sessions/{context}").status_code == 204
    _assert_clean(live_server, context)
    memory = alice.get("/v1/memories").json()["items"][0]
    assert memory["id"] == memory_id and memory["rejected"] is False


@BOTH_STORES  # the bytes' part of deletion, on the folder and on SeaweedFS
def test_object_store_down_then_maintenance_then_up_leaves_zero_residue(
    live_server: LiveServer,
) -> None:
    alice = live_server.client()
    control = live_server.control()
    sid = new_session(alice)
    run_to_end(alice, sid, "/artifact a.txt alpha")
    run_to_end(alice, sid, "/artifact b.txt beta")
    artifact_id = alice.get(f"/v1/sessions/{sid}/events").json()["items"]
    artifact_id = next(
        e["data"]["artifact_id"] for e in artifact_id if e["type"] == "artifact.created"
    )
    assert control.put("/_stub/faults", json={"object_store": "down"}).status_code == 204
    assert alice.delete(f"/v1/sessions/{sid}").status_code == 204  # never an error
    audit = residue(live_server, sid)
    assert not any(audit["rows"].values())
    assert audit["outbox"] == 2 and audit["objects"] == 2 and audit["tombstone"] is True
    assert alice.get(f"/v1/artifacts/{artifact_id}/content").status_code == 404
    assert control.post("/_stub/maintenance").json() == {"outbox_pending": 2}
    assert residue(live_server, sid)["outbox"] == 2
    assert control.put("/_stub/faults", json={"object_store": "up"}).status_code == 204
    assert control.post("/_stub/maintenance").json() == {"outbox_pending": 0}
    _assert_clean(live_server, sid)
    assert alice.delete(f"/v1/sessions/{sid}").status_code == 204


@BOTH_STORES  # the bytes' part of deletion, on the folder and on SeaweedFS
def test_maintenance_loop_retries_on_its_own(start_server: Callable[..., LiveServer]) -> None:
    server = start_server(maintenance_interval=0.05)
    alice = server.client()
    control = server.control()
    sid = new_session(alice)
    run_to_end(alice, sid, "/artifact a.txt alpha")
    control.put("/_stub/faults", json={"object_store": "down"})
    assert alice.delete(f"/v1/sessions/{sid}").status_code == 204
    assert residue(server, sid)["outbox"] == 1
    control.put("/_stub/faults", json={"object_store": "up"})
    from tests.server.conftest import wait_until

    wait_until(lambda: residue(server, sid)["outbox"] == 0)
    _assert_clean(server, sid)


def test_delete_and_run_start_race_is_all_or_nothing(live_server: LiveServer) -> None:
    """A run start racing a delete: 202 + 409, or 404 + 204, never anything in between.

    The run waits for an approval so that it stays active when it wins.
    """
    alice = live_server.client()
    other = live_server.client("dev-alice")
    outcomes: set[tuple[int, int]] = set()
    for _ in range(25):
        sid = new_session(alice)
        barrier = threading.Barrier(2)
        result: dict[str, int] = {}

        def start(
            sid: str = sid, barrier: threading.Barrier = barrier, result: dict[str, int] = result
        ) -> None:
            barrier.wait()
            result["run"] = other.post(
                f"/v1/sessions/{sid}/runs", json={"input": message("/approve hold")}
            ).status_code

        thread = threading.Thread(target=start)
        thread.start()
        barrier.wait()
        result["delete"] = alice.delete(f"/v1/sessions/{sid}").status_code
        thread.join()
        pair = (result["run"], result["delete"])
        assert pair in {(202, 409), (404, 204)}, pair
        outcomes.add(pair)
        if pair == (404, 204):
            _assert_clean(live_server, sid)
        else:
            # The run won: it is active and the session is whole; stop it.
            run_id = alice.get(f"/v1/sessions/{sid}").json()["active_run_id"]
            assert run_id is not None
            alice.post(f"/v1/runs/{run_id}/cancel")
    assert outcomes  # which interleavings occur depends on scheduling


@BOTH_STORES  # the bytes' part of deletion, on the folder and on SeaweedFS
def test_concurrent_deletes_all_answer_204(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    run_to_end(alice, sid, "/artifact x.txt bytes")
    others = [new_session(alice) for _ in range(4)]
    barrier = threading.Barrier(8)
    statuses: list[int] = []
    lock = threading.Lock()

    def delete(target: str) -> None:
        client = live_server.client("dev-alice")
        barrier.wait()
        status = client.delete(f"/v1/sessions/{target}").status_code
        with lock:
            statuses.append(status)

    targets = [sid] * 4 + others
    threads = [threading.Thread(target=delete, args=(t,)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses == [204] * 8
    for target in {sid, *others}:
        _assert_clean(live_server, target)
    assert alice.get("/v1/sessions").json()["items"] == []


def test_a_delete_is_set_based_past_the_router_and_loads_no_orm_objects(
    start_server: Callable[..., LiveServer], backend: str
) -> None:
    """Decision 0196, proven by counts, never by time: the purge statements run on the
    driver's cursor on SQLite (the engine sees the one lookup), and on PostgreSQL the lock,
    the memory lock and one statement that purges; no ORM object is loaded; the answer is
    the router's, and the latency metrics name the route's template."""
    server = start_server(**QUIET)
    alice = server.client()
    sid = new_session(alice)
    run_to_end(alice, sid)
    statements, loads = _Statements(server), _Loads()
    mappers = [mapper.class_ for mapper in Base.registry.mappers]
    for mapped in mappers:
        event.listen(mapped, "load", loads)
    try:
        first = alice.delete(f"/v1/sessions/{sid}")
        seen = [s for s in statements.take() if not s.startswith(("BEGIN", "VACUUM"))]
    finally:
        statements.close()
        for mapped in mappers:
            event.remove(mapped, "load", loads)
    assert first.status_code == 204 and first.content == b""
    assert len(seen) == (3 if backend == "postgres" else 1), seen
    assert loads.count == 0
    _assert_clean(server, sid)
    missing = alice.delete("/v1/sessions/ses_doesnotexist000000")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    assert alice.delete(f"/v1/sessions/{sid}/more").status_code in (404, 405)  # the router's
    count = value(
        scrape(server),
        "converge_request_duration_seconds_count",
        route="/v1/sessions/{session_id}",
        method="DELETE",
    )
    assert count == 2


def test_a_small_delete_is_purged_on_the_loop_and_a_bigger_one_on_a_thread(
    server_factory: ServerFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite (decision 0196): a session of at most `SMALL_ON_LOOP` events is purged on the
    event loop, whose connection never waits; a bigger one on a worker thread. Both leave
    zero residue."""
    server = server_factory(**QUIET)
    alice = server.client()
    small, bigger = new_session(alice), new_session(alice)
    run_to_end(alice, small)
    run_to_end(alice, bigger)
    run_to_end(alice, bigger)
    events = len(alice.get(f"/v1/sessions/{small}/events").json()["items"])
    monkeypatch.setattr(purge, "SMALL_ON_LOOP", events)
    loop_thread = server.thread.thread.name
    for sid, on_loop in ((small, True), (bigger, False)):
        with _statements() as seen:
            assert alice.delete(f"/v1/sessions/{sid}").status_code == 204
        lookups = [thread for thread, sql in seen if "deletion_tombstones" in sql]
        assert lookups[0] == loop_thread  # the loop looks first, and purges a small one
        assert (lookups[-1] == loop_thread) is on_loop, lookups
        _assert_clean(server, sid)


def test_a_write_on_the_loop_never_waits_for_another_writer(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'writers.sqlite3'}")
    try:
        db.create_schema()
        with db.write(), pytest.raises(LockedNow), db.write_now():  # the writers' lock is held
            pass
        other = sqlite3.connect(tmp_path / "writers.sqlite3", isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # SQLite's write lock, outside this process's lock
        try:
            with pytest.raises(LockedNow), db.write_now():
                pass
        finally:
            other.execute("ROLLBACK")
            other.close()
        with db.write_now() as conn:  # free again: it writes, and commits
            conn.exec_driver_sql("INSERT INTO server_meta (key, value) VALUES ('k', 'v')")
        assert db.scalar_meta("k") == "v"
    finally:
        db.dispose()


def test_point_reads_after_a_delete_take_no_request_thread_on_sqlite(
    server_factory: ServerFactory,
) -> None:
    """Every watching device point-reads a deleted row at once (CONTRACT §7): on SQLite the
    read is answered on the loop, like the index's, not queued for the request threads
    (PostgreSQL's round trips never hold the loop: its reads take a thread)."""
    from server_stub.state import AppState

    live_server = server_factory()
    state = live_server.thread.app.state.converge
    assert isinstance(state, AppState) and state.db.is_sqlite
    alice = live_server.client()
    sid = new_session(alice)
    assert alice.get(f"/v1/sessions/{sid}").status_code == 200
    assert alice.delete(f"/v1/sessions/{sid}").status_code == 204
    threads: list[object] = []
    run = state.threads.run

    async def counted(fn: Callable[[], Any]) -> Any:
        threads.append(fn)
        return await run(fn)

    state.threads.run = counted  # type: ignore[method-assign]
    try:
        gone = alice.get(f"/v1/sessions/{sid}")
        assert gone.status_code == 404 and gone.json()["error"]["code"] == "not_found"
        assert gone.json()["error"]["details"]["reason"] == "deleted"
        assert alice.get(f"/v1/sessions/{new_session(alice)}").status_code == 200
    finally:
        state.threads.run = run  # type: ignore[method-assign]
    assert len(threads) == 1  # the second session's create; neither point read
