"""Routes 7–10 and the scripted agent: SSE, cancel, approvals, artifacts, memories, skills."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.conftest import LiveServer
from tests.server.conftest import (
    message,
    new_session,
    residue,
    run_events,
    run_to_end,
    start_run,
    wait_status,
    wait_terminal,
)

SSE = {"Accept": "text/event-stream"}


def _frames(
    client: httpx.Client,
    run_id: str,
    headers: dict[str, str] | None = None,
    on_open: Callable[[], None] | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """Read an SSE stream to its end: (frames as dicts, comment lines)."""
    frames: list[dict[str, Any]] = []
    comments: list[str] = []
    current: dict[str, Any] = {}
    with client.stream("GET", f"/v1/runs/{run_id}/events", headers={**SSE, **(headers or {})}) as s:
        assert s.status_code == 200
        assert s.headers["content-type"].startswith("text/event-stream")
        if on_open is not None:
            on_open()
        for line in s.iter_lines():
            if line == "":
                if current:
                    frames.append(current)
                current = {}
            elif line.startswith(":"):
                comments.append(line)
            else:
                field, _, value = line.partition(": ")
                current[field] = value
    return frames, comments


def _approval_id(client: httpx.Client, run_id: str) -> str:
    return next(
        e["data"]["approval_id"]
        for e in run_events(client, run_id)
        if e["type"] == "approval.requested"
    )


def test_sse_replays_a_finished_run_and_closes(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    run = run_to_end(alice, sid, "replay me")
    frames, _ = _frames(alice, run["id"])
    events = run_events(alice, run["id"])
    assert [json.loads(f["data"]) for f in frames] == events
    assert [f["id"] for f in frames] == [str(e["sequence"]) for e in events]
    assert [f["event"] for f in frames] == [e["type"] for e in events]
    assert frames[-1]["event"] == "run.completed"


def test_sse_streams_live_then_closes_after_the_terminal_event(live_server: LiveServer) -> None:
    alice = live_server.client()
    decider = live_server.client("dev-alice")
    sid = new_session(alice)
    run = start_run(alice, sid, "/approve deploy")
    wait_status(alice, run["id"], "waiting_for_approval")
    approval_id = _approval_id(alice, run["id"])

    def decide_once_open() -> None:
        threading.Thread(
            target=lambda: decider.post(
                f"/v1/approvals/{approval_id}/decision", json={"decision": "approve"}
            ),
        ).start()

    frames, _ = _frames(alice, run["id"], on_open=decide_once_open)
    types = [f["event"] for f in frames]
    assert types[:3] == ["run.started", "message.user", "approval.requested"]
    assert "approval.resolved" in types and "tool.invocation" in types
    assert types[-1] == "run.completed"
    assert [int(f["id"]) for f in frames] == sorted(int(f["id"]) for f in frames)
    assert alice.get(f"/v1/runs/{run['id']}").json()["status"] == "completed"


def test_sse_resumes_after_last_event_id(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    run_to_end(alice, sid, "first run")
    run = run_to_end(alice, sid, "second run")
    events = run_events(alice, run["id"])
    middle = events[2]["sequence"]
    frames, _ = _frames(alice, run["id"], headers={"Last-Event-ID": str(middle)})
    assert [int(f["id"]) for f in frames] == [e["sequence"] for e in events[3:]]
    last = events[-1]["sequence"]
    assert _frames(alice, run["id"], headers={"Last-Event-ID": str(last)})[0] == []
    bad = alice.get(f"/v1/runs/{run['id']}/events", headers={**SSE, "Last-Event-ID": "abc"})
    assert bad.status_code == 400


def test_sse_sends_keep_alive_comments(start_server: Callable[..., LiveServer]) -> None:
    server = start_server(sse_keepalive=0.1)
    alice = server.client()
    sid = new_session(alice)
    run = start_run(alice, sid, "/approve wait")
    wait_status(alice, run["id"], "waiting_for_approval")
    seen: list[str] = []
    with alice.stream("GET", f"/v1/runs/{run['id']}/events", headers=SSE) as s:
        for line in s.iter_lines():
            seen.append(line)
            if line.startswith(": keep-alive"):
                break
    assert any(line == ": keep-alive" for line in seen)
    # Closing the stream never affects the run.
    assert alice.get(f"/v1/runs/{run['id']}").json()["status"] == "waiting_for_approval"
    alice.post(f"/v1/runs/{run['id']}/cancel")
    assert wait_terminal(alice, run["id"])["status"] == "cancelled"


def test_run_events_as_json_without_sse_accept(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    run = run_to_end(alice, sid)
    body = alice.get(f"/v1/runs/{run['id']}/events").json()
    assert set(body) == {"items"}
    assert all(e["run_id"] == run["id"] for e in body["items"])
    session_events = alice.get(f"/v1/sessions/{sid}/events").json()["items"]
    assert body["items"] == session_events


def test_cancel_ends_a_wait_before_it_runs_out(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    run = start_run(alice, sid, "/wait 60")
    wait_status(alice, run["id"], "running")
    response = alice.post(f"/v1/runs/{run['id']}/cancel")
    assert response.status_code == 202
    assert response.json()["cancel_requested"] is True
    done = wait_terminal(alice, run["id"])
    assert done["status"] == "cancelled" and done["cancel_requested"] is True
    events = run_events(alice, run["id"])
    assert events[-1]["type"] == "run.cancelled"
    # The wait was cut short, not waited out: a 60 s wait streams 59 ticks before its end.
    # (How fast a cancel lands is a figure, not a test: see `bench`.)
    ticks = [e for e in events if e["type"] == "message.assistant.delta"]
    assert len(ticks) < 59 and all(t["data"]["text"] == "." for t in ticks)
    # Cancelling a terminal run is a no-op answering 202 with its view.
    again = alice.post(f"/v1/runs/{run['id']}/cancel")
    assert again.status_code == 202 and again.json() == alice.get(f"/v1/runs/{run['id']}").json()
    assert run_events(alice, run["id"]) == events


def test_wait_streams_a_delta_each_second(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    run = run_to_end(alice, sid, "/wait 1.2")
    assert run["status"] == "completed"
    deltas = [e for e in run_events(alice, run["id"]) if e["type"] == "message.assistant.delta"]
    # One whole second lies inside the wait: one tick (then the echo's deltas), never skipped
    # when the agent wakes late on a busy machine.
    assert [d["data"]["text"] for d in deltas].count(".") == 1
    assert deltas[0]["data"]["text"] == "."


def test_a_wait_that_wakes_late_still_streams_its_tick(
    live_server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A busy machine wakes the agent late: a tick due before the wait's end is streamed
    anyway, even when the late wake-up is already past the end."""
    import server_stub.domain.agent
    from server_stub.domain.notifier import wait_for as real_wait_for

    async def late_wait_for(event: asyncio.Event, timeout: float) -> bool:
        woke = await real_wait_for(event, timeout)
        await asyncio.sleep(0.5)  # the injected fault: this wake-up comes 0.5 s late
        return woke

    monkeypatch.setattr(server_stub.domain.agent, "wait_for", late_wait_for)
    alice = live_server.client()
    run = run_to_end(alice, new_session(alice), "/wait 1.2")
    deltas = [e for e in run_events(alice, run["id"]) if e["type"] == "message.assistant.delta"]
    assert [d["data"]["text"] for d in deltas].count(".") == 1


