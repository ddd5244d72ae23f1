"""Ownership (CONTRACT §1, §2): another principal's resources answer the plain 404, byte for
byte the body of an id that never existed, on every route that takes an id, and never show
up in another principal's lists. Each route's plain 404 is one constant: the same for any
absent id and for either principal, never echoing the id."""

from __future__ import annotations

from typing import Any

from qa.conformance import fixtures
from qa.conformance.probe import Answer, expect, seg
from qa.conformance.rules import rule
from qa.conformance.world import World, message, never_existed


async def _same_404(world: World, method: str, template: str, real: str, body: Any) -> Answer:
    """B's answer for A's `real` id, compared with both principals' answers for absent
    ids of the same prefix; all three 404 and identical. Returns B's answer."""
    p = world.probe
    path = template.format(seg(real))
    prefix = real.split("_", 1)[0] + "_"
    theirs = await p.call(method, path, token=p.b, body=body)
    absent_b = await p.call(
        method, template.format(seg(never_existed(prefix))), token=p.b, body=body
    )
    absent_a = await p.call(
        method, template.format(seg(never_existed(prefix))), token=p.a, body=body
    )
    route = f"{method} {template.format('{id}')}"
    for answer, whose in ((theirs, "another principal's id"), (absent_b, "an absent id")):
        expect(answer.status == 404, f"{route}: {answer.status} for {whose}, expected 404")
    expect(
        theirs.body == absent_b.body,
        f"{route}: the 404 for another principal's id differs from an absent id's "
        f"({len(theirs.body)} against {len(absent_b.body)} bytes)",
    )
    expect(
        absent_a.status == 404 and absent_a.body == absent_b.body,
        f"{route}: the plain 404 is not one constant (two absent ids gave different bodies)",
    )
    expect(real.encode() not in theirs.body, f"{route}: the 404 body echoes the id")
    return theirs


@rule(
    "ownership.plain-404",
    "§1",
    "another principal's ids answer the plain 404, byte-identical to an absent id's",
)
async def plain_404(world: World) -> None:
    base = await fixtures.basic(world)
    rich = await fixtures.rich(world)
    pending = await fixtures.approval(world)
    s, r = base.session_id, base.run_id
    run_input = {"input": message("conformance")}
    cases: list[tuple[str, str, str, Any]] = [
        ("GET", "/v1/sessions/{}", s, None),
        ("GET", "/v1/sessions/{}/events", s, None),
        ("POST", "/v1/sessions/{}/runs", s, run_input),
        ("DELETE", "/v1/sessions/{}", s, None),
        ("GET", "/v1/runs/{}", r, None),
        ("GET", "/v1/runs/{}/events", r, None),
        ("POST", "/v1/runs/{}/cancel", pending.run_id, None),
        ("POST", "/v1/approvals/{}/decision", pending.approval_id, {"decision": "deny"}),
        ("GET", "/v1/artifacts/{}", rich.artifact_id, None),
        ("GET", "/v1/artifacts/{}/content", rich.artifact_id, None),
        ("POST", "/v1/memories/{}/rejection", rich.memory_id, {}),
        ("GET", "/v1/skills/{}", rich.skill_id, None),
    ]
    for method, template, real, body in cases:
        await _same_404(world, method, template, real, body)
    # Nothing the other principal asked for happened.
    p = world.probe
    after = await p.call("GET", f"/v1/sessions/{seg(s)}", token=p.a)
    expect(after.status == 200, f"{after.what()}: the other principal's DELETE removed it")
    run = await world.run_view(pending.run_id)
    expect(
        run.get("status") == "waiting_for_approval" and not run.get("cancel_requested"),
        f"the other principal's cancel or decision changed run {pending.run_id}",
    )


@rule(
    "ownership.lists",
    "§2 §3",
    "another principal's sessions, memories and documents never appear in its lists",
)
async def lists(world: World) -> None:
    base = await fixtures.basic(world)
    rich = await fixtures.rich(world)
    p = world.probe
    sessions = set((await world.walk(token=p.b)).ids())
    leaked = sessions & {base.session_id, rich.session_id}
    expect(not leaked, f"the other principal's index lists {sorted(leaked)}")
    memories = set((await world.walk("/v1/memories", token=p.b)).ids())
    expect(rich.memory_id not in memories, f"the other principal lists memory {rich.memory_id}")
    documents = (await world.walk("/v1/knowledge/documents", token=p.b)).items
    foreign = [d.get("id") for d in documents if d.get("source_session_id") == rich.session_id]
    expect(not foreign, f"the other principal lists knowledge documents {foreign}")
