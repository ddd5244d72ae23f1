"""CONTRACT §9.1: a conditional first page with `Prefer: wait=N` is held until the caller's
index changes (200) or N seconds pass (304), on SQLite and PostgreSQL.

Tests wait for the server to report the watch as held (its `IndexWatches.held` count)
before making the change, so each one proves a wake-up, not a stale ETag.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import Any

import httpx
import pytest

from server_stub.config import PrincipalEntry
from server_stub.domain.watches import MAX_WAIT, IndexWatches, parse_wait
from tests.conftest import LiveServer
from tests.server.conftest import message, new_session

DEADLINE = 20.0


def _watches(server: LiveServer) -> IndexWatches:
    watches = server.thread.app.state.converge.watches
    assert isinstance(watches, IndexWatches)
    return watches


async def _held(server: LiveServer, count: int) -> None:
    """Until the server holds `count` watches (polled: the server has no event for it)."""
    deadline = time.monotonic() + DEADLINE
    while _watches(server).held != count:
        assert time.monotonic() < deadline, f"the server never held {count} watches"
        await asyncio.sleep(0.005)


def _client(server: LiveServer, token: str | None = "dev-alice") -> httpx.AsyncClient:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.AsyncClient(base_url=server.url, headers=headers, timeout=DEADLINE)


def _run(coro: Coroutine[Any, Any, None]) -> None:
    asyncio.run(asyncio.wait_for(coro, DEADLINE * 2))


async def _etag(client: httpx.AsyncClient) -> str:
    response = await client.get("/v1/sessions")
    assert response.status_code == 200, response.text
    return str(response.headers["ETag"])


def _watch(
    client: httpx.AsyncClient, etag: str, prefer: str = "wait=30", **params: Any
) -> asyncio.Task[httpx.Response]:
    headers = {"If-None-Match": etag, "Prefer": prefer}
    return asyncio.ensure_future(client.get("/v1/sessions", headers=headers, params=params))


def _create(client: httpx.Client) -> None:
    new_session(client)


def _delete(client: httpx.Client) -> None:
    # The session was made before the watch began (see the test).
    sid = client.get("/v1/sessions").json()["items"][0]["id"]
    assert client.delete(f"/v1/sessions/{sid}").status_code == 204


def _start_run(client: httpx.Client) -> None:
    sid = client.get("/v1/sessions").json()["items"][0]["id"]
    response = client.post(f"/v1/sessions/{sid}/runs", json={"input": message("hi")})
    assert response.status_code == 202, response.text


CHANGES: dict[str, Callable[[httpx.Client], None]] = {
    "create": _create,
    "delete": _delete,
    "run and its events": _start_run,
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_held_watch_wakes_with_the_new_first_page_on_its_principals_change(
    live_server: LiveServer, change: str
) -> None:
    alice_sync = live_server.client()
    new_session(alice_sync)

    async def scenario() -> None:
        async with _client(live_server) as alice:
            etag = await _etag(alice)
            watch = _watch(alice, etag)
            await _held(live_server, 1)
            await asyncio.to_thread(CHANGES[change], alice_sync)
            response = await watch
            assert response.status_code == 200, response.text
            assert response.headers["Preference-Applied"] == "wait=30"
            assert response.headers["ETag"] != etag
            now = (await alice.get("/v1/sessions")).json()  # a run may have moved on since
            assert [i["id"] for i in response.json()["items"]] == [i["id"] for i in now["items"]]
            assert _watches(live_server).principals_watched == 0  # nothing left behind

    _run(scenario())


def test_a_session_made_through_the_control_plane_wakes_the_watch(
    live_server: LiveServer,
) -> None:
    async def scenario() -> None:
        async with _client(live_server) as alice, _client(live_server, None) as control:
            etag = await _etag(alice)
            watch = _watch(alice, etag)
            await _held(live_server, 1)
            body = {"token": "dev-alice", "messages": [message("made elsewhere")]}
            made = await control.post("/_stub/sessions", json=body)
            assert made.status_code == 201
            response = await watch
            assert response.status_code == 200
            assert [i["id"] for i in response.json()["items"]] == [made.json()["id"]]

    _run(scenario())


def test_another_principals_change_never_wakes_the_watch(live_server: LiveServer) -> None:
    async def scenario() -> None:
        async with (
            _client(live_server) as alice,
            _client(live_server, "dev-bob") as bob,
            _client(live_server, "dev-carol") as carol,
        ):
            bob_etag = await _etag(bob)
            carol_etag = await _etag(carol)
            alice_etag = await _etag(alice)
            bob_watch = _watch(bob, bob_etag, "wait=1")  # same tenant, other principal
            carol_watch = _watch(carol, carol_etag, "wait=1")  # other tenant
            alice_watch = _watch(alice, alice_etag)
            await _held(live_server, 3)
            assert (await alice.post("/v1/sessions", json={})).status_code == 201
            assert (await alice_watch).status_code == 200
            for watch, etag in ((bob_watch, bob_etag), (carol_watch, carol_etag)):
                response = await watch  # only after its own second
                assert response.status_code == 304 and response.content == b""
                assert response.headers["ETag"] == etag
                assert response.headers["Preference-Applied"] == "wait=1"

    _run(scenario())


def test_no_change_within_n_seconds_answers_304_with_the_same_etag(
    live_server: LiveServer,
) -> None:
    async def scenario() -> None:
        async with _client(live_server) as alice:
            etag = await _etag(alice)
            response = await _watch(alice, etag, "wait=1")
            assert response.status_code == 304 and response.content == b""
            assert response.headers["ETag"] == etag
            assert response.headers["Preference-Applied"] == "wait=1"

    _run(scenario())


def test_a_wait_above_60_counts_as_60(live_server: LiveServer) -> None:
    async def scenario() -> None:
        async with _client(live_server) as alice:
            watch = _watch(alice, await _etag(alice), "wait=3600")
            await _held(live_server, 1)
            assert (await alice.post("/v1/sessions", json={})).status_code == 201
            response = await watch
            assert response.status_code == 200
            assert response.headers["Preference-Applied"] == f"wait={MAX_WAIT}"

    _run(scenario())


@pytest.mark.parametrize(
    "prefer", ["wait=abc", "wait=-1", "wait=", "wait", "wait=1.5", "return=minimal", "wait=+5"]
)
def test_a_malformed_or_other_preference_answers_at_once(
    live_server: LiveServer, prefer: str
) -> None:
    alice = live_server.client(timeout=5.0)  # a held request would time out: the test fails
    etag = alice.get("/v1/sessions").headers["ETag"]
    response = alice.get("/v1/sessions", headers={"If-None-Match": etag, "Prefer": prefer})
    assert response.status_code == 304
    assert response.headers["ETag"] == etag
    assert "Preference-Applied" not in response.headers


def test_a_stale_etag_answers_200_at_once_without_preference_applied(
    live_server: LiveServer,
) -> None:
    alice = live_server.client(timeout=5.0)
    response = alice.get("/v1/sessions", headers={"If-None-Match": '"old"', "Prefer": "wait=30"})
    assert response.status_code == 200 and "ETag" in response.headers
    assert "Preference-Applied" not in response.headers


def test_a_page_with_a_cursor_never_waits(live_server: LiveServer) -> None:
    alice = live_server.client(timeout=5.0)
    new_session(alice)
    new_session(alice)
    first = alice.get("/v1/sessions", params={"limit": 1})
    cursor = first.json()["next_cursor"]
    response = alice.get(
        "/v1/sessions",
        params={"limit": 1, "cursor": cursor},
        headers={"If-None-Match": first.headers["ETag"], "Prefer": "wait=30"},
    )
    assert response.status_code == 200 and len(response.json()["items"]) == 1
    assert "ETag" not in response.headers and "Preference-Applied" not in response.headers


def test_authentication_scope_and_syntax_come_before_any_wait(
    start_server: Callable[..., LiveServer],
) -> None:
    server = start_server(
        principals=(
            PrincipalEntry("writer", "acme", "alice", frozenset({"session.write"})),
            PrincipalEntry("all", "acme", "alice", frozenset({"*"})),
        )
    )
    etag = server.client("all").get("/v1/sessions").headers["ETag"]
    watch = {"If-None-Match": etag, "Prefer": "wait=30"}
    cases: list[tuple[httpx.Client, dict[str, object], int, str]] = [
        (server.client(None, timeout=5.0), {}, 401, "unauthenticated"),
        (server.client("nobody", timeout=5.0), {}, 401, "unauthenticated"),
        (server.client("writer", timeout=5.0), {}, 403, "forbidden"),
        (server.client("all", timeout=5.0), {"limit": 0}, 400, "invalid_request"),
        (server.client("all", timeout=5.0), {"limit": "x"}, 400, "invalid_request"),
    ]
    for client, params, status, code in cases:
        response = client.get("/v1/sessions", params=params, headers=watch)  # type: ignore[arg-type]
        assert response.status_code == status, response.text
        assert response.json()["error"]["code"] == code
        assert "Preference-Applied" not in response.headers


def test_shutdown_answers_held_watches_at_once(live_server: LiveServer) -> None:
    async def scenario() -> None:
        async with _client(live_server) as alice:
            etag = await _etag(alice)
            watches = [_watch(alice, etag, "wait=60") for _ in range(3)]
            await _held(live_server, 3)
            stopping = asyncio.ensure_future(asyncio.to_thread(live_server.thread.stop))
            for watch in watches:
                response = await watch
                assert response.status_code == 304
                assert response.headers["ETag"] == etag
            await stopping
            assert not live_server.thread.thread.is_alive()

    _run(scenario())


def test_a_client_that_goes_away_stops_being_held(live_server: LiveServer) -> None:
    async def scenario() -> None:
        async with _client(live_server) as alice:
            etag = await _etag(alice)
            watch = _watch(alice, etag, "wait=60")
            await _held(live_server, 1)
            watch.cancel()  # httpx closes the connection
            await _held(live_server, 0)
            assert _watches(live_server).principals_watched == 0
            # The server still answers this client normally afterwards.
            assert (await alice.get("/v1/sessions")).status_code == 200

    _run(scenario())


def test_a_server_with_the_feature_off_ignores_the_preference(
    start_server: Callable[..., LiveServer],
) -> None:
    server = start_server(index_watch=False)
    alice = server.client(timeout=5.0)
    etag = alice.get("/v1/sessions").headers["ETag"]
    response = alice.get("/v1/sessions", headers={"If-None-Match": etag, "Prefer": "wait=30"})
    assert response.status_code == 304 and "Preference-Applied" not in response.headers


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ([], None),
        (["wait=5"], 5),
        (["WAIT = 7"], 7),
        (['wait="9"'], 9),
        (["wait=0"], 0),
        (["wait=61"], MAX_WAIT),
        (["wait=" + "9" * 5000], MAX_WAIT),
        # delta-seconds is 1*DIGIT (RFC 9111 §1.2.2): leading zeros do not make it longer.
        (["wait=00001"], 1),
        (["wait=" + "0" * 5000 + "7"], 7),
        (["wait=0000"], 0),
        (["wait=00061"], MAX_WAIT),
        (["return=minimal, wait=3"], 3),
        (["return=minimal", "wait=4; foo=bar"], 4),
        (["wait=2, wait=9"], 2),  # RFC 7240: the first instance counts
        (["wait=x, wait=9"], None),
        (["wait=abc"], None),
        (["wait=-1"], None),
        (["wait="], None),
        (["wait"], None),
        (["wait=1.5"], None),
        (["waiting=5"], None),
        (["respond-async"], None),
    ],
)
def test_parse_wait(lines: list[str], expected: int | None) -> None:
    assert parse_wait(lines) == expected


def test_openapi_documents_the_watch_on_route_1_and_still_has_sixteen_operations(
    live_server: LiveServer,
) -> None:
    schema = live_server.client(None).get("/openapi.json").json()
    operations = [
        (method, path)
        for path, item in schema["paths"].items()
        for method in item
        if path.startswith("/v1/")
    ]
    assert len(operations) == 16
    listing = schema["paths"]["/v1/sessions"]["get"]
    headers = {p["name"] for p in listing["parameters"] if p["in"] == "header"}
    assert {"If-None-Match", "Prefer"} <= headers
    assert "Preference-Applied" in listing["responses"]["304"]["headers"]
    assert "Preference-Applied" in listing["responses"]["200"]["headers"]


@pytest.mark.postgres
def test_a_change_through_another_process_wakes_the_watch(
    postgres_cluster: Any, server_factory: Any, tmp_path: Any
) -> None:
    """CONTRACT §9.1 "on one process and across processes": two servers on one PostgreSQL;
    a watch held by B wakes when A commits (the fleet bus's NOTIFY, server_stub.domain.bus)."""
    url = postgres_cluster.new_database()
    a, b = (
        server_factory(backend="postgres", database_url=url, artifacts_dir=tmp_path / "objects")
        for _ in range(2)
    )

    async def scenario() -> None:
        async with _client(a, "dev-bob") as bob_a, _client(b) as alice_b, _client(a) as alice_a:
            bob_watch = _watch(bob_a, await _etag(bob_a), "wait=1")
            watch = _watch(alice_b, await _etag(alice_b))
            await _held(b, 1)
            await _held(a, 1)
            assert (await alice_a.post("/v1/sessions", json={})).status_code == 201
            response = await watch
            assert response.status_code == 200
            assert response.headers["Preference-Applied"] == "wait=30"
            assert len(response.json()["items"]) == 1
            assert (await bob_watch).status_code == 304  # another principal: not woken

    _run(scenario())


def test_the_bus_wake_all_message_wakes_every_principals_watch() -> None:
    """After its connection came back the fleet bus calls the hook with ("", ""): changes
    of other processes may have passed unheard, so every watch re-reads its version."""

    async def scenario() -> None:
        watches = IndexWatches(asyncio.get_running_loop())
        events = [watches.subscribe("acme", "alice"), watches.subscribe("globex", "carol")]
        watches.principal_index_changed("", "")
        assert all(e.is_set() for e in events)
        assert watches.principals_watched == 0

    _run(scenario())