def test_cancel_of_a_waiting_approval_cancels_the_approval(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    run = start_run(alice, sid, "/approve shell")
    wait_status(alice, run["id"], "waiting_for_approval")
    approval_id = _approval_id(alice, run["id"])
    assert alice.post(f"/v1/runs/{run['id']}/cancel").status_code == 202
    assert wait_terminal(alice, run["id"])["status"] == "cancelled"
    types = [e["type"] for e in run_events(alice, run["id"])]
    assert "tool.invocation" not in types and types[-1] == "run.cancelled"
    for decision in ("approve", "deny"):
        response = alice.post(f"/v1/approvals/{approval_id}/decision", json={"decision": decision})
        assert response.status_code == 409
        assert response.json()["error"]["code"] == "invalid_state"


def test_approval_double_decide_rules(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    run = start_run(alice, sid, "/approve search")
    wait_status(alice, run["id"], "waiting_for_approval")
    approval_id = _approval_id(alice, run["id"])
    first = alice.post(f"/v1/approvals/{approval_id}/decision", json={"decision": "approve"})
    assert first.status_code == 200
    assert first.json() == {
        "id": approval_id,
        "run_id": run["id"],
        "tool": "search",
        "status": "approved",
    }
    same = alice.post(f"/v1/approvals/{approval_id}/decision", json={"decision": "approve"})
    assert same.status_code == 200 and same.json() == first.json()
    other = alice.post(f"/v1/approvals/{approval_id}/decision", json={"decision": "deny"})
    assert other.status_code == 409 and other.json()["error"]["code"] == "invalid_state"
    wait_terminal(alice, run["id"])
    events = run_events(alice, run["id"])
    assert [e["type"] for e in events].count("approval.resolved") == 1
    invocation = next(e for e in events if e["type"] == "tool.invocation")
    assert invocation["data"]["tool"] == "search" and invocation["data"]["status"] == "succeeded"
    # Another principal cannot see it.
    bob = live_server.client("dev-bob")
    assert (
        bob.post(f"/v1/approvals/{approval_id}/decision", json={"decision": "approve"}).status_code
        == 404
    )


def test_deny_skips_the_tool(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    run = start_run(alice, sid, "/approve rm")
    wait_status(alice, run["id"], "waiting_for_approval")
    approval_id = _approval_id(alice, run["id"])
    response = alice.post(f"/v1/approvals/{approval_id}/decision", json={"decision": "deny"})
    assert response.json()["status"] == "denied"
    assert (
        alice.post(f"/v1/approvals/{approval_id}/decision", json={"decision": "deny"}).status_code
        == 200
    )
    assert wait_terminal(alice, run["id"])["status"] == "completed"
    types = [e["type"] for e in run_events(alice, run["id"])]
    assert "tool.invocation" not in types
    resolved = next(e for e in run_events(alice, run["id"]) if e["type"] == "approval.resolved")
    assert resolved["data"] == {"approval_id": approval_id, "decision": "denied"}


def test_artifact_command_stores_bytes_and_a_knowledge_document(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    run = run_to_end(alice, sid, "/artifact notes.txt  Hello, bytes!  ")
    created = next(e for e in run_events(alice, run["id"]) if e["type"] == "artifact.created")
    artifact_id = created["data"]["artifact_id"]
    assert created["data"]["name"] == "notes.txt" and artifact_id.startswith("art_")
    meta = alice.get(f"/v1/artifacts/{artifact_id}").json()
    assert meta["session_id"] == sid and meta["run_id"] == run["id"]
    assert meta["media_type"] == "text/plain" and meta["size"] == len(b"Hello, bytes!")
    content = alice.get(f"/v1/artifacts/{artifact_id}/content")
    assert content.content == b"Hello, bytes!"
    assert content.headers["content-type"].startswith("text/plain")
    import hashlib

    assert meta["sha256"] == hashlib.sha256(b"Hello, bytes!").hexdigest()
    assert content.headers["ETag"] == f'"{meta["sha256"]}"'
    docs = alice.get("/v1/knowledge/documents").json()["items"]
    assert [(d["source_artifact_id"], d["source_session_id"], d["title"]) for d in docs] == [
        (artifact_id, sid, "notes.txt")
    ]
    assert live_server.client("dev-bob").get("/v1/knowledge/documents").json()["items"] == []
    assert residue(live_server, sid)["objects"] == 1


def test_remember_forms_then_reinforces(live_server: LiveServer) -> None:
    alice = live_server.client()
    first = new_session(alice)
    run = run_to_end(alice, first, "/remember  prefers metric units ")
    formed = next(e for e in run_events(alice, run["id"]) if e["type"] == "memory.formed")
    memory = alice.get("/v1/memories").json()["items"][0]
    assert formed["data"] == {"memory_id": memory["id"], "reinforced": False}
    assert memory["text"] == "prefers metric units" and memory["reinforcement_count"] == 0
    assert memory["source_session_id"] == first and memory["source_run_id"] == run["id"]
    assert memory["rejected"] is False
    second = new_session(alice)
    run_to_end(alice, second, "/remember prefers metric units")
    again = alice.get("/v1/memories").json()["items"]
    assert len(again) == 1 and again[0]["reinforcement_count"] == 1
    assert again[0]["source_session_id"] == first
    # Bob's identical text is his own memory.
    bob = live_server.client("dev-bob")
    run_to_end(bob, new_session(bob), "/remember prefers metric units")
    assert bob.get("/v1/memories").json()["items"][0]["reinforcement_count"] == 0


def test_memory_and_knowledge_lists_paginate(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    for i in range(5):
        run_to_end(alice, sid, f"/remember fact number {i}")
    seen: list[str] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = alice.get("/v1/memories", params=params).json()
        seen.extend(m["id"] for m in page["items"])
        cursor = page["next_cursor"]
        if not cursor:
            break
    full = alice.get("/v1/memories").json()["items"]
    assert seen == [m["id"] for m in full] and len(seen) == 5
    keys = [(m["created_at"], m["id"]) for m in full]
    assert keys == sorted(keys, reverse=True)


def test_rejection_rules(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    run_to_end(alice, sid, "/remember owls are birds")
    memory_id = alice.get("/v1/memories").json()["items"][0]["id"]
    plain = alice.post(f"/v1/memories/{memory_id}/rejection", json={})
    assert plain.status_code == 201
    assert plain.json() == {"id": plain.json()["id"], "memory_id": memory_id, "session_id": None}
    assert alice.post(f"/v1/memories/{memory_id}/rejection").status_code == 201  # no body
    bob_sid = new_session(live_server.client("dev-bob"))
    missing = alice.post(f"/v1/memories/{memory_id}/rejection", json={"session_id": "ses_nope"})
    foreign = alice.post(f"/v1/memories/{memory_id}/rejection", json={"session_id": bob_sid})
    unknown = alice.post("/v1/memories/mem_nope/rejection", json={})
    assert missing.status_code == foreign.status_code == unknown.status_code == 404
    assert missing.content == foreign.content == unknown.content
    gone = new_session(alice)
    alice.delete(f"/v1/sessions/{gone}")
    deleted = alice.post(f"/v1/memories/{memory_id}/rejection", json={"session_id": gone})
    assert deleted.status_code == 404 and deleted.content == unknown.content
    assert live_server.client("dev-bob").get("/v1/memories").json()["items"] == []


def test_skill_revisions_count_up(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    first = run_to_end(alice, sid, "/skill triage")
    second = run_to_end(alice, sid, "/skill triage")
    published = next(e for e in run_events(alice, second["id"]) if e["type"] == "skill.published")
    skill = alice.get(f"/v1/skills/{published['data']['skill_id']}").json()
    assert skill["name"] == "triage"
    assert [(r["revision"], r["authoring_run_id"]) for r in skill["revisions"]] == [
        (1, first["id"]),
        (2, second["id"]),
    ]
    assert skill["revisions"][1]["id"] == published["data"]["revision_id"]
    assert live_server.client("dev-bob").get(f"/v1/skills/{skill['id']}").status_code == 404


def test_fail_command_fails_the_run(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    run = run_to_end(alice, sid, "/fail")
    assert run["status"] == "failed" and run["completed_at"] is not None
    assert run_events(alice, run["id"])[-1]["type"] == "run.failed"
    assert alice.get(f"/v1/sessions/{sid}").json()["last_run_id"] == run["id"]


def test_terminal_status_means_every_write_is_visible(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    run = start_run(alice, sid, "/artifact a.txt text")
    while True:
        view = alice.get(f"/v1/runs/{run['id']}").json()
        if view["status"] in ("completed", "failed", "cancelled"):
            break
    audit = residue(live_server, sid)["rows"]
    assert audit["checkpoints"] == audit["projections"] == audit["recall_traces"] == 1
    assert audit["artifacts"] == audit["knowledge_documents"] == 1
    assert run_events(alice, run["id"])[-1]["type"] == "run.completed"


def test_last_run_id_is_the_previous_finished_run_while_one_is_active(
    live_server: LiveServer,
) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    done = run_to_end(alice, sid)
    active = start_run(alice, sid, "/approve hold")
    view = alice.get(f"/v1/sessions/{sid}").json()
    assert view["active_run_id"] == active["id"] and view["last_run_id"] == done["id"]
    alice.post(f"/v1/runs/{active['id']}/cancel")
    wait_terminal(alice, active["id"])
    view = alice.get(f"/v1/sessions/{sid}").json()
    assert view["active_run_id"] is None and view["last_run_id"] == active["id"]


def test_control_plane_history_and_legacy_titles(live_server: LiveServer) -> None:
    control = live_server.control()
    alice = live_server.client()
    body = {
        "token": "dev-alice",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "image", "media_type": "image/png", "data": "AA=="},
                    {"type": "text", "text": "  Legacy\u001f  title\n"},
                ],
            },
            message("second"),
        ],
        "updated_at": "2026-02-03T04:05:06.000007Z",
    }
    stored = control.post("/_stub/sessions", json=body)
    assert stored.status_code == 201
    legacy = control.post("/_stub/sessions", json={**body, "legacy": True})
    assert legacy.status_code == 201
    for view in (stored.json(), legacy.json()):
        assert view["title"] == "Legacy title"
        assert view["updated_at"] == "2026-02-03T04:05:06.000007Z"
        assert view["active_run_id"] is None and view["last_run_id"] is None
        events = alice.get(f"/v1/sessions/{view['id']}/events").json()["items"]
        assert [e["type"] for e in events] == ["message.user", "message.user"]
        assert all(e["run_id"] is None and e["created_at"] <= view["updated_at"] for e in events)
    listed = {i["id"]: i["title"] for i in alice.get("/v1/sessions").json()["items"]}
    assert listed[legacy.json()["id"]] == "Legacy title"
    # The first run keeps the title derived from the existing first message.
    run_to_end(alice, legacy.json()["id"], "a different first run")
    assert alice.get(f"/v1/sessions/{legacy.json()['id']}").json()["title"] == "Legacy title"
    bad = control.post("/_stub/sessions", json={"token": "nobody", "messages": []})
    assert bad.status_code == 400
    bad_ts = control.post(
        "/_stub/sessions", json={"token": "dev-alice", "updated_at": "2026-01-01"}
    )
    assert bad_ts.status_code == 400


def test_restart_fails_runs_left_active(
    server_factory: Callable[..., LiveServer], tmp_path: Any
) -> None:
    url = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    first = server_factory(database_url=url, artifacts_dir=tmp_path / "o")
    alice = first.client()
    sid = new_session(alice)
    run = start_run(alice, sid, "/approve never")
    wait_status(alice, run["id"], "waiting_for_approval")
    first.stop()
    second = server_factory(database_url=url, artifacts_dir=tmp_path / "o")
    alice = second.client()
    view = alice.get(f"/v1/runs/{run['id']}").json()
    assert view["status"] == "failed"
    assert alice.get(f"/v1/sessions/{sid}").json()["active_run_id"] is None
    assert alice.delete(f"/v1/sessions/{sid}").status_code == 204


def test_agent_delay_streams_steps_apart_and_cancel_still_works(
    start_server: Callable[..., LiveServer],
) -> None:
    server = start_server(agent_delay=0.05)
    alice = server.client()
    sid = new_session(alice)
    run = run_to_end(alice, sid, "slow echo")
    events = run_events(alice, run["id"])
    deltas = [e for e in events if e["type"] == "message.assistant.delta"]
    assert len(deltas) >= 2
    assert deltas[0]["created_at"] < deltas[-1]["created_at"]  # separate commits, paced
    assert "".join(d["data"]["text"] for d in deltas) == "Echo: slow echo"
    # A cancel right after the start ends the run as cancelled, before the echo.
    second = start_run(alice, sid, "stop me")
    alice.post(f"/v1/runs/{second['id']}/cancel")
    assert wait_terminal(alice, second["id"])["status"] == "cancelled"
    types = [e["type"] for e in run_events(alice, second["id"])]
    assert types[-1] == "run.cancelled" and "message.assistant" not in types


def test_decision_racing_a_cancel_resolves_the_approval_once(live_server: LiveServer) -> None:
    alice = live_server.client()
    canceller = live_server.client("dev-alice")
    sid = new_session(alice)
    for _ in range(5):
        run = start_run(alice, sid, "/approve race")
        wait_status(alice, run["id"], "waiting_for_approval")
        approval_id = _approval_id(alice, run["id"])
        barrier = threading.Barrier(2)

        def cancel(run_id: str = run["id"], barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            canceller.post(f"/v1/runs/{run_id}/cancel")

        thread = threading.Thread(target=cancel)
        thread.start()
        barrier.wait()
        decided = alice.post(f"/v1/approvals/{approval_id}/decision", json={"decision": "approve"})
        thread.join()
        assert decided.status_code in (200, 409)
        wait_terminal(alice, run["id"])
        resolved = [e for e in run_events(alice, run["id"]) if e["type"] == "approval.resolved"]
        assert len(resolved) == 1, resolved
        final = "approved" if decided.status_code == 200 else "cancelled"
        assert resolved[0]["data"]["decision"] == final
        again = alice.post(f"/v1/approvals/{approval_id}/decision", json={"decision": "approve"})
        assert again.status_code == (200 if final == "approved" else 409)


def test_a_name_past_200_characters_fails_the_run_and_stores_nothing(
    live_server: LiveServer,
) -> None:
    """Artifact, skill and tool names are stored whole in 200-character columns (a knowledge
    document's title is its artifact's name): a longer one fails the run in words rather than
    being stored or cut."""
    alice = live_server.client()
    sid = new_session(alice)
    long_names = (f"/artifact {'n' * 201} text", f"/skill {'s' * 201}", f"/approve {'t' * 201}")
    for command in long_names:
        run = run_to_end(alice, sid, command)
        assert run["status"] == "failed"
        failed = run_events(alice, run["id"])[-1]
        assert failed["type"] == "run.failed"
        assert "longer than 200 characters" in failed["data"]["error"]
    assert alice.get("/v1/knowledge/documents").json()["items"] == []
    audit = residue(live_server, sid)
    assert audit["objects"] == 0
    assert audit["rows"]["skill_revisions"] == audit["rows"]["approvals"] == 0
    run = run_to_end(alice, sid, f"/artifact {'é' * 200} text")
    assert run["status"] == "completed"
    [doc] = alice.get("/v1/knowledge/documents").json()["items"]
    assert doc["title"] == "é" * 200


def test_a_turn_without_agent_delay_wakes_the_index_twice(live_server: LiveServer) -> None:
    """Each commit that moves the index wakes every watching device of the principal
    (CONTRACT §9.1), so with no agent delay the reply and the run's end commit together:
    a turn moves the index at its start (the run's POST) and at its end, and its events
    are the same as a turn of separate steps."""
    db = live_server.thread.app.state.converge.db
    alice = live_server.client()
    sid = new_session(alice)
    heard = db.index_listener
    wakes: list[tuple[str, str]] = []

    def counted(tenant: str, principal: str) -> None:
        wakes.append((tenant, principal))
        heard(tenant, principal)

    db.index_listener = counted
    try:
        run = run_to_end(alice, sid, "the fox")
    finally:
        db.index_listener = heard
    assert run["status"] == "completed"
    assert len(wakes) == 2, wakes
    types = [e["type"] for e in run_events(alice, run["id"])]
    assert types[-2:] == ["message.assistant", "run.completed"], types
    assert types.count("message.assistant.delta") == 3, types
