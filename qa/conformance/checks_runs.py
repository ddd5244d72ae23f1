"""Runs and what they write (CONTRACT §2, §3 routes 5 to 14, §4): the title rule, one
active run per session, `active_run_id`/`last_run_id`, event sequences, paging and the
SSE replay, cancel, approvals, artifact bytes and memory rejections."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from qa.conformance import fixtures
from qa.conformance.checks_conventions import expect_status
from qa.conformance.probe import expect, seg
from qa.conformance.rules import rule
from qa.conformance.world import ACTIVE, TERMINAL, World

#: (first message's text blocks, the title they must give). Hand-derived from §2's steps:
#: NFC, controls that are not White_Space removed, White_Space runs collapsed, stripped; at
#: most 64 code points without splitting a grapheme cluster.
TITLES: list[tuple[list[str], str | None]] = [
    (["\u00a0 Cafe\u0301 \x1f bar\t\n  baz\x07 "], "Caf\u00e9 bar baz"),
    (["a" * 63 + "\U0001f1eb\U0001f1f7 tail"], "a" * 63),
    (["x" * 63 + " y"], "x" * 63),
    ([" \x01\x02 ", "second block"], "second block"),
    ([" \u2028 \x1c "], None),
]


@rule("title.rule", "§2", "the title is the normalised first text block, cut at 64, then fixed")
async def title_rule(world: World) -> None:
    p = world.probe
    for blocks, expected in TITLES:
        session_id = (await world.session())["id"]
        content = [{"type": "text", "text": t} for t in blocks]
        answer = await p.call(
            "POST",
            f"/v1/sessions/{seg(session_id)}/runs",
            token=p.a,
            body={"input": {"role": "user", "content": content}},
        )
        expect_status(answer, 202)
        await world.until(str(answer.obj().get("id")), TERMINAL)
        view = (await p.call("GET", f"/v1/sessions/{seg(session_id)}", token=p.a)).obj()
        expect(
            view.get("title") == expected,
            f"title {view.get('title')!r} for {blocks!r}, expected {expected!r}",
        )
        if expected is not None:
            await world.finished("a later message", session_id)
            later = (await p.call("GET", f"/v1/sessions/{seg(session_id)}", token=p.a)).obj()
            expect(later.get("title") == expected, "the title changed after a second run")


@rule(
    "runs.one-active",
    "§2 §3",
    "a second run while one is active is 409 run_in_progress; active/last_run_id follow",
)
async def one_active(world: World) -> None:
    p = world.probe
    session_id, first = await world.finished("conformance first")
    run = await world.start(session_id, "/wait 20")
    await world.until(run["id"], ACTIVE)
    path = f"/v1/sessions/{seg(session_id)}"
    try:
        second = await p.call(
            "POST",
            f"{path}/runs",
            token=p.a,
            body={"input": {"role": "user", "content": [{"type": "text", "text": "x"}]}},
        )
        expect_status(second, 409, "invalid_state")
        reason = second.details().get("reason")
        expect(reason == "run_in_progress", f"{second.what()}: reason {reason!r}")
        view = (await p.call("GET", path, token=p.a)).obj()
        expect(
            view.get("active_run_id") == run["id"] and view.get("last_run_id") == first,
            f"during a run: active {view.get('active_run_id')}, last {view.get('last_run_id')}",
        )
        cancel = await p.call("POST", f"/v1/runs/{seg(run['id'])}/cancel", token=p.a)
        expect_status(cancel, 202)
        expect(cancel.obj().get("cancel_requested") is True, "cancel_requested is not true")
    finally:
        await p.call("POST", f"/v1/runs/{seg(run['id'])}/cancel", token=p.a)
    ended = await world.until(run["id"], TERMINAL)
    expect(ended.get("status") == "cancelled", f"a cancelled run ended {ended.get('status')}")
    view = (await p.call("GET", path, token=p.a)).obj()
    expect(
        view.get("active_run_id") is None and view.get("last_run_id") == run["id"],
        f"after the run: active {view.get('active_run_id')}, last {view.get('last_run_id')}",
    )
    again = await p.call("POST", f"/v1/runs/{seg(run['id'])}/cancel", token=p.a)
    expect_status(again, 202)
    expect(again.obj().get("status") == "cancelled", "cancelling a finished run changed it")


@rule(
    "events.sequence",
    "§2 §3",
    "events: sequence 1.. without gaps, run.started then message.user, terminal last, paged",
)
async def sequence(world: World) -> None:
    base = await fixtures.basic(world)
    p = world.probe
    events = await world.events(base.session_id)
    numbers = [e.get("sequence") for e in events]
    expect(numbers == list(range(1, len(events) + 1)), f"sequences {numbers[:8]}…")
    kinds = [e.get("type") for e in events]
    expect(kinds[:2] == ["run.started", "message.user"], f"a run starts with {kinds[:2]}")
    expect(kinds[-1] == "run.completed", f"the finished run's last event is {kinds[-1]}")
    stamps = [str(e.get("created_at")) for e in events]
    expect(stamps == sorted(stamps), "events' created_at decrease")
    view = (await p.call("GET", f"/v1/sessions/{seg(base.session_id)}", token=p.a)).obj()
    expect(view.get("updated_at") == max(stamps), "updated_at is not its last event's time")
    path = f"/v1/sessions/{seg(base.session_id)}/events"
    page = (await p.call("GET", path, token=p.a, params={"after": "1", "limit": "2"})).obj()
    got = [e.get("sequence") for e in page.get("items", [])]
    expect(got == [2, 3], f"after=1&limit=2 gave sequences {got}")
    expect(page.get("next_after") == 3, f"a full page's next_after is {page.get('next_after')}")
    tail = (await p.call("GET", path, token=p.a, params={"after": str(len(events) - 1)})).obj()
    expect(tail.get("next_after") is None, "a page that is not full has a next_after")


@rule("events.sse", "§3", "the run's SSE replays every event (id, event, data) and closes")
async def sse(world: World) -> None:
    base = await fixtures.basic(world)
    p = world.probe
    events = await world.events(base.session_id)
    path = f"/v1/runs/{seg(base.run_id)}/events"
    stream = await p.call("GET", path, token=p.a, headers={"Accept": "text/event-stream"})
    expect_status(stream, 200)
    frames = _frames(stream.body.decode("utf-8", "replace"))
    ids = [f.get("id") for f in frames]
    expect(ids == [str(e["sequence"]) for e in events], f"SSE ids {ids[:6]}…")
    for frame, event in zip(frames, events, strict=True):
        expect(frame.get("event") == event["type"], f"frame {frame.get('id')}: event name")
        expect(json.loads(frame.get("data", "null")) == event, f"frame {frame.get('id')}: data")
    resumed = await p.call(
        "GET", path, token=p.a, headers={"Accept": "text/event-stream", "Last-Event-ID": "2"}
    )
    after = [f.get("id") for f in _frames(resumed.body.decode("utf-8", "replace"))]
    expect(after == ids[2:], f"Last-Event-ID: 2 resumed at {after[:3]}")
    plain = await p.call("GET", path, token=p.a)
    expect_status(plain, 200)
    expect(plain.obj().get("items") == events, "the JSON form differs from the session's events")


def _frames(text: str) -> list[dict[str, str]]:
    frames: list[dict[str, str]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.split("\n"):
            if not line or line.startswith(":") or ":" not in line:
                continue
            name, value = line.split(":", 1)
            fields[name] = fields.get(name, "") + value.removeprefix(" ")
        if "data" in fields:
            frames.append(fields)
    return frames


@rule("approvals.decision", "§3", "deciding twice the same way is a no-op, the other way 409")
async def decision(world: World) -> None:
    p = world.probe
    pending = await fixtures.approval(world)
    path = f"/v1/approvals/{seg(pending.approval_id)}/decision"
    for attempt in ("first", "repeated"):
        answer = await p.call("POST", path, token=p.a, body={"decision": "approve"})
        expect_status(answer, 200)
        expect(answer.obj().get("status") == "approved", f"the {attempt} approve: not approved")
    expect_status(await p.call("POST", path, token=p.a, body={"decision": "deny"}), 409)
    await world.until(pending.run_id, TERMINAL)


@rule(
    "approvals.cancelled",
    "§3",
    "a cancel ends a run waiting for approval; its approval is cancelled and deciding it 409",
)
async def cancelled_approval(world: World) -> None:
    p = world.probe
    session_id = (await world.session())["id"]
    run = await world.start(session_id, "/approve conformance-cancel")
    await world.until(run["id"], frozenset({"waiting_for_approval"}))
    events = await world.events(session_id)
    asked = [e["data"].get("approval_id") for e in events if e.get("type") == "approval.requested"]
    expect(bool(asked), "the /approve run requested no approval")
    expect_status(await p.call("POST", f"/v1/runs/{seg(run['id'])}/cancel", token=p.a), 202)
    ended = await world.until(run["id"], TERMINAL)
    expect(ended.get("status") == "cancelled", f"the run ended {ended.get('status')}")
    answer = await p.call(
        "POST", f"/v1/approvals/{seg(asked[0])}/decision", token=p.a, body={"decision": "approve"}
    )
    expect_status(answer, 409, "invalid_state")


@rule("artifacts.content", "§3", "artifact bytes match the metadata's size and sha256; ETag")
async def artifact_content(world: World) -> None:
    p = world.probe
    rich = await fixtures.rich(world)
    meta = await p.call("GET", f"/v1/artifacts/{seg(rich.artifact_id)}", token=p.a)
    expect_status(meta, 200)
    info: dict[str, Any] = meta.obj()
    content = await p.call("GET", f"/v1/artifacts/{seg(rich.artifact_id)}/content", token=p.a)
    expect_status(content, 200)
    expect(content.body == rich.artifact_text.encode(), "the artifact's bytes are not its text")
    expect(info.get("size") == len(content.body), f"size {info.get('size')} is not the bytes'")
    digest = hashlib.sha256(content.body).hexdigest()
    expect(info.get("sha256") == digest, "sha256 does not match the bytes")
    expect(bool(content.headers.get("ETag")), "the content has no ETag")
    expect(bool(content.headers.get("Content-Type")), "the content has no Content-Type")


@rule(
    "memories.rejection",
    "§3",
    "a rejection is 201 and marks the memory; a session_id not of the caller's is 404",
)
async def rejection(world: World) -> None:
    p = world.probe
    rich = await fixtures.rich(world)
    theirs = (await world.session(p.b))["id"]
    path = f"/v1/memories/{seg(rich.memory_id)}/rejection"
    expect_status(await p.call("POST", path, token=p.a, body={"session_id": theirs}), 404)
    answer = await p.call("POST", path, token=p.a, body={"session_id": rich.session_id})
    expect_status(answer, 201)
    expect(answer.obj().get("memory_id") == rich.memory_id, "the rejection names another memory")
    memories = {m.get("id"): m for m in (await world.walk("/v1/memories")).items}
    expect(memories.get(rich.memory_id, {}).get("rejected") is True, "the memory is not rejected")


@rule("agent.echo", "§4", "the scripted agent answers Echo: TEXT; /fail ends the run failed")
async def echo(world: World) -> None:
    base = await fixtures.basic(world)
    events = await world.events(base.session_id)
    answers = [e for e in events if e.get("type") == "message.assistant"]
    expected = f"Echo: conformance hello {world.nonce}"
    expect(
        bool(answers) and expected in json.dumps(answers[-1].get("data"), ensure_ascii=False),
        "message.assistant does not hold Echo: <text>",
    )
    _, run_id = await world.finished("/fail")
    status = (await world.run_view(run_id)).get("status")
    expect(status == "failed", f"a /fail run ended {status}")
