"""Legacy sessions' derived titles are remembered (`server_stub.domain.legacytitles`).

A legacy session's title is derived from its first user message, which never changes, so
the index must not derive it again for every legacy row of every page it serves (a query
each), nor send such a page off the direct read path. These tests count the statements the
server's SQLAlchemy engines execute (the worker threads' and, on SQLite, the loop's
`read_now`); the direct reads (SQLite's `fetch_now`, PostgreSQL's loop reader) go around
them, so a page read directly executes none there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest

from server_stub.state import AppState
from tests.conftest import LiveServer
from tests.server.conftest import message
from tests.server.test_equal_cost_404s import QUIET, _Statements


@pytest.fixture
def live_server(start_server: Callable[..., LiveServer]) -> LiveServer:
    """A server whose background loops stay quiet during the test."""
    return start_server(**QUIET)


@pytest.fixture
def statements(live_server: LiveServer) -> Iterator[_Statements]:
    recorder = _Statements(live_server)
    yield recorder
    recorder.close()


def _state(server: LiveServer) -> AppState:
    state = server.thread.app.state.converge
    assert isinstance(state, AppState)
    return state


def _legacy(server: LiveServer, text: str | None, updated_at: str) -> str:
    """A legacy session (its title derived) with one user message, or none."""
    messages = [] if text is None else [message(text)]
    made = server.control().post(
        "/_stub/sessions",
        json={"token": "dev-alice", "messages": messages, "updated_at": updated_at, "legacy": True},
    )
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


def _walk(client: httpx.Client, limit: int) -> dict[str, str | None]:
    """Every session's title, walking the index at `limit` items a page."""
    titles: dict[str, str | None] = {}
    cursor = None
    while True:
        params: dict[str, str | int] = {"limit": limit}
        if cursor is not None:
            params["cursor"] = cursor
        page = client.get("/v1/sessions", params=params)
        assert page.status_code == 200
        titles |= {item["id"]: item["title"] for item in page.json()["items"]}
        cursor = page.json()["next_cursor"]
        if cursor is None:
            return titles


def _event_reads(seen: list[str]) -> list[str]:
    return [s for s in seen if "FROM events" in s]


def test_a_legacy_title_is_derived_once_not_per_page_served(
    live_server: LiveServer, statements: _Statements
) -> None:
    ids = [
        _legacy(live_server, f"legacy {n}", f"2026-01-0{n + 1}T00:00:00.000000Z") for n in range(5)
    ]
    alice = live_server.client()
    statements.take()
    first = _walk(alice, 2)  # three pages (walked pages are not the remembered first page)
    second = _walk(alice, 3)
    assert first == second == {sid: f"legacy {n}" for n, sid in enumerate(ids)}
    assert _event_reads(statements.take()) == []  # remembered when the control plane made them
    assert _state(live_server).titles.derivations == 5


def test_a_page_of_remembered_legacy_titles_takes_the_direct_read(
    live_server: LiveServer, statements: _Statements
) -> None:
    for n in range(3):
        _legacy(live_server, f"legacy {n}", f"2026-01-0{n + 1}T00:00:00.000000Z")
    alice = live_server.client()
    _walk(alice, 2)  # the first page of each limit is then remembered: walk a new limit
    statements.take()
    assert len(_walk(alice, 1)) == 3
    assert statements.take() == []  # no page went to a worker thread's Session


def test_a_title_not_remembered_is_derived_on_the_thread_path_then_remembered(
    live_server: LiveServer, statements: _Statements
) -> None:
    sid = _legacy(live_server, "derive me", "2026-01-01T00:00:00.000000Z")
    titles = _state(live_server).titles
    titles.drop(sid)  # as in a process of a fleet that did not make it, or after eviction
    alice = live_server.client()
    statements.take()
    assert _walk(alice, 5) == {sid: "derive me"}
    assert len(_event_reads(statements.take())) == 1
    assert titles.get(sid) == "derive me"
    assert _walk(alice, 4) == {sid: "derive me"}
    assert _event_reads(statements.take()) == []


def test_a_legacy_session_without_a_user_message_is_not_remembered(
    live_server: LiveServer,
) -> None:
    sid = _legacy(live_server, None, "2026-01-01T00:00:00.000000Z")
    alice = live_server.client()
    assert _walk(alice, 5) == {sid: None}
    assert not _state(live_server).titles.knows(sid)  # a later message would change it


def test_deleting_a_legacy_session_forgets_its_title(live_server: LiveServer) -> None:
    sid = _legacy(live_server, "to be deleted", "2026-01-01T00:00:00.000000Z")
    alice = live_server.client()
    assert _walk(alice, 5) == {sid: "to be deleted"}
    titles = _state(live_server).titles
    assert titles.knows(sid)
    assert alice.delete(f"/v1/sessions/{sid}").status_code == 204
    assert not titles.knows(sid)
    assert _walk(alice, 5) == {}
