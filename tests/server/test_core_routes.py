"""Routes 1–9 on the plain Echo path: the behaviour every client builds on."""

from __future__ import annotations

import re

from tests.conftest import LiveServer
from tests.server.conftest import (
    message,
    new_session,
    run_events,
    run_to_end,
    start_run,
    wait_terminal,
)

TS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")


def test_created_session_is_empty_and_listed(live_server: LiveServer) -> None:
    alice = live_server.client("dev-alice")
    response = alice.post("/v1/sessions", json={})
    assert response.status_code == 201
    view = response.json()
    assert set(view) == {"id", "title", "created_at", "updated_at", "active_run_id", "last_run_id"}
    assert view["id"].startswith("ses_")
    assert view["title"] is None and view["active_run_id"] is None and view["last_run_id"] is None
    assert TS.match(view["created_at"]) and view["updated_at"] == view["created_at"]
    page = alice.get("/v1/sessions").json()
    assert page == {"items": [view], "next_cursor": None}
    assert alice.get(f"/v1/sessions/{view['id']}").json() == view


def test_echo_run_streams_deltas_and_completes(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    run = start_run(alice, sid, "hi there")
    assert run["status"] == "queued" and run["session_id"] == sid
    assert run["cancel_requested"] is False and run["completed_at"] is None
    done = wait_terminal(alice, run["id"])
    assert done["status"] == "completed" and TS.match(done["completed_at"])
    events = run_events(alice, run["id"])
    types = [e["type"] for e in events]
    assert types[:2] == ["run.started", "message.user"]
    assert types[-2:] == ["message.assistant", "run.completed"]
    assert "message.assistant.delta" in types
    deltas = "".join(e["data"]["text"] for e in events if e["type"] == "message.assistant.delta")
    assert deltas == "Echo: hi there"
    assert [e["sequence"] for e in events] == list(range(1, len(events) + 1))
    times = [e["created_at"] for e in events]
    assert times == sorted(times)
    session = alice.get(f"/v1/sessions/{sid}").json()
    assert session["title"] == "hi there"
    assert session["updated_at"] == events[-1]["created_at"]
    assert session["active_run_id"] is None and session["last_run_id"] == run["id"]


def test_second_run_while_active_is_409_run_in_progress(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    run = start_run(alice, sid, "/wait 5")
    response = alice.post(
        f"/v1/sessions/{sid}/runs",
        json={"input": message("x")},
    )
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "invalid_state"
    assert response.json()["error"]["details"]["reason"] == "run_in_progress"
    assert alice.get(f"/v1/sessions/{sid}").json()["active_run_id"] == run["id"]
    assert alice.post(f"/v1/runs/{run['id']}/cancel").status_code == 202
    assert wait_terminal(alice, run["id"])["status"] == "cancelled"


def test_event_pages_follow_sequence(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    run_to_end(alice, sid)
    everything = alice.get(f"/v1/sessions/{sid}/events").json()
    assert everything["next_after"] is None
    seqs = [e["sequence"] for e in everything["items"]]
    first = alice.get(f"/v1/sessions/{sid}/events", params={"limit": 2}).json()
    assert [e["sequence"] for e in first["items"]] == seqs[:2]
    assert first["next_after"] == seqs[1]
    rest = alice.get(
        f"/v1/sessions/{sid}/events", params={"after": first["next_after"], "limit": 1000}
    ).json()
    assert [e["sequence"] for e in rest["items"]] == seqs[2:]
    assert rest["next_after"] is None
    exact = alice.get(f"/v1/sessions/{sid}/events", params={"limit": len(seqs)}).json()
    assert exact["next_after"] == seqs[-1]


def test_title_is_set_by_the_first_run_and_never_changes(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    run_to_end(alice, sid, "  First\n\tquestion  ")
    run_to_end(alice, sid, "second question")
    assert alice.get(f"/v1/sessions/{sid}").json()["title"] == "First question"
