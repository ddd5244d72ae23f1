"""Property-based fuzzing of the sixteen /v1 routes with Schemathesis, from outside.

The schema is the server's own `/openapi.json`. For every operation, Schemathesis generates
requests from it (positive data: what the description allows; negative data: what it
forbids), Hypothesis picks the caller among every development token plus a missing and an
unknown one, and path ids are drawn either from what the seeding really created (every
principal's, a deleted session's) or freshly generated. Each answer must pass:

- Schemathesis' checks: no 5xx, a documented status, the documented content type and
  headers, a body that conforms to the response schema, negative data rejected;
- the contract's checks: every 4xx/5xx is exactly `{"error": {"code", "message",
  "details"?}}` with the code that belongs to its status, and never a 422.

Deterministic (`derandomize`) and bounded: `CONVERGE_FUZZ_EXAMPLES` (default 15) examples per
operation and mode. Traffic goes to the module's loopback server only.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis import Case, CheckContext, GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.config._checks import NEGATIVE_DATA_REJECTION_EXPECTED_STATUSES
from schemathesis.core.failures import Failure
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from server_stub.config import ServerSettings
from server_stub.edge.app import create_app
from tests.contract import ERROR_CODES, SIXTEEN_OPERATIONS
from tests.reliability.conftest import ALICE, BOB, CAROL, OWNERS, READONLY, World, seed

EXAMPLES = int(os.environ.get("CONVERGE_FUZZ_EXAMPLES", "15"))
STATUSES: dict[str, list[int]] = {}  # "<label> <mode>" → statuses answered (for the report)
TOKENS: tuple[str | None, ...] = (ALICE, BOB, CAROL, READONLY, None, "dev-nobody")

SSE_ACCEPT = {"Accept": "text/event-stream"}
HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


def _operations(document: dict[str, Any]) -> set[tuple[str, str]]:
    return {
        (method.upper(), path)
        for path, item in document["paths"].items()
        for method in item
        if method in HTTP_METHODS
    }


def _static_description() -> dict[str, Any]:
    """The app's description, built without starting it, to name the test cases."""
    app = create_app(ServerSettings(database_url="sqlite://", control=True))
    return dict(app.openapi())


def _free_string(schema: dict[str, Any]) -> bool:
    return {k: v for k, v in schema.items() if k not in ("title", "description")} == {
        "type": "string"
    }


def _cases() -> Iterator[Any]:
    """(operation, mode) pairs; negative only where the description forbids something: a
    body, or a parameter that is not a free-form string (an id in the path or a string
    header admits every value, so there is no invalid one to generate)."""
    document = _static_description()
    for method, path in sorted(_operations(document), key=lambda op: (op[1], op[0])):
        operation = document["paths"][path][method.lower()]
        label = f"{method} {path}"
        yield pytest.param(label, GenerationMode.POSITIVE, id=f"{label} positive")
        constrained = "requestBody" in operation or any(
            _free_string(p["schema"]) is False for p in operation.get("parameters", [])
        )
        if constrained:
            yield pytest.param(label, GenerationMode.NEGATIVE, id=f"{label} negative")


def envelope_conformance(ctx: CheckContext, response: Any, case: Case[Any]) -> bool | None:
    """Every 4xx/5xx is the contract's envelope, with the code of its status; no 422."""
    status = response.status_code
    if status == 422:
        raise Failure(operation=case.operation.label, title="422 answered", message="never 422")
    if status < 400:
        return None
    try:
        body = response.json()
    except ValueError as exc:
        raise Failure(
            operation=case.operation.label,
            title="error outside the envelope",
            message=f"{status} body is not JSON: {response.content[:200]!r}",
        ) from exc
    error = body.get("error") if isinstance(body, dict) else None
    problems = []
    if not isinstance(body, dict) or set(body) != {"error"} or not isinstance(error, dict):
        problems.append("the body is not exactly {'error': {...}}")
    else:
        if not set(error) <= {"code", "message", "details"} or not {"code", "message"} <= set(
            error
        ):
            problems.append(f"error keys {sorted(error)}")
        if error.get("code") != ERROR_CODES.get(status):
            problems.append(f"code {error.get('code')!r} for status {status}")
        if not isinstance(error.get("message"), str) or not error.get("message"):
            problems.append("message is not a non-empty string")
        if "details" in error and not isinstance(error["details"], dict):
            problems.append("details is not an object")
    if problems:
        raise Failure(
            operation=case.operation.label,
            title="error outside the envelope",
            message=f"{status} {body!r}: " + "; ".join(problems),
        )
    return None


TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z")


def _timestamps(node: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key.endswith("_at") and value is not None:
                yield f"{path}.{key}", value
            yield from _timestamps(value, f"{path}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _timestamps(value, f"{path}[{index}]")


def timestamp_format(ctx: CheckContext, response: Any, case: Case[Any]) -> bool | None:
    """Every `*_at` of a JSON answer is written `YYYY-MM-DDTHH:MM:SS.ffffffZ` (CONTRACT §1),
    which the description's plain `string` does not say."""
    if response.status_code >= 300 or "json" not in response.headers.get("content-type", [""])[0]:
        return None
    bad = [
        (where, value)
        for where, value in _timestamps(response.json())
        if not (isinstance(value, str) and TIMESTAMP.fullmatch(value))
    ]
    if bad:
        raise Failure(
            operation=case.operation.label,
            title="timestamp not in the contract's format",
            message=repr(bad[:5]),
        )
    return None


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
    envelope_conformance,
    timestamp_format,
]


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def world(request: pytest.FixtureRequest, module_server: Any) -> World:
    """A seeded server per backend."""
    return seed(module_server(str(request.param)))


@pytest.fixture(scope="module")
def schema(world: World) -> Any:
    """The live server's own description, loaded over loopback."""
    # A body past the server's 1 MiB is refused with 413 before it is read (CONTRACT §1),
    # which Schemathesis' list of rejections lacks: negative data grows past it now and then.
    rejected = [*NEGATIVE_DATA_REJECTION_EXPECTED_STATUSES, "413"]
    config = schemathesis.Config.from_dict(
        {
            "generation": {"with-security-parameters": False},
            "checks": {"negative_data_rejection": {"expected-statuses": rejected}},
        }
    )
    return schemathesis.openapi.from_url(f"{world.server.url}/openapi.json", config=config)


class IdPools:
    """Real ids to draw path parameters from: every principal's, deleted ones included.

    DELETE draws from sessions it may destroy (spare ones, the waiting session that answers
    409, a deleted one that answers 204 again), so that the other operations keep finding
    the seeded graphs.
    """

    def __init__(self, world: World) -> None:
        self._by_owner: dict[str, dict[str, list[str]]] = {}
        for token, held in world.holdings.items():
            graphs = (held.done, held.waiting, held.deleted)
            self._by_owner[token] = {
                "session_id": [g.session for g in graphs],
                "run_id": [r for g in graphs for r in g.runs],
                "approval_id": [a for g in graphs for a in g.approvals],
                "artifact_id": [a for g in graphs for a in g.artifacts],
                "memory_id": [m for g in graphs for m in g.memories],
                "skill_id": [k for g in graphs for k in g.skills],
                "deletable": [*held.spare, held.waiting.session, held.deleted.session],
            }

    def own(self, token: str | None, name: str, deleting: bool) -> list[str]:
        """The caller's ids (alice's for a read-only, missing or unknown token)."""
        owner = token if token in self._by_owner else ALICE
        return self._by_owner[owner]["deletable" if deleting else name]

    def all(self, name: str, deleting: bool) -> list[str]:
        """Everyone's ids."""
        key = "deletable" if deleting else name
        return [i for pools in self._by_owner.values() for i in pools[key]]


def test_openapi_describes_exactly_the_sixteen_v1_operations(world: World) -> None:
    document = world.client(None).get("/openapi.json").json()
    assert _operations(document) == SIXTEEN_OPERATIONS
    assert _operations(_static_description()) == SIXTEEN_OPERATIONS


@pytest.mark.parametrize(("label", "mode"), list(_cases()))
def test_operation_survives_fuzzing(
    world: World, schema: Any, label: str, mode: GenerationMode
) -> None:
    operation = schema[label.split(" ", 1)[1]][label.split(" ", 1)[0]]
    pools = IdPools(world)
    deleting = label.startswith("DELETE")
    http = requests.Session()
    strategy = operation.as_strategy(generation_mode=mode)
    seen: list[int] = []

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )
    @given(data=st.data())
    def fuzz(data: st.DataObject) -> None:
        case = data.draw(strategy, label="case")
        token = data.draw(st.sampled_from(TOKENS), label="token")
        for name in list(case.path_parameters or {}):
            origin = data.draw(st.sampled_from(("own", "anyone's", "generated")), label=name)
            pool = (
                pools.own(token, name, deleting) if origin == "own" else pools.all(name, deleting)
            )
            if origin != "generated" and pool:
                case.path_parameters[name] = data.draw(st.sampled_from(pool), label=f"{name} id")
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        response = case.call(base_url=world.server.url, session=http, headers=headers, timeout=30)
        seen.append(response.status_code)
        key = f"{world.server.backend} {label} {mode.value}"
        STATUSES.setdefault(key, []).append(response.status_code)
        case.validate_response(response, checks=CHECKS, headers=headers)

    try:
        fuzz()
    finally:
        http.close()
    assert seen, "no example was sent"
    if mode is GenerationMode.POSITIVE:
        # Coverage, not behaviour: valid input with the owner's ids must reach the handler's
        # success path at least once, else the run proved little beyond 401/404.
        assert any(200 <= s < 300 for s in seen), f"no success among {sorted(set(seen))}"


