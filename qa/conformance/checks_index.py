"""The index (CONTRACT §3, route 1): keyset order, a walk that stays whole under concurrent
inserts, authenticated cursors that survive changes, and the first page's ETag."""

from __future__ import annotations

import itertools

from qa.conformance.checks_conventions import expect_status
from qa.conformance.probe import Answer, expect, seg
from qa.conformance.rules import rule
from qa.conformance.world import World

INDEX = "/v1/sessions"
#: Walks take about this many pages whatever the size of the index (a small limit on a
#: small index, so that keyset boundaries are crossed many times; never thousands of
#: requests on a large one).
WALK_PAGES = 20
#: Inserts are made between the first pages of the walk only.
INSERTS = 5


def page_limit(size: int) -> int:
    """The page size that walks `size` sessions in about WALK_PAGES pages (2..200)."""
    return max(2, min(200, size // WALK_PAGES + 1))


async def _sessions(world: World, n: int) -> list[str]:
    """`n` new sessions of A, made one after another (newest last)."""
    return [(await world.session())["id"] for _ in range(n)]


async def first_page(world: World, token: str | None = None, **params: str) -> Answer:
    answer = await world.probe.call(
        "GET", INDEX, token=token or world.probe.a, params=params or None
    )
    expect_status(answer, 200)
    return answer


def etag_of(answer: Answer) -> str:
    etag = answer.headers.get("ETag")
    expect(bool(etag), f"{answer.what()}: the first page carries no ETag")
    return str(etag)


@rule("index.order", "§3", "the index is ordered (updated_at DESC, id DESC), ids bytewise")
async def order(world: World) -> None:
    await _sessions(world, 3)
    size = len((await world.walk()).items)
    limit = page_limit(size)
    walk = await world.walk(limit=limit)
    keys = [(str(i.get("updated_at")), str(i.get("id"))) for i in walk.items]
    for n, (before, after) in enumerate(itertools.pairwise(keys)):
        expect(before > after, f"items {n} and {n + 1} are out of order: {before} then {after}")
    for page in walk.pages:
        count = len(page.obj()["items"])
        expect(count <= limit, f"{page.what()}: {count} items, more than limit={limit}")


@rule(
    "index.walk-stable",
    "§3",
    "a walk under concurrent inserts lists every unchanged session once, none twice",
)
async def walk_stable(world: World) -> None:
    await _sessions(world, 5)
    before = {str(i["id"]): i.get("updated_at") for i in (await world.walk()).items}
    p = world.probe
    limit = str(page_limit(len(before)))
    seen: list[str] = []
    cursor: str | None = None
    for n in range(len(before) + 50):
        params = {"limit": limit} | ({"cursor": cursor} if cursor else {})
        answer = await p.call("GET", INDEX, token=p.a, params=params)
        expect_status(answer, 200)
        page = answer.obj()
        seen.extend(str(i.get("id")) for i in page.get("items", []))
        if n < INSERTS:
            await world.session()  # an insert between two pages
        cursor = page.get("next_cursor")
        if cursor is None:
            break
    twice = sorted({i for i in seen if seen.count(i) > 1})
    expect(not twice, f"the walk listed {twice[:3]} twice")
    missing = [i for i in before if i not in seen]
    for session_id in missing:  # excused only if it changed or went away meanwhile
        now = await p.call("GET", f"{INDEX}/{seg(session_id)}", token=p.a)
        expect(
            now.status == 404 or now.obj().get("updated_at") != before[session_id],
            f"the walk skipped {session_id}, unchanged since before the walk",
        )


@rule(
    "index.cursor-authenticated",
    "§3",
    "an altered, made-up or other principal's cursor is 400; an empty cursor is absent",
)
async def cursor_authenticated(world: World) -> None:
    await _sessions(world, 2)
    p = world.probe
    cursor = (await first_page(world, limit="1")).obj().get("next_cursor")
    expect(isinstance(cursor, str) and bool(cursor), "no next_cursor with limit=1")
    assert isinstance(cursor, str)
    flipped = cursor[:-1] + ("A" if cursor[-1] != "A" else "B")
    for bad in (flipped, cursor + "A", cursor[:-1], f"conformance{world.nonce}"):
        answer = await p.call("GET", INDEX, token=p.a, params={"cursor": bad})
        expect_status(answer, 400, "invalid_request")
    expect_status(await p.call("GET", INDEX, token=p.b, params={"cursor": cursor}), 400)
    plain = await first_page(world, limit="5")
    empty = await first_page(world, limit="5", cursor="")
    expect(
        [i.get("id") for i in plain.obj()["items"]] == [i.get("id") for i in empty.obj()["items"]],
        "cursor= (empty) did not answer the first page",
    )


@rule("index.cursor-survives", "§3", "a cursor stays valid when its session is updated or deleted")
async def cursor_survives(world: World) -> None:
    p = world.probe
    for change in ("update", "delete"):
        made = await _sessions(world, 3)
        page = (await first_page(world, limit="2")).obj()
        cursor, last = page.get("next_cursor"), page["items"][-1].get("id")
        expect(last in made and isinstance(cursor, str), "the newest sessions are not on top")
        if change == "delete":
            expect_status(await p.call("DELETE", f"{INDEX}/{seg(last)}", token=p.a), 204)
        else:
            await world.finished("conformance update", str(last))
        answer = await p.call("GET", INDEX, token=p.a, params={"limit": "2", "cursor": str(cursor)})
        expect(answer.status == 200, f"{answer.what()}: the cursor died with an {change}")
        ids = [i.get("id") for i in answer.obj().get("items", [])]
        expect(last not in ids, f"after an {change}, {last} reappeared past its cursor")


@rule(
    "index.etag-304",
    "§3",
    "If-None-Match with the first page's ETag is 304 with no body; ignored with a cursor",
)
async def etag_304(world: World) -> None:
    await _sessions(world, 2)
    p = world.probe
    page = await first_page(world, limit="1")
    etag = etag_of(page)
    expect(etag_of(await first_page(world, limit="50")) == etag, "the ETag depends on limit")
    again = await p.call("GET", INDEX, token=p.a, headers={"If-None-Match": etag})
    expect(again.status == 304, f"{again.what()} with a matching If-None-Match, expected 304")
    expect(again.body == b"", "the 304 has a body")
    expect(again.headers.get("ETag") == etag, "the 304 does not carry the same ETag")
    cursor = str(page.obj().get("next_cursor"))
    later = await p.call(
        "GET", INDEX, token=p.a, params={"cursor": cursor}, headers={"If-None-Match": etag}
    )
    expect(later.status == 200, f"{later.what()}: If-None-Match with a cursor was not ignored")


@rule(
    "index.etag-changes",
    "§3",
    "the ETag changes on a creation, a run and a deletion, never on another principal's data",
)
async def etag_changes(world: World) -> None:
    p = world.probe
    etag = etag_of(await first_page(world))
    await world.session(p.b)
    expect(etag_of(await first_page(world)) == etag, "another principal's creation changed it")
    session_id = (await world.session())["id"]
    steps = {"a creation": etag}
    steps["a finished run"] = etag_of(await first_page(world))
    await world.finished("conformance etag", session_id)
    steps["a deletion"] = etag_of(await first_page(world))
    expect_status(await p.call("DELETE", f"{INDEX}/{seg(session_id)}", token=p.a), 204)
    final = etag_of(await first_page(world))
    values = [*steps.values(), final]
    for (what, old), new in zip(steps.items(), values[1:], strict=True):
        expect(old != new, f"the ETag stayed {old} across {what}")
