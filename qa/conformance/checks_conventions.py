"""Rules of CONTRACT §1 (conventions) seen from outside: authentication, the order of
checks, validation, body limits, unknown routes, the OpenAPI document, the resource shapes
of §2. The envelope of every error answer is judged at the end (`checks_envelope`)."""

from __future__ import annotations

import re
from typing import Any

from qa.conformance import fixtures
from qa.conformance.probe import Answer, RuleFailed, expect, oversized_post, seg
from qa.conformance.rules import rule
from qa.conformance.world import World, message, never_existed

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
ONE_MIB = 1024 * 1024

#: The sixteen operations of §3, path parameters written `{}`.
ROUTES = frozenset(
    {
        ("GET", "/v1/sessions"),
        ("POST", "/v1/sessions"),
        ("GET", "/v1/sessions/{}"),
        ("DELETE", "/v1/sessions/{}"),
        ("POST", "/v1/sessions/{}/runs"),
        ("GET", "/v1/sessions/{}/events"),
        ("GET", "/v1/runs/{}"),
        ("GET", "/v1/runs/{}/events"),
        ("POST", "/v1/runs/{}/cancel"),
        ("POST", "/v1/approvals/{}/decision"),
        ("GET", "/v1/artifacts/{}"),
        ("GET", "/v1/artifacts/{}/content"),
        ("GET", "/v1/memories"),
        ("POST", "/v1/memories/{}/rejection"),
        ("GET", "/v1/knowledge/documents"),
        ("GET", "/v1/skills/{}"),
    }
)


def expect_status(answer: Answer, status: int, code: str | None = None) -> None:
    """The answer has `status` (and, for an error, the envelope's `code`)."""
    expect(answer.status == status, f"{answer.what()}, expected {status}")
    if code is not None:
        expect(answer.code() == code, f"{answer.what()}: error.code {answer.code()!r}, not {code}")


@rule("auth.unauthenticated", "§1", "a missing, unknown or non-Bearer token is 401 unauthenticated")
async def unauthenticated(world: World) -> None:
    p = world.probe
    session_id = never_existed("ses_")
    for headers, token in (
        ({}, None),
        ({}, f"conformance-unknown-{world.nonce}"),
        ({"Authorization": f"Basic {p.a}"}, None),
    ):
        for path in ("/v1/sessions", f"/v1/sessions/{seg(session_id)}"):
            expect_status(
                await p.call("GET", path, token=token, headers=headers), 401, "unauthenticated"
            )


@rule("order.auth-first", "§1", "authentication is checked before syntax and existence")
async def auth_first(world: World) -> None:
    p = world.probe
    expect_status(await p.call("GET", "/v1/sessions", token=None, params={"limit": "0"}), 401)
    expect_status(await p.call("GET", f"/v1/sessions/{never_existed('ses_')}", token=None), 401)
    expect_status(
        await p.call("POST", f"/v1/sessions/{never_existed('ses_')}/runs", token=None, body={}),
        401,
    )


@rule("order.syntax-before-existence", "§1", "a bad request is 400 even for an id that is absent")
async def syntax_first(world: World) -> None:
    p = world.probe
    absent = never_existed("ses_")
    expect_status(
        await p.call("POST", f"/v1/sessions/{seg(absent)}/runs", token=p.a, body={"input": 5}),
        400,
        "invalid_request",
    )
    expect_status(
        await p.call("GET", f"/v1/sessions/{seg(absent)}/events", token=p.a, params={"limit": "0"}),
        400,
        "invalid_request",
    )


@rule(
    "order.existence-before-state",
    "§1",
    "another principal's session with an active run is 404 to it, never 409",
)
async def existence_first(world: World) -> None:
    p = world.probe
    pending = await fixtures.approval(world)
    path = f"/v1/sessions/{seg(pending.session_id)}"
    expect_status(await p.call("DELETE", path, token=p.b), 404, "not_found")
    expect_status(
        await p.call("POST", f"{path}/runs", token=p.b, body={"input": message("x")}),
        404,
        "not_found",
    )


