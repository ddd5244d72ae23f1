"""The envelope everywhere, the order of checks, 404 indistinguishability, limits, OpenAPI."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from server_stub.config import PrincipalEntry
from tests.conftest import LiveServer
from tests.contract import SIXTEEN_OPERATIONS
from tests.server.conftest import (
    message,
    new_session,
    run_to_end,
    start_run,
    wait_status,
    wait_terminal,
)

MISSING = {
    "ses": "ses_doesnotexist000000",
    "run": "run_doesnotexist000000",
    "apr": "apr_doesnotexist000000",
    "art": "art_doesnotexist000000",
    "mem": "mem_doesnotexist000000",
    "skl": "skl_doesnotexist000000",
}


def _envelope(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return dict(body["error"])


def _requests(ids: dict[str, str]) -> list[tuple[str, str, dict[str, Any]]]:
    """One request per route that names a resource, with a syntactically valid body."""
    return [
        ("GET", f"/v1/sessions/{ids['ses']}", {}),
        ("DELETE", f"/v1/sessions/{ids['ses']}", {}),
        ("POST", f"/v1/sessions/{ids['ses']}/runs", {"json": {"input": message("x")}}),
        ("GET", f"/v1/sessions/{ids['ses']}/events", {}),
        ("GET", f"/v1/runs/{ids['run']}", {}),
        ("GET", f"/v1/runs/{ids['run']}/events", {}),
        ("GET", f"/v1/runs/{ids['run']}/events", {"headers": {"Accept": "text/event-stream"}}),
        ("POST", f"/v1/runs/{ids['run']}/cancel", {}),
        ("POST", f"/v1/approvals/{ids['apr']}/decision", {"json": {"decision": "approve"}}),
        ("GET", f"/v1/artifacts/{ids['art']}", {}),
        ("GET", f"/v1/artifacts/{ids['art']}/content", {}),
        ("POST", f"/v1/memories/{ids['mem']}/rejection", {"json": {}}),
        ("GET", f"/v1/skills/{ids['skl']}", {}),
    ]


@pytest.fixture
def bobs_world(live_server: LiveServer) -> Iterator[dict[str, str]]:
    """Bob's session with a run waiting for approval, an artifact, a memory and a skill."""
    bob = live_server.client("dev-bob")
    sid = new_session(bob)
    run_to_end(bob, sid, "/artifact report.txt quarterly numbers")
    run_to_end(bob, sid, "/remember bob likes tea")
    skill_run = run_to_end(bob, sid, "/skill summarise")
    waiting = start_run(bob, sid, "/approve deploy")
    wait_status(bob, waiting["id"], "waiting_for_approval")
    events = bob.get(f"/v1/sessions/{sid}/events", params={"limit": 1000}).json()["items"]
    by_type = {e["type"]: e["data"] for e in events}
    world = {
        "ses": sid,
        "run": skill_run["id"],
        "apr": by_type["approval.requested"]["approval_id"],
        "art": by_type["artifact.created"]["artifact_id"],
        "mem": by_type["memory.formed"]["memory_id"],
        "skl": by_type["skill.published"]["skill_id"],
        "waiting_run": waiting["id"],
    }
    yield world
    bob.post(f"/v1/runs/{waiting['id']}/cancel")


def test_foreign_and_missing_ids_get_byte_identical_404s(
    live_server: LiveServer, bobs_world: dict[str, str]
) -> None:
    for token in ("dev-alice", "dev-carol"):
        caller = live_server.client(token)
        for (method, path, kw), (_, missing_path, mkw) in zip(
            _requests(bobs_world), _requests(MISSING), strict=True
        ):
            foreign = caller.request(method, path, **kw)
            missing = caller.request(method, missing_path, **mkw)
            assert foreign.status_code == missing.status_code == 404, (method, path)
            assert foreign.content == missing.content, (method, path)
            _envelope(foreign, 404, "not_found")
            assert "details" not in foreign.json()["error"]
            for value in bobs_world.values():
                assert value.encode() not in foreign.content


