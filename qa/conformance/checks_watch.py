"""Watching the index (CONTRACT §9.1): `Prefer: wait=N` with a matching `If-None-Match` is
held until the caller's index changes or N seconds pass; anything malformed answers at once;
authentication and syntax come before any wait; another principal's change never wakes it.
The thresholds here are the checker's own (generous: a deployment is on a network), not
the contract's 100 ms."""

from __future__ import annotations

import asyncio
import time

from qa.conformance.checks_conventions import expect_status
from qa.conformance.checks_index import INDEX, etag_of, first_page
from qa.conformance.probe import Answer, expect
from qa.conformance.rules import rule
from qa.conformance.world import World

#: "At once", as the checker judges it from outside.
AT_ONCE = 3.0


async def _watch(world: World, etag: str, prefer: str, token: str | None = None) -> Answer:
    return await world.probe.call(
        "GET",
        INDEX,
        token=token or world.probe.a,
        headers={"If-None-Match": etag, "Prefer": prefer},
        timeout=75.0,
    )


@rule("watch.held-304", "§9.1", "a watch with no change is held N seconds, then 304, same ETag")
async def held(world: World) -> None:
    etag = etag_of(await first_page(world))
    started = time.monotonic()
    answer = await _watch(world, etag, "wait=1")
    held_for = time.monotonic() - started
    expect(answer.status == 304, f"{answer.what()}: a watch without a change, expected 304")
    expect(answer.headers.get("ETag") == etag, "the watch's 304 changed the ETag")
    applied = answer.headers.get("Preference-Applied")
    expect(applied == "wait=1", f"Preference-Applied is {applied!r}, expected wait=1")
    expect(held_for >= 0.8, f"the watch answered after {held_for:.2f} s, not held for 1 s")


@rule("watch.wakes", "§9.1", "a change answers a held watch at once: 200, new ETag; N caps at 60")
async def wakes(world: World) -> None:
    etag = etag_of(await first_page(world))
    task = asyncio.create_task(_watch(world, etag, "wait=999"))
    try:
        await asyncio.sleep(0.5)
        changed = time.monotonic()
        await world.session()
        answer = await task
    finally:
        task.cancel()
    late = time.monotonic() - changed
    expect(answer.status == 200, f"{answer.what()}: a change during the watch, expected 200")
    expect(etag_of(answer) != etag, "the watch's 200 carries the old ETag")
    expect(late < AT_ONCE, f"the watch answered {late:.1f} s after the change")
    applied = answer.headers.get("Preference-Applied")
    expect(applied == "wait=60", f"Preference-Applied {applied!r} for wait=999, expected wait=60")


@rule("watch.other-principal", "§9.1", "another principal's change never wakes a watch")
async def other_principal(world: World) -> None:
    etag = etag_of(await first_page(world))
    task = asyncio.create_task(_watch(world, etag, "wait=2"))
    try:
        await asyncio.sleep(0.3)
        await world.session(world.probe.b)
        answer = await task
    finally:
        task.cancel()
    expect(answer.status == 304, f"{answer.what()}: another principal's creation woke it")


@rule("watch.malformed", "§9.1", "a malformed preference, or no matching ETag, answers at once")
async def malformed(world: World) -> None:
    etag = etag_of(await first_page(world))
    for prefer in ("wait=abc", "wait=-1", "wait=", "respond-async"):
        answer = await _watch(world, etag, prefer)
        expect(answer.status == 304, f"{answer.what()} for Prefer: {prefer}, expected 304")
        expect(answer.seconds < AT_ONCE, f"Prefer: {prefer} was held {answer.seconds:.1f} s")
        expect("Preference-Applied" not in answer.headers, f"Prefer: {prefer} claims to be applied")
    stale = await _watch(world, '"conformance-stale"', "wait=5")
    expect(stale.status == 200, f"{stale.what()}: a stale ETag, expected 200 at once")
    expect(stale.seconds < AT_ONCE, f"a stale ETag's watch was held {stale.seconds:.1f} s")


@rule("watch.checks-first", "§9.1", "authentication and syntax are checked before any wait")
async def checks_first(world: World) -> None:
    p = world.probe
    etag = etag_of(await first_page(world))
    unknown = await _watch(world, etag, "wait=5", token=f"conformance-unknown-{world.nonce}")
    expect_status(unknown, 401)
    expect(unknown.seconds < AT_ONCE, f"the 401 came after a wait of {unknown.seconds:.1f} s")
    bad = await p.call(
        "GET",
        INDEX,
        token=p.a,
        params={"limit": "0"},
        headers={"If-None-Match": etag, "Prefer": "wait=5"},
    )
    expect_status(bad, 400)
    expect(bad.seconds < AT_ONCE, f"the 400 came after a wait of {bad.seconds:.1f} s")
