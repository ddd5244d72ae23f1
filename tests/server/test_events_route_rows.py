"""The events route reads plain rows: with many watching devices every pass reads one events
page per moved conversation, and the ORM's `get` of the session and its event objects would
be most of the route's time. Counted here as ORM objects loaded (the
mappers' `load` event), which must be none, and statements: a page of a session the
caller owns is one (its ownership is checked in the page's own statement), while the
answers stay the same."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import event

from server_stub.db.models import EventRow, SessionRow
from tests.conftest import LiveServer
from tests.server.conftest import message, run_to_end
from tests.server.test_equal_cost_404s import _Statements
from tests.server.test_legacy_titles import live_server as live_server  # quiet loops
from tests.server.test_legacy_titles import statements as statements  # the fixture


class _Loads:
    """ORM objects of the session and event mappers loaded while recording."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, *_args: Any) -> None:
        self.count += 1


@pytest.fixture
def loads() -> Iterator[_Loads]:
    counter = _Loads()
    for mapped in (SessionRow, EventRow):
        event.listen(mapped, "load", counter)
    yield counter
    for mapped in (SessionRow, EventRow):
        event.remove(mapped, "load", counter)


def test_an_events_page_loads_no_orm_objects_and_keeps_its_shape(
    live_server: LiveServer, loads: _Loads, statements: _Statements
) -> None:
    alice = live_server.client()
    sid = alice.post("/v1/sessions", json={}).json()["id"]
    run_to_end(alice, sid, "hello events")
    loads.count = 0
    statements.take()
    page = alice.get(f"/v1/sessions/{sid}/events", params={"limit": 2})
    assert page.status_code == 200
    body = page.json()
    assert loads.count == 0
    assert len([s for s in statements.take() if s.lstrip().startswith("SELECT")]) == 1
    assert [e["sequence"] for e in body["items"]] == [1, 2] and body["next_after"] == 2
    first = body["items"][0]
    assert set(first) == {"session_id", "run_id", "sequence", "type", "created_at", "data"}
    assert first["session_id"] == sid and first["type"] == "run.started"
    rest = alice.get(f"/v1/sessions/{sid}/events", params={"after": 2}).json()
    assert rest["next_after"] is None and rest["items"][0]["sequence"] == 3
    assert any(
        e["type"] == "message.user" and e["data"] == message("hello events")
        for e in [*body["items"], *rest["items"]]
    )


def test_another_principals_events_are_a_plain_404(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = alice.post("/v1/sessions", json={}).json()["id"]
    bob = live_server.client("dev-bob")
    foreign = bob.get(f"/v1/sessions/{sid}/events")
    missing = bob.get("/v1/sessions/ses_00000000000000000000000000/events")
    assert foreign.status_code == missing.status_code == 404
    assert foreign.content == missing.content
    assert alice.get(f"/v1/sessions/{sid}/events").json() == {"items": [], "next_after": None}


def test_an_id_holding_a_slash_is_not_the_events_route(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = alice.post("/v1/sessions", json={}).json()["id"]
    answer = alice.get(f"/v1/sessions/{sid}%2Fx/events")
    assert answer.status_code == 404  # the router's answer: no such route, as before
