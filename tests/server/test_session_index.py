"""Route 1: keyset pagination, authenticated cursors and the first page's ETag."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from server_stub.domain.timestamps import fmt
from tests.conftest import LiveServer
from tests.server.conftest import message, new_session, run_to_end


def _seed(server: LiveServer, token: str, count: int, *, same_time: bool = False) -> list[str]:
    """`count` sessions with distinct (or identical) past `updated_at`, oldest first."""
    control = server.control()
    base = datetime(2026, 1, 1, tzinfo=UTC)
    ids = []
    for i in range(count):
        at = base if same_time else base + timedelta(minutes=i)
        response = control.post(
            "/_stub/sessions",
            json={"token": token, "messages": [message(f"topic {i}")], "updated_at": fmt(at)},
        )
        assert response.status_code == 201, response.text
        ids.append(response.json()["id"])
    return ids


def _walk(
    client: httpx.Client, limit: int, between: Callable[[int], None] | None = None
) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    page = 0
    while True:
        params: dict[str, Any] = {"limit": limit}
        if cursor:
            params["cursor"] = cursor
        response = client.get("/v1/sessions", params=params)
        assert response.status_code == 200, response.text
        body = response.json()
        items.extend(body["items"])
        cursor = body["next_cursor"]
        if cursor is None:
            return items
        if between is not None:
            between(page)
        page += 1


def test_walk_orders_by_activity_then_id_bytewise(live_server: LiveServer) -> None:
    _seed(live_server, "dev-alice", 9)
    _seed(live_server, "dev-alice", 6, same_time=True)
    alice = live_server.client()
    items = _walk(alice, 4)
    keys = [(i["updated_at"], i["id"]) for i in items]
    assert keys == sorted(keys, reverse=True)
    assert len({i["id"] for i in items}) == 15
    assert _walk(alice, 200) == items


def test_keyset_walk_while_sessions_move_to_the_top(live_server: LiveServer) -> None:
    ids = _seed(live_server, "dev-alice", 24)
    alice = live_server.client()
    moved: list[str] = []
    # Sessions still ahead of the walk (the oldest ones) jump to the top between pages.
    to_move = [ids[0], ids[3], ids[1], ids[10]]

    def move(page: int) -> None:
        if page < len(to_move):
            run_to_end(alice, to_move[page], "bump")
            moved.append(to_move[page])

    items = _walk(alice, 5, move)
    seen = [i["id"] for i in items]
    assert len(seen) == len(set(seen)), "a session appeared twice in one walk"
    for sid in ids:
        if sid not in moved:
            assert seen.count(sid) == 1
    # A fresh walk sees the moved sessions first.
    fresh = [i["id"] for i in _walk(alice, 50)]
    assert set(fresh[: len(moved)]) == set(moved)


def test_walk_is_per_principal(live_server: LiveServer) -> None:
    _seed(live_server, "dev-alice", 3)
    _seed(live_server, "dev-bob", 2)
    _seed(live_server, "dev-carol", 1)
    assert len(_walk(live_server.client("dev-alice"), 2)) == 3
    assert len(_walk(live_server.client("dev-bob"), 2)) == 2
    assert len(_walk(live_server.client("dev-carol"), 2)) == 1
    # The read-only token is the same principal.
    assert len(_walk(live_server.client("dev-alice-readonly"), 2)) == 3


def _bad_cursor(response: httpx.Response) -> None:
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "invalid_request"


def test_any_change_to_a_cursor_is_400(live_server: LiveServer) -> None:
    _seed(live_server, "dev-alice", 3)
    alice = live_server.client()
    cursor = alice.get("/v1/sessions", params={"limit": 1}).json()["next_cursor"]
    assert cursor
    assert alice.get("/v1/sessions", params={"limit": 1, "cursor": cursor}).status_code == 200
    variants = {
        cursor + "=",
        cursor + "A",
        cursor[:-1],
        "x" + cursor,
        cursor.replace(".", ""),
        cursor.upper(),
        cursor.lower(),
        "forged",
        "a.b",
        ".",
        "%%%",
    }
    for i in range(len(cursor)):
        ch = cursor[i]
        variants.add(cursor[:i] + ("B" if ch != "B" else "C") + cursor[i + 1 :])
    variants.discard(cursor)
    for variant in variants:
        _bad_cursor(alice.get("/v1/sessions", params={"cursor": variant}))


def test_a_cursor_of_another_principal_or_list_is_400(live_server: LiveServer) -> None:
    _seed(live_server, "dev-alice", 3)
    _seed(live_server, "dev-bob", 3)
    alice = live_server.client("dev-alice")
    bob = live_server.client("dev-bob")
    alice_cursor = alice.get("/v1/sessions", params={"limit": 1}).json()["next_cursor"]
    _bad_cursor(bob.get("/v1/sessions", params={"cursor": alice_cursor}))
    _bad_cursor(
        live_server.client("dev-carol").get("/v1/sessions", params={"cursor": alice_cursor})
    )
    _bad_cursor(alice.get("/v1/memories", params={"cursor": alice_cursor}))
    _bad_cursor(alice.get("/v1/knowledge/documents", params={"cursor": alice_cursor}))
    # Same principal through another token: still valid.
    readonly = live_server.client("dev-alice-readonly")
    assert readonly.get("/v1/sessions", params={"cursor": alice_cursor}).status_code == 200


def test_empty_cursor_means_first_page(live_server: LiveServer) -> None:
    _seed(live_server, "dev-alice", 2)
    alice = live_server.client()
    first = alice.get("/v1/sessions")
    empty = alice.get("/v1/sessions?cursor=")
    assert empty.status_code == 200
    assert empty.json() == first.json()
    assert empty.headers["ETag"] == first.headers["ETag"]


def test_cursor_stays_valid_after_its_session_changes_or_goes(live_server: LiveServer) -> None:
    ids = _seed(live_server, "dev-alice", 5)
    alice = live_server.client()
    page = alice.get("/v1/sessions", params={"limit": 2}).json()
    last = page["items"][-1]["id"]
    run_to_end(alice, last, "move me")
    rest = alice.get("/v1/sessions", params={"limit": 10, "cursor": page["next_cursor"]}).json()
    assert [i["id"] for i in rest["items"]] == list(reversed(ids))[2:]
    assert alice.delete(f"/v1/sessions/{last}").status_code == 204
    again = alice.get("/v1/sessions", params={"limit": 10, "cursor": page["next_cursor"]})
    assert again.json()["items"] == rest["items"]


def test_cursor_survives_a_restart(
    server_factory: Callable[..., LiveServer], tmp_path: Any
) -> None:
    url = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    first = server_factory(database_url=url, artifacts_dir=tmp_path / "objects")
    _seed(first, "dev-alice", 3)
    cursor = first.client().get("/v1/sessions", params={"limit": 1}).json()["next_cursor"]
    etag = first.client().get("/v1/sessions").headers["ETag"]
    first.stop()
    second = server_factory(database_url=url, artifacts_dir=tmp_path / "objects")
    response = second.client().get("/v1/sessions", params={"limit": 1, "cursor": cursor})
    assert response.status_code == 200 and len(response.json()["items"]) == 1
    assert second.client().get("/v1/sessions").headers["ETag"] == etag


def _etag(client: httpx.Client) -> str:
    response = client.get("/v1/sessions", params={"limit": 1})
    assert response.status_code == 200
    return str(response.headers["ETag"])


def test_first_page_etag_and_304(live_server: LiveServer) -> None:
    alice = live_server.client()
    new_session(alice)
    first = alice.get("/v1/sessions")
    etag = first.headers["ETag"]
    assert etag.startswith('"') and etag.endswith('"')
    assert _etag(alice) == etag  # independent of limit
    cached = alice.get("/v1/sessions", headers={"If-None-Match": etag})
    assert cached.status_code == 304 and cached.content == b""
    assert cached.headers["ETag"] == etag
    stale = alice.get("/v1/sessions", headers={"If-None-Match": '"other"'})
    assert stale.status_code == 200 and stale.json() == first.json()
    # A page with a cursor ignores If-None-Match and carries no ETag.
    new_session(alice)
    cursor = alice.get("/v1/sessions", params={"limit": 1}).json()["next_cursor"]
    paged = alice.get(
        "/v1/sessions", params={"cursor": cursor}, headers={"If-None-Match": _etag(alice)}
    )
    assert paged.status_code == 200 and "ETag" not in paged.headers


def test_etag_changes_on_every_kind_of_index_change(live_server: LiveServer) -> None:
    alice = live_server.client()
    control = live_server.control()
    seen = [_etag(alice)]

    def changed() -> None:
        now = _etag(alice)
        assert now not in seen, "the ETag did not change"
        seen.append(now)

    sid = new_session(alice)  # creation
    changed()
    run_to_end(alice, sid, "first words")  # title, events, run start and end
    changed()
    old = control.post(
        "/_stub/sessions",
        json={
            "token": "dev-alice",
            "messages": [message("old")],
            "updated_at": "2025-01-01T00:00:00.000000Z",
        },
    ).json()["id"]
    changed()  # a session created far down the list (not on the first page of limit=1)
    run_to_end(alice, old, "wake up")
    changed()
    assert alice.delete(f"/v1/sessions/{old}").status_code == 204  # deletion
    changed()
    # Reads, repeats and no-ops do not have to change it; other principals' changes never do.
    before = _etag(alice)
    bob = live_server.client("dev-bob")
    bob_sid = new_session(bob)
    run_to_end(bob, bob_sid, "bob talks")
    bob.delete(f"/v1/sessions/{bob_sid}")
    control.post("/_stub/sessions", json={"token": "dev-carol", "messages": [message("c")]})
    assert _etag(alice) == before
    assert alice.get("/v1/sessions", headers={"If-None-Match": before}).status_code == 304


def test_etag_changes_when_a_run_starts_and_ends(live_server: LiveServer) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    before = _etag(alice)
    run = alice.post(f"/v1/sessions/{sid}/runs", json={"input": message("/approve x")}).json()
    during = _etag(alice)
    assert during != before
    assert alice.get(f"/v1/sessions/{sid}").json()["active_run_id"] == run["id"]
    alice.post(f"/v1/runs/{run['id']}/cancel")
    from tests.server.conftest import wait_terminal

    wait_terminal(alice, run["id"])
    assert _etag(alice) not in (before, during)
    view = alice.get(f"/v1/sessions/{sid}").json()
    assert view["active_run_id"] is None and view["last_run_id"] == run["id"]