@rule("validation.parameters", "§1 §3", "bad limits and malformed bodies are 400, never 422")
async def validation(world: World) -> None:
    p = world.probe
    for limit in ("0", "201", "-1", "abc", "1.5"):
        expect_status(
            await p.call("GET", "/v1/sessions", token=p.a, params={"limit": limit}),
            400,
            "invalid_request",
        )
    expect_status(await p.call("GET", "/v1/sessions", token=p.a, params={"limit": "200"}), 200)
    base = await fixtures.basic(world)
    events = f"/v1/sessions/{seg(base.session_id)}/events"
    for limit in ("0", "1001"):
        expect_status(
            await p.call("GET", events, token=p.a, params={"limit": limit}), 400, "invalid_request"
        )
    runs = f"/v1/sessions/{seg(base.session_id)}/runs"
    bad_inputs: list[Any] = [
        None,
        {},
        {"input": {"role": "user", "content": []}},
        {"input": {"role": "assistant", "content": [{"type": "text", "text": "x"}]}},
        {"input": "text"},
    ]
    for body in bad_inputs:
        sent = b"{" if body is None else None
        answer = await p.call("POST", runs, token=p.a, body=body, content=sent)
        expect_status(answer, 400, "invalid_request")


@rule("validation.unknown-keys", "§1", "unknown keys in a request body are ignored")
async def unknown_keys(world: World) -> None:
    p = world.probe
    answer = await p.call("POST", "/v1/sessions", token=p.a, body={f"x_{world.nonce}": 1})
    expect_status(answer, 201)
    world.created.append((p.a, str(answer.obj().get("id"))))


@rule("limits.body-413", "§1", "a request body over 1 MiB is 413 payload_too_large")
async def too_large(world: World) -> None:
    answer = await oversized_post(world.probe, "/v1/sessions", ONE_MIB + 1)
    expect_status(answer, 413, "payload_too_large")


@rule("routes.unknown-404", "§1", "an unknown route is 404 not_found in the envelope")
async def unknown_route(world: World) -> None:
    p = world.probe
    expect_status(
        await p.call("GET", f"/v1/conformance-{world.nonce}", token=p.a), 404, "not_found"
    )


@rule("routes.openapi", "§1 §3", "/openapi.json describes exactly the sixteen /v1 operations")
async def openapi(world: World) -> None:
    answer = await world.probe.call("GET", "/openapi.json", token=None)
    expect_status(answer, 200)
    paths = answer.obj().get("paths")
    if not isinstance(paths, dict):
        raise RuleFailed("/openapi.json has no paths object")
    seen: set[tuple[str, str]] = set()
    for path, operations in paths.items():
        if not str(path).startswith("/v1") or not isinstance(operations, dict):
            continue
        shape = re.sub(r"\{[^}]*\}", "{}", str(path))
        for method in operations:
            if method.lower() in {"get", "post", "put", "patch", "delete", "head", "options"}:
                seen.add((method.upper(), shape))
    extra, missing = sorted(seen - ROUTES), sorted(ROUTES - seen)
    expect(not extra and not missing, f"/openapi.json: extra {extra}, missing {missing}")


def _expect_view(view: dict[str, Any], keys: dict[str, tuple[type, ...]], what: str) -> None:
    for key, types in keys.items():
        expect(key in view, f"{what} lacks {key!r}")
        expect(isinstance(view[key], types), f"{what}: {key} is {type(view[key]).__name__}")
    for key in ("created_at", "updated_at", "completed_at"):
        value = view.get(key)
        if isinstance(value, str):
            expect(bool(TIMESTAMP.match(value)), f"{what}: {key} {value!r} is not ...ffffffZ")


@rule("resources.shapes", "§1 §2", "SessionView, RunView and Event have the contract's fields")
async def shapes(world: World) -> None:
    base = await fixtures.basic(world)
    opt = (str, type(None))
    p = world.probe
    session = (await p.call("GET", f"/v1/sessions/{seg(base.session_id)}", token=p.a)).obj()
    _expect_view(
        session,
        {
            "id": (str,),
            "title": opt,
            "created_at": (str,),
            "updated_at": (str,),
            "active_run_id": opt,
            "last_run_id": opt,
        },
        "SessionView",
    )
    expect(session["id"].startswith("ses_"), f"session id {session['id']!r} lacks ses_")
    run = await world.run_view(base.run_id)
    _expect_view(
        run,
        {
            "id": (str,),
            "session_id": (str,),
            "status": (str,),
            "created_at": (str,),
            "updated_at": (str,),
            "completed_at": opt,
            "cancel_requested": (bool,),
        },
        "RunView",
    )
    expect(run["id"].startswith("run_"), f"run id {run['id']!r} lacks run_")
    for event in await world.events(base.session_id):
        _expect_view(
            event,
            {
                "session_id": (str,),
                "run_id": opt,
                "sequence": (int,),
                "type": (str,),
                "created_at": (str,),
                "data": (dict,),
            },
            "Event",
        )