def test_everything_of_a_deleted_session_is_the_plain_404(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    run_to_end(alice, sid, "/artifact a.txt some text")
    run_to_end(alice, sid, "/remember alice likes maps")
    skill_run = run_to_end(alice, sid, "/skill mapping")
    approval_run = start_run(alice, sid, "/approve tool")
    wait_status(alice, approval_run["id"], "waiting_for_approval")
    alice.post(f"/v1/runs/{approval_run['id']}/cancel")
    wait_terminal(alice, approval_run["id"])
    events = alice.get(f"/v1/sessions/{sid}/events", params={"limit": 1000}).json()["items"]
    by_type = {e["type"]: e["data"] for e in events}
    ids = {
        "ses": sid,
        "run": skill_run["id"],
        "apr": by_type["approval.requested"]["approval_id"],
        "art": by_type["artifact.created"]["artifact_id"],
        "mem": by_type["memory.formed"]["memory_id"],
        "skl": "",
    }
    assert alice.delete(f"/v1/sessions/{sid}").status_code == 204
    deleted = alice.get(f"/v1/sessions/{sid}")
    assert _envelope(deleted, 404, "not_found")["details"] == {"reason": "deleted"}
    for (method, path, kw), (_, missing_path, mkw) in zip(
        _requests(ids)[2:-1], _requests(MISSING)[2:-1], strict=True
    ):
        gone = alice.request(method, path, **kw)
        assert gone.status_code == 404, (method, path)
        assert gone.content == alice.request(method, missing_path, **mkw).content
    # Another principal sees the plain 404 for the deleted session, not the reason.
    bob = live_server.client("dev-bob")
    assert (
        bob.get(f"/v1/sessions/{sid}").content == bob.get(f"/v1/sessions/{MISSING['ses']}").content
    )
    assert bob.delete(f"/v1/sessions/{sid}").status_code == 404


def test_missing_or_unknown_token_is_401(live_server: LiveServer) -> None:
    for client in (
        live_server.client(None),
        live_server.client("nope"),
        live_server.client(None, headers={"Authorization": "Basic abc"}),
    ):
        for method, path, kw in _requests(MISSING):
            _envelope(client.request(method, path, **kw), 401, "unauthenticated")
        _envelope(client.get("/v1/sessions"), 401, "unauthenticated")
        _envelope(client.post("/v1/sessions", content=b"{bad"), 401, "unauthenticated")
        _envelope(client.get("/v1/memories", params={"limit": 0}), 401, "unauthenticated")


def test_scope_403_comes_before_400_and_404(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    readonly = live_server.client("dev-alice-readonly")
    cases: list[tuple[str, str, dict[str, Any], str]] = [
        ("POST", "/v1/sessions", {"content": b"{not json"}, "session.write"),
        ("DELETE", f"/v1/sessions/{MISSING['ses']}", {}, "session.write"),
        ("DELETE", f"/v1/sessions/{sid}", {}, "session.write"),
        ("POST", f"/v1/sessions/{sid}/runs", {"content": b"[1,2"}, "run.write"),
        ("POST", f"/v1/sessions/{MISSING['ses']}/runs", {"json": {}}, "run.write"),
        ("POST", f"/v1/runs/{MISSING['run']}/cancel", {}, "run.cancel"),
        ("POST", f"/v1/approvals/{MISSING['apr']}/decision", {"json": {"x": 1}}, "approval.write"),
        ("POST", f"/v1/memories/{MISSING['mem']}/rejection", {"content": b"]"}, "memory.write"),
    ]
    for method, path, kw, scope in cases:
        error = _envelope(readonly.request(method, path, **kw), 403, "forbidden")
        assert error["details"] == {"required_scope": scope}
    # The read scopes work with the read-only token.
    assert readonly.get(f"/v1/sessions/{sid}").status_code == 200


def test_read_routes_need_their_read_scope(start_server: Callable[..., LiveServer]) -> None:
    server = start_server(
        principals=(
            PrincipalEntry("writer", "acme", "alice", frozenset({"session.write"})),
            PrincipalEntry("all", "acme", "alice", frozenset({"*"})),
        )
    )
    writer = server.client("writer")
    cases = [
        ("/v1/sessions?limit=0", "session.read"),
        ("/v1/sessions?cursor=forged", "session.read"),
        (f"/v1/sessions/{MISSING['ses']}", "session.read"),
        (f"/v1/sessions/{MISSING['ses']}/events?limit=abc", "run.read"),
        (f"/v1/runs/{MISSING['run']}", "run.read"),
        (f"/v1/runs/{MISSING['run']}/events", "run.read"),
        (f"/v1/artifacts/{MISSING['art']}", "artifact.read"),
        (f"/v1/artifacts/{MISSING['art']}/content", "artifact.read"),
        ("/v1/memories?limit=999", "memory.read"),
        ("/v1/knowledge/documents?cursor=x", "knowledge.read"),
        (f"/v1/skills/{MISSING['skl']}", "skill.read"),
    ]
    for path, scope in cases:
        error = _envelope(writer.get(path), 403, "forbidden")
        assert error["details"] == {"required_scope": scope}
    assert server.client("all").get("/v1/sessions").status_code == 200
    assert writer.post("/v1/sessions", json={}).status_code == 201


MALFORMED_BODIES = [b"{", b"not json", b"[]", b'"text"', b"null", b"\xff\xfe", b'{"input": 1}', b""]


def test_malformed_json_bodies_are_400(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    for body in MALFORMED_BODIES:
        response = alice.post(
            f"/v1/sessions/{sid}/runs", content=body, headers={"Content-Type": "application/json"}
        )
        _envelope(response, 400, "invalid_request")
    for body in MALFORMED_BODIES[:6]:
        _envelope(alice.post("/v1/sessions", content=body), 400, "invalid_request")


BAD_INPUTS = [
    None,
    {"role": "assistant", "content": [{"type": "text", "text": "x"}]},
    {"role": "user", "content": []},
    {"role": "user", "content": "hello"},
    {"role": "user", "content": [{"type": "video"}]},
    {"role": "user", "content": [{"type": "text"}]},
    {"role": "user", "content": [{"type": "image", "media_type": "image/png"}]},
]


def test_run_input_must_be_a_user_message_with_blocks(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    for value in BAD_INPUTS:
        body = {} if value is None else {"input": value}
        _envelope(alice.post(f"/v1/sessions/{sid}/runs", json=body), 400, "invalid_request")
        # Syntax (400) is checked before existence (404).
        _envelope(
            alice.post(f"/v1/sessions/{MISSING['ses']}/runs", json=body), 400, "invalid_request"
        )


def test_unknown_body_keys_are_ignored(live_server: LiveServer) -> None:
    alice = live_server.client()
    assert alice.post("/v1/sessions", json={"colour": "blue"}).status_code == 201
    sid = new_session(alice)
    response = alice.post(
        f"/v1/sessions/{sid}/runs", json={"input": message("x"), "model": "gpt", "extra": [1]}
    )
    assert response.status_code == 202
    wait_terminal(alice, response.json()["id"])


BAD_QUERIES = [
    "/v1/sessions?limit=0",
    "/v1/sessions?limit=201",
    "/v1/sessions?limit=abc",
    "/v1/sessions?limit=",
    "/v1/sessions?limit=1.5",
    "/v1/sessions?limit=-1",
    "/v1/sessions?limit=1&limit=2",
    "/v1/memories?limit=0",
    "/v1/memories?limit=201",
    "/v1/knowledge/documents?limit=x",
    "/v1/knowledge/documents?limit=1000",
    "/v1/sessions/ses_x/events?limit=1001",
    "/v1/sessions/ses_x/events?limit=0",
    "/v1/sessions/ses_x/events?after=-1",
    "/v1/sessions/ses_x/events?after=z",
]


def test_bad_query_parameters_are_400_never_422(live_server: LiveServer) -> None:
    client = live_server.client()
    for path in BAD_QUERIES:
        _envelope(client.get(path), 400, "invalid_request")


def test_bad_decision_bodies_are_400(live_server: LiveServer) -> None:
    alice = live_server.client()
    for body in ({}, {"decision": "maybe"}, {"decision": 1}, {"decision": "APPROVE"}):
        response = alice.post(f"/v1/approvals/{MISSING['apr']}/decision", json=body)
        _envelope(response, 400, "invalid_request")


def test_bad_rejection_bodies_are_400(live_server: LiveServer) -> None:
    alice = live_server.client()
    for body in ({"session_id": 5}, {"reason": ["x"]}):
        response = alice.post(f"/v1/memories/{MISSING['mem']}/rejection", json=body)
        _envelope(response, 400, "invalid_request")


def test_oversized_bodies_are_413(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    big = b'{"input": "' + b"x" * (1024 * 1024) + b'"}'
    declared = alice.post(
        f"/v1/sessions/{sid}/runs", content=big, headers={"Content-Type": "application/json"}
    )
    _envelope(declared, 413, "payload_too_large")
    # Before authentication, without reading the body.
    _envelope(live_server.client(None).post("/v1/sessions", content=big), 413, "payload_too_large")

    def chunks() -> Iterator[bytes]:
        for _ in range(20):
            yield b"x" * (64 * 1024)

    streamed = live_server.client().post(f"/v1/sessions/{sid}/runs", content=chunks())
    _envelope(streamed, 413, "payload_too_large")
    # Exactly 1 MiB is allowed (and then judged on its syntax).
    exact = b" " * (1024 * 1024 - 2) + b"{}"
    _envelope(alice.post(f"/v1/sessions/{sid}/runs", content=exact), 400, "invalid_request")


def test_unknown_routes_and_wrong_methods_use_the_envelope(live_server: LiveServer) -> None:
    alice = live_server.client()
    for path in ("/v1/nothing", "/v1", "/", "/v1/sessions/", "/v2/sessions", "/_stub/x"):
        error = _envelope(alice.get(path), 404, "not_found")
        assert "details" not in error
    assert alice.get("/v1/nothing").content == alice.get("/elsewhere").content
    for method, path in (
        ("PUT", "/v1/sessions"),
        ("PATCH", "/v1/sessions/ses_x"),
        ("GET", "/v1/runs/run_x/cancel"),
        ("DELETE", "/v1/runs/run_x"),
        ("GET", "/v1/approvals/apr_x/decision"),
    ):
        _envelope(alice.request(method, path), 405, "method_not_allowed")


def test_control_plane_exists_only_with_control(start_server: Callable[..., LiveServer]) -> None:
    server = start_server(control=False)
    client = server.client(None)
    _envelope(client.post("/_stub/sessions", json={}), 404, "not_found")
    _envelope(client.post("/_stub/maintenance"), 404, "not_found")


def test_openapi_describes_exactly_the_sixteen_operations(live_server: LiveServer) -> None:
    client = live_server.client(None)
    schema = client.get("/openapi.json").json()
    operations = {
        (method.upper(), path)
        for path, item in schema["paths"].items()
        for method in item
        if method in {"get", "post", "put", "delete", "patch"}
    }
    assert operations == SIXTEEN_OPERATIONS
    components = schema["components"]["schemas"]
    for name in ("SessionView", "SessionPage", "RunView", "Event", "Memory", "Skill", "Message"):
        assert name in components
    for item in schema["paths"].values():
        for op in item.values():
            assert "422" not in op.get("responses", {})
            for ref in _refs(op):
                assert ref.removeprefix("#/components/schemas/") in components
    docs = client.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def test_a_message_past_its_text_bound_is_400_and_starts_nothing(live_server: LiveServer) -> None:
    """A message's text blocks hold at most 100,000 code points together (decision 0193)."""
    alice = live_server.client()
    sid = new_session(alice)
    image = {"type": "image", "media_type": "image/png", "data": "iVBORw0KGgo="}
    text = [{"type": "text", "text": "é" * 50_000}] * 2
    at_bound = {"role": "user", "content": [*text, image]}  # an image's data is not text
    over = {"role": "user", "content": [*text, {"type": "text", "text": "x"}]}
    refused = alice.post(f"/v1/sessions/{sid}/runs", json={"input": over})
    error = _envelope(refused, 400, "invalid_request")
    assert error["details"] == {"field": "input.content", "max_characters": 100_000}
    session = alice.get(f"/v1/sessions/{sid}").json()
    assert session["last_run_id"] is None and session["active_run_id"] is None
    assert alice.get(f"/v1/sessions/{sid}/events").json()["items"] == []
    history = live_server.control().post(
        "/_stub/sessions", json={"token": "dev-alice", "messages": [over]}
    )
    _envelope(history, 400, "invalid_request")  # the control plane keeps the same bound
    accepted = alice.post(f"/v1/sessions/{sid}/runs", json={"input": at_bound})
    assert accepted.status_code == 202, accepted.text
    assert wait_terminal(alice, accepted.json()["id"])["status"] == "completed"


def test_a_rejection_reason_past_its_bound_is_400(live_server: LiveServer) -> None:
    alice = live_server.client()
    body = {"reason": "x" * 4_001}
    error = _envelope(
        alice.post(f"/v1/memories/{MISSING['mem']}/rejection", json=body), 400, "invalid_request"
    )
    assert error["details"] == {"field": "reason", "max_characters": 4_000}
