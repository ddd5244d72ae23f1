"""The isolation matrix: nobody can tell another principal's resources from nothing.

For every route that names a resource, and for each relation between the caller and the
resource, the answer must be the route's plain 404, byte for byte the body the same caller
gets for an id that never existed on the same route, and the request must change nothing.
Relations:

- `same_tenant`: bob (acme) asks for alice's (acme) live resources;
- `other_tenant`: carol (globex) asks for alice's live resources;
- `deleted_owner`: alice asks for what her deleted session held;
- `deleted_other`: bob asks for what alice's deleted session held.

Exceptions written in the table: alice reading her deleted session gets 404 with
`details.reason = "deleted"`, deleting it again gets 204 (the tombstone), and a skill
published from it survives with its authoring run detached (ADR-0050 §5).

List routes (sessions, memories, knowledge documents) are walked page by page: each caller
sees exactly its own live items, never another principal's and never a deleted session's.
Everything runs on SQLite and on PostgreSQL (skipped with a reason where it cannot start).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from tests.reliability.conftest import (
    ALICE,
    BOB,
    CAROL,
    READONLY,
    Holdings,
    World,
    message,
    seed,
)

NEVER = {
    "ses": "ses_neverexisted0000000",
    "run": "run_neverexisted0000000",
    "apr": "apr_neverexisted0000000",
    "art": "art_neverexisted0000000",
    "mem": "mem_neverexisted0000000",
    "skl": "skl_neverexisted0000000",
}
ALSO_NEVER = {kind: f"{kind}_{'z' * 20}" for kind in NEVER}

CALLERS = {
    "same_tenant": BOB,
    "other_tenant": CAROL,
    "deleted_owner": ALICE,
    "deleted_other": BOB,
}
SSE = {"Accept": "text/event-stream"}


@dataclass(frozen=True)
class Probe:
    """One route that names a resource, and how to aim it at an id."""

    route: str
    kind: str  # the id's type prefix (which id of `NEVER` stands for "never existed")
    live: Callable[[Holdings], str]  # the victim's live resource of this kind
    gone: Callable[[Holdings], str]  # the same kind of resource in the victim's deleted session
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    id_in_body: str | None = None  # the id goes in this body field; the path is the caller's

    def send(self, client: httpx.Client, caller: Holdings, target: str) -> httpx.Response:
        method, template = self.route.split(" ")[:2]  # the rest of the label is a comment
        body = dict(self.body) if self.body is not None else None
        if self.id_in_body is not None:
            assert body is not None
            body[self.id_in_body] = target
            path = template.format(own=caller.done.memories[0])
        else:
            path = template.format(id=target)
        if "text/event-stream" in self.headers.get("Accept", ""):
            # A stream must not open at all; bound it in case isolation is broken.
            with client.stream(method, path, headers=self.headers, timeout=5.0) as response:
                response.read()
                return response
        return client.request(method, path, json=body, headers=self.headers)


PROBES = [
    Probe("GET /v1/sessions/{id}", "ses", lambda h: h.done.session, lambda h: h.deleted.session),
    Probe("DELETE /v1/sessions/{id}", "ses", lambda h: h.done.session, lambda h: h.deleted.session),
    Probe(
        "POST /v1/sessions/{id}/runs",
        "ses",
        lambda h: h.done.session,
        lambda h: h.deleted.session,
        body={"input": message("hello")},
    ),
    Probe(
        "GET /v1/sessions/{id}/events",
        "ses",
        lambda h: h.done.session,
        lambda h: h.deleted.session,
    ),
    Probe("GET /v1/runs/{id}", "run", lambda h: h.waiting_run, lambda h: h.deleted.runs[-1]),
    Probe("GET /v1/runs/{id}/events", "run", lambda h: h.waiting_run, lambda h: h.deleted.runs[-1]),
    Probe(
        "GET /v1/runs/{id}/events (SSE)",
        "run",
        lambda h: h.waiting_run,
        lambda h: h.deleted.runs[-1],
        headers=SSE,
    ),
    Probe(
        "POST /v1/runs/{id}/cancel", "run", lambda h: h.waiting_run, lambda h: h.deleted.runs[-1]
    ),
    Probe(
        "POST /v1/approvals/{id}/decision",
        "apr",
        lambda h: h.pending_approval,
        lambda h: h.deleted.approvals[-1],
        body={"decision": "deny"},
    ),
    Probe(
        "GET /v1/artifacts/{id}",
        "art",
        lambda h: h.done.artifacts[0],
        lambda h: h.deleted.artifacts[0],
    ),
    Probe(
        "GET /v1/artifacts/{id}/content",
        "art",
        lambda h: h.done.artifacts[0],
        lambda h: h.deleted.artifacts[0],
    ),
    Probe(
        "POST /v1/memories/{id}/rejection",
        "mem",
        lambda h: h.done.memories[0],
        lambda h: h.deleted.memories[0],
        body={},
    ),
    Probe(
        "POST /v1/memories/{own}/rejection session_id",
        "ses",
        lambda h: h.done.session,
        lambda h: h.deleted.session,
        body={"reason": "not mine"},
        id_in_body="session_id",
    ),
    Probe("GET /v1/skills/{id}", "skl", lambda h: h.done.skills[0], lambda h: h.deleted.skills[0]),
]

# What a relation answers when it is not the plain 404.
EXCEPTIONS = {
    ("GET /v1/sessions/{id}", "deleted_owner"): "reason_deleted",
    ("DELETE /v1/sessions/{id}", "deleted_owner"): "tombstone_204",
    ("GET /v1/skills/{id}", "deleted_owner"): "survives_detached",
}


def _matrix() -> list[Any]:
    return [
        pytest.param(probe, relation, id=f"{probe.route} | {relation}")
        for probe in PROBES
        for relation in CALLERS
    ]


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def world(request: pytest.FixtureRequest, module_server: Any) -> World:
    """A seeded server per backend, shared by the whole matrix."""
    return seed(module_server(str(request.param)), spare=0)


def _plain_404(response: httpx.Response) -> None:
    assert response.status_code == 404, response.text
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert error["code"] == "not_found" and "details" not in error, error


def _victim_snapshot(world: World) -> dict[str, Any]:
    """What alice can observe of the live resources the probes aim at."""
    alice = world.client(ALICE)
    held = world.holdings[ALICE]
    memories = alice.get("/v1/memories", params={"limit": 200}).json()["items"]
    return {
        "session": alice.get(f"/v1/sessions/{held.done.session}").json(),
        "events": alice.get(f"/v1/sessions/{held.done.session}/events").json(),
        "waiting": alice.get(f"/v1/sessions/{held.waiting.session}/events").json(),
        "run": alice.get(f"/v1/runs/{held.waiting_run}").json(),
        "memories": memories,
    }


@pytest.mark.parametrize(("probe", "relation"), _matrix())
def test_foreign_or_deleted_resource_is_indistinguishable_from_none(
    world: World, probe: Probe, relation: str
) -> None:
    caller_token = CALLERS[relation]
    caller = world.holdings[caller_token]
    victim = world.holdings[ALICE]
    client = world.client(caller_token)
    target = probe.gone(victim) if relation.startswith("deleted") else probe.live(victim)
    before = _victim_snapshot(world)

    response = probe.send(client, caller, target)
    plain = probe.send(client, caller, NEVER[probe.kind])
    other_plain = probe.send(client, caller, ALSO_NEVER[probe.kind])

    _plain_404(plain)
    assert plain.content == other_plain.content, "the plain 404 must be one constant per route"
    assert NEVER[probe.kind] not in plain.text, "a plain 404 never echoes the requested id"
    expected = EXCEPTIONS.get((probe.route, relation), "plain")
    if expected == "plain":
        _plain_404(response)
        assert response.content == plain.content
        assert response.headers["content-type"] == plain.headers["content-type"]
    elif expected == "reason_deleted":
        assert response.status_code == 404, response.text
        assert response.json()["error"]["code"] == "not_found"
        assert response.json()["error"]["details"] == {"reason": "deleted"}
    elif expected == "tombstone_204":
        assert response.status_code == 204 and response.content == b""
    else:
        assert expected == "survives_detached"
        assert response.status_code == 200, response.text
        revisions = response.json()["revisions"]
        assert revisions and all(r["authoring_run_id"] is None for r in revisions)
    assert _victim_snapshot(world) == before, "a refused request changed the owner's data"


LISTS: dict[str, tuple[str, Callable[[Holdings], set[str]]]] = {
    "GET /v1/sessions": ("/v1/sessions", lambda h: {h.done.session, h.waiting.session}),
    "GET /v1/memories": ("/v1/memories", lambda h: set(h.done.memories)),
    "GET /v1/knowledge/documents": ("/v1/knowledge/documents", lambda h: set(h.done.kdocs)),
}
LIST_RELATIONS = ("same_tenant", "other_tenant", "deleted_owner")


def _walk(client: httpx.Client, path: str) -> list[str]:
    """Every item id of a paginated list, two per page (so cursors are exercised)."""
    ids: list[str] = []
    params: dict[str, Any] = {"limit": 2}
    while True:
        response = client.get(path, params=params)
        assert response.status_code == 200, response.text
        page = response.json()
        ids += [item["id"] for item in page["items"]]
        if page["next_cursor"] is None:
            return ids
        params = {"limit": 2, "cursor": page["next_cursor"]}


@pytest.mark.parametrize(
    ("route", "relation"),
    [
        pytest.param(route, relation, id=f"{route} | {relation}")
        for route in LISTS
        for relation in LIST_RELATIONS
    ],
)
def test_lists_show_exactly_the_callers_live_items(world: World, route: str, relation: str) -> None:
    path, live = LISTS[route]
    caller_token = CALLERS[relation]
    caller = world.holdings[caller_token]
    victim = world.holdings[ALICE]
    seen = _walk(world.client(caller_token), path)
    assert len(seen) == len(set(seen)), "an item appeared twice in one walk"
    foreign = victim.done.ids() | victim.waiting.ids() | victim.deleted.ids()
    if relation == "deleted_owner":
        assert not set(seen) & caller.deleted.ids(), "a deleted session's item is still listed"
    else:
        assert not set(seen) & foreign, "another principal's item is listed"
    assert set(seen) == live(caller)


@pytest.mark.parametrize("relation", ["same_tenant", "other_tenant"])
def test_list_etag_ignores_other_principals_changes(world: World, relation: str) -> None:
    """The first page's ETag of bob or carol survives alice creating, running and deleting a
    session: it never depends on another principal's data."""
    observer = world.client(CALLERS[relation])
    first = observer.get("/v1/sessions")
    etag = first.headers["ETag"]
    alice = world.client(ALICE)
    sid = alice.post("/v1/sessions", json={}).json()["id"]
    run = alice.post(f"/v1/sessions/{sid}/runs", json={"input": message("hi")}).json()
    with alice.stream(
        "GET", f"/v1/runs/{run['id']}/events", headers={"Accept": "text/event-stream"}
    ) as stream:
        for _ in stream.iter_bytes():
            pass
    assert alice.delete(f"/v1/sessions/{sid}").status_code == 204
    again = observer.get("/v1/sessions", headers={"If-None-Match": etag})
    assert again.status_code == 304, again.text
    assert again.headers["ETag"] == etag


@pytest.mark.parametrize(
    ("probe", "token"),
    [
        pytest.param(probe, token, id=f"{probe.route} | {token or 'no token'}")
        for probe in PROBES
        for token in (None, "dev-nobody", "dev-alice-readonly")
        if not (token == "dev-alice-readonly" and probe.route.startswith("GET"))
    ],
)
def test_auth_failures_do_not_depend_on_existence(
    world: World, probe: Probe, token: str | None
) -> None:
    """401 and 403 come before existence: the answer for alice's real resource is the
    answer for one that never existed, byte for byte (CONTRACT §1, order of checks)."""
    client = world.client(token)
    alice = world.holdings[ALICE]
    real = probe.send(client, alice, probe.live(alice))
    never = probe.send(client, alice, NEVER[probe.kind])
    assert real.status_code == never.status_code == (401 if token != READONLY else 403)
    assert real.content == never.content