@pytest.fixture(scope="module", autouse=True)
def _report() -> Iterator[None]:
    """With CONVERGE_FUZZ_REPORT=FILE, write the statuses seen per operation and mode."""
    yield
    target = os.environ.get("CONVERGE_FUZZ_REPORT")
    if target:
        summary = {
            key: {str(code): codes.count(code) for code in sorted(set(codes))}
            for key, codes in sorted(STATUSES.items())
        }
        Path(target).write_text(json.dumps({"examples": EXAMPLES, "statuses": summary}, indent=1))


def test_every_owner_was_seeded(world: World) -> None:
    """The pools hold real ids of each principal (else the fuzzer would only see 404s)."""
    for token in OWNERS:
        held = world.holdings[token]
        assert held.done.artifacts and held.done.memories and held.done.skills, token
        assert held.done.kdocs and held.pending_approval, token


# Inputs a generator rarely reaches, each of which once answered 500 or dropped the
# connection (fixed in server_stub; see docs/reliability.md). (name, method, path, kwargs,
# expected status; 0 means "the plain 404 of that route")
HOSTILE: list[tuple[str, str, str, dict[str, Any], int]] = [
    ("NUL in a session id", "GET", "/v1/sessions/ses_%00x", {}, 0),
    ("NUL in a run id", "POST", "/v1/runs/run_%00x/cancel", {}, 0),
    ("5000-character id", "GET", "/v1/artifacts/" + "a" * 5000, {}, 0),
    (
        "NUL in a rejection reason",
        "POST",
        "{memory}/rejection",
        {"json": {"reason": "a\x00b"}},
        201,
    ),
    (
        "NUL in a rejection session_id",
        "POST",
        "{memory}/rejection",
        {"json": {"session_id": "ses_\x00"}},
        0,
    ),
    (
        "NUL in a /remember text",
        "POST",
        "{fresh}/runs",
        {
            "json": {
                "input": {"role": "user", "content": [{"type": "text", "text": "/remember a\x00b"}]}
            }
        },
        202,
    ),
    (
        "lone surrogate in a body",
        "POST",
        "{memory}/rejection",
        {"content": b'{"reason": "\\ud800"}', "headers": {"Content-Type": "application/json"}},
        400,
    ),
    (
        "100000-deep JSON body",
        "POST",
        "{memory}/rejection",
        {
            "content": b"[" * 100_000 + b"]" * 100_000,
            "headers": {"Content-Type": "application/json"},
        },
        400,
    ),
    (
        "invalid UTF-8 body",
        "POST",
        "{memory}/rejection",
        {"content": b'{"reason": "\xff"}', "headers": {"Content-Type": "application/json"}},
        400,
    ),
    ("5000-digit limit", "GET", "/v1/sessions?limit=" + "9" * 5000, {}, 400),
    ("after past 2^31", "GET", "{done}/events?after=4611686018427387904", {}, 200),
    (
        "Last-Event-ID past 2^31",
        "GET",
        "{run}/events",
        {"headers": {"Accept": "text/event-stream", "Last-Event-ID": str(2**40)}},
        200,
    ),
    (
        "30-digit Last-Event-ID",
        "GET",
        "{run}/events",
        {"headers": {"Accept": "text/event-stream", "Last-Event-ID": "9" * 30}},
        200,
    ),
]


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in HOSTILE],
)
def test_hostile_input_is_answered_in_the_contract(
    world: World, method: str, path: str, kwargs: dict[str, Any], expected: int
) -> None:
    held = world.holdings[ALICE]
    fresh = world.client(ALICE).post("/v1/sessions", json={}).json()["id"]
    path = path.format(
        memory=f"/v1/memories/{held.done.memories[0]}",
        done=f"/v1/sessions/{held.done.session}",
        fresh=f"/v1/sessions/{fresh}",
        run=f"/v1/runs/{held.done.runs[0]}",
    )
    # A fresh connection each time: a 500 may close it, which would blame the next case.
    with (
        httpx.Client(
            base_url=world.server.url, headers={"Authorization": f"Bearer {ALICE}"}, timeout=30
        ) as client,
        client.stream(method, path, **kwargs) as response,
    ):
        body = response.read()
        status = response.status_code
    world.server.statuses.append((method, path, status))
    if expected == 0:
        assert status == 404, body
        error = json.loads(body)["error"]
        assert error["code"] == "not_found" and "details" not in error
    else:
        assert status == expected, body
    if status >= 400:
        error = json.loads(body)["error"]
        assert error["code"] == ERROR_CODES[status]


