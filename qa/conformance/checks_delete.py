"""Deletion (CONTRACT §3, route 4 and note 3): 204 and 204 again (the tombstone), 409 while
a run is active with nothing deleted, the owner's `reason: deleted` against everyone else's
plain 404, and the purge as far as the public routes can see it."""

from __future__ import annotations

from qa.conformance import fixtures
from qa.conformance.checks_conventions import expect_status
from qa.conformance.probe import expect, seg
from qa.conformance.rules import rule
from qa.conformance.world import ACTIVE, TERMINAL, World, message, never_existed


@rule("delete.idempotent", "§3", "DELETE answers 204 with no body, and 204 again on every repeat")
async def idempotent(world: World) -> None:
    p = world.probe
    session_id = (await world.session())["id"]
    for attempt in ("first", "second", "third"):
        answer = await p.call("DELETE", f"/v1/sessions/{seg(session_id)}", token=p.a)
        expect(answer.status == 204, f"{answer.what()} on the {attempt} DELETE, expected 204")
        expect(answer.body == b"", f"the {attempt} DELETE's 204 has a body")


@rule(
    "delete.active-run-409",
    "§3",
    "DELETE during a run is 409 active_run_exists naming the run, and deletes nothing",
)
async def active_run(world: World) -> None:
    p = world.probe
    session_id = (await world.session())["id"]
    run = await world.start(session_id, "/wait 20")
    await world.until(run["id"], ACTIVE)
    path = f"/v1/sessions/{seg(session_id)}"
    try:
        answer = await p.call("DELETE", path, token=p.a)
        expect_status(answer, 409, "invalid_state")
        details = answer.details()
        expect(
            details.get("reason") == "active_run_exists"
            and details.get("active_run_id") == run["id"],
            f"{answer.what()}: details {details}, expected active_run_exists and {run['id']}",
        )
        expect_status(await p.call("GET", path, token=p.a), 200)
    finally:
        await p.call("POST", f"/v1/runs/{seg(run['id'])}/cancel", token=p.a)
    await world.until(run["id"], TERMINAL)
    expect_status(await p.call("DELETE", path, token=p.a), 204)


@rule(
    "delete.tombstone-reads",
    "§3",
    "a deleted session: owner 404 reason deleted, others and every other route the plain 404",
)
async def tombstone_reads(world: World) -> None:
    p = world.probe
    session_id, run_id = await world.finished(f"/artifact gone-{world.nonce}.txt gone")
    events = await world.events(session_id)
    artifacts = [
        e["data"].get("artifact_id") for e in events if e.get("type") == "artifact.created"
    ]
    expect(bool(artifacts), "the /artifact run stored no artifact")
    expect_status(await p.call("DELETE", f"/v1/sessions/{seg(session_id)}", token=p.a), 204)
    own = await p.call("GET", f"/v1/sessions/{seg(session_id)}", token=p.a)
    expect_status(own, 404, "not_found")
    expect(own.details().get("reason") == "deleted", f"{own.what()}: no details.reason deleted")
    reads = [
        ("GET", "/v1/sessions/{}", session_id, p.b),
        ("GET", "/v1/sessions/{}/events", session_id, p.a),
        ("POST", "/v1/sessions/{}/runs", session_id, p.a),
        ("GET", "/v1/runs/{}", run_id, p.a),
        ("GET", "/v1/runs/{}/events", run_id, p.a),
        ("GET", "/v1/artifacts/{}", str(artifacts[0]), p.a),
        ("GET", "/v1/artifacts/{}/content", str(artifacts[0]), p.a),
    ]
    for method, template, real, token in reads:
        prefix = real.split("_", 1)[0] + "_"
        body = {"input": message("x")} if method == "POST" else None
        gone = await p.call(method, template.format(seg(real)), token=token, body=body)
        absent = await p.call(
            method, template.format(seg(never_existed(prefix))), token=token, body=body
        )
        route = f"{method} {template.format('{id}')}"
        expect(gone.status == 404, f"{route}: {gone.status} for a deleted session's id")
        expect(gone.body == absent.body, f"{route}: a deleted session's 404 is not the plain one")
    expect(session_id not in (await world.walk()).ids(), "the deleted session is still listed")


@rule(
    "delete.purge-visible",
    "§3",
    "a deletion removes the session's memories and documents and detaches its skill revisions",
)
async def purge_visible(world: World) -> None:
    p = world.probe
    rich = await fixtures.rich(world)
    expect_status(await p.call("DELETE", f"/v1/sessions/{seg(rich.session_id)}", token=p.a), 204)
    memories = (await world.walk("/v1/memories")).ids()
    expect(rich.memory_id not in memories, f"memory {rich.memory_id} formed in it survives")
    documents = (await world.walk("/v1/knowledge/documents")).items
    left = [d.get("id") for d in documents if d.get("source_session_id") == rich.session_id]
    expect(not left, f"knowledge documents {left} sourced from it survive")
    skill = await p.call("GET", f"/v1/skills/{seg(rich.skill_id)}", token=p.a)
    expect_status(skill, 200)
    revisions = skill.obj().get("revisions") or []
    attached = [r for r in revisions if r.get("authoring_run_id") == rich.skill_run_id]
    expect(not attached, f"skill {rich.skill_id} still names run {rich.skill_run_id}")