def _paths() -> list[Any]:
    document = _static_description()
    return [
        pytest.param(path, sorted(m.upper() for m in item if m in HTTP_METHODS), id=path)
        for path, item in sorted(document["paths"].items())
    ]


@pytest.mark.parametrize(("path", "documented"), _paths())
def test_undocumented_methods_are_405_naming_the_documented_ones(
    world: World, path: str, documented: list[str]
) -> None:
    """Every method the description does not list on a path answers 405 in the envelope,
    with an `Allow` header naming exactly the documented methods (RFC 9110)."""
    url = path.format(
        **{
            name: "x_1"
            for name in (
                "session_id",
                "run_id",
                "approval_id",
                "artifact_id",
                "memory_id",
                "skill_id",
            )
        }
    )
    client = world.client(ALICE)
    for method in ("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"):
        if method in documented:
            continue
        response = client.request(method, url)
        assert response.status_code == 405, (method, response.text)
        assert response.json()["error"]["code"] == "method_not_allowed"
        allowed = sorted(m.strip() for m in response.headers["Allow"].split(","))
        assert allowed == documented, (method, allowed)


def _frames(body: str) -> list[dict[str, str]]:
    frames = []
    for block in body.split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            if line and not line.startswith(":"):
                name, _, value = line.partition(": ")
                fields[name] = value
        if fields:
            frames.append(fields)
    return frames


def test_sse_frames_conform_to_the_event_schema(world: World) -> None:
    """The SSE form of route 8, which Schemathesis cannot fuzz: every frame of every finished
    run of alice's is `id: <sequence>`, `event: <type>`, `data: <Event>` with the Event valid
    against the description, the same events as the JSON form, and `Last-Event-ID` resumes
    strictly after it."""
    import jsonschema_rs

    document = world.client(None).get("/openapi.json").json()
    event_schema = document["components"]["schemas"]["Event"]
    validator = jsonschema_rs.validator_for(event_schema)
    client = world.client(ALICE)
    for run_id in world.holdings[ALICE].done.runs:
        with client.stream("GET", f"/v1/runs/{run_id}/events", headers=SSE_ACCEPT) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
            frames = _frames(stream.read().decode())
        events = [json.loads(frame["data"]) for frame in frames]
        for frame, event in zip(frames, events, strict=True):
            validator.validate(event)
            assert frame["id"] == str(event["sequence"]) and frame["event"] == event["type"]
        assert events == client.get(f"/v1/runs/{run_id}/events").json()["items"]
        assert events[-1]["type"] in ("run.completed", "run.failed", "run.cancelled")
        middle = events[len(events) // 2]["sequence"]
        headers = {**SSE_ACCEPT, "Last-Event-ID": str(middle)}
        with client.stream("GET", f"/v1/runs/{run_id}/events", headers=headers) as stream:
            resumed = [json.loads(f["data"]) for f in _frames(stream.read().decode())]
        assert resumed == [e for e in events if e["sequence"] > middle]
