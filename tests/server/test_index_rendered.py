"""The index's pages rendered by the database are the bytes Python's serializer writes.

The loop's reads (`server_stub.routes.sessions`, `_rendered`) have SQLite's `json_object`
write each item, or read PostgreSQL's `sessions.index_item` (generated at every write of the
row, `server_stub.db.models.INDEX_ITEM_DDL`), and Python only joins them: every page, first or
at a cursor, must be byte for byte what `JSONResponse` renders from the same rows, whatever a
title holds, and the stored item must follow every kind of write. Titles are written straight
into the database here, past the title rule, so that what no request could store is rendered
too.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy import select, text, update
from starlette.responses import JSONResponse

from server_stub.db.models import SessionRow
from server_stub.domain.cursors import Position
from server_stub.domain.history import bump_version
from server_stub.routes import sessions
from server_stub.state import AppState
from tests.conftest import LiveServer, PostgresCluster, ServerFactory
from tests.hostile_content import HOSTILE
from tests.server.conftest import new_session, run_to_end, start_run, wait_terminal

TITLES: list[str | None] = [
    "\x01\x02\x07\x08\t\n\x0b\x0c\r\x1b\x1f\x7f\x80\x9f",  # C0 (escaped), DEL and C1 (not)
    '"quoted" \\ back\\slash \\" \\\\ \\u0041 /</script>',
    "\U0001f600 \U0001d54f \U0001f1eb\U0001f1f7 \U0010fffd",  # beyond the BMP
    "\u2028\u2029\ufeff\ufffe\uffff\u200b\u202e",
    "é 中文 العربية עברית ελληνικά",
    HOSTILE,
    "x" * 100_000,
    "",
    None,
    "plain",
]
NUL = "before\x00after"  # SQLite holds it; PostgreSQL's text cannot


def _state(server: LiveServer) -> AppState:
    state = server.thread.server.config.app.state.converge
    assert isinstance(state, AppState)
    return state


def _seed_hostile(server: LiveServer, titles: list[str | None]) -> None:
    """One session per title through the API, then its title written in the database; every
    other session shares its `updated_at` with the one before it (the `id` tiebreak)."""
    client = server.client()
    sids = [new_session(client) for _ in titles]
    db = _state(server).db
    with db.write() as s:
        rows = {r.id: r for r in s.scalars(select(SessionRow).where(SessionRow.id.in_(sids)))}
        for n, (sid, title) in enumerate(zip(sids, titles, strict=True)):
            at = rows[sids[n - n % 2]].updated_at
            s.execute(
                update(SessionRow)
                .where(SessionRow.id == sid)
                .values(title=title, title_state="pending" if title is None else "stored")
                .values(updated_at=at, active_run_id=None if n % 3 else "run_" + "z" * 20)
            )
        row = rows[sids[0]]
        bump_version(s, row.tenant, row.principal)


def _expected(server: LiveServer, limit: int, after: Position | None) -> list[dict[str, Any]]:
    """The page's SessionViews read by the ORM."""
    row = SessionRow
    stmt = select(row).order_by(row.updated_at.desc(), row.id.desc()).limit(limit)
    if after is not None:
        stmt = stmt.where(
            (row.updated_at < after.timestamp)
            | ((row.updated_at == after.timestamp) & (row.id < after.item_id))
        )
    with _state(server).db.read() as s:
        return [
            {
                "id": r.id,
                "title": r.title,
                "created_at": r.created_at,
                "updated_at": r.updated_at,
                "active_run_id": r.active_run_id,
                "last_run_id": r.last_run_id,
            }
            for r in s.scalars(stmt)
        ]


def _walk_matches_the_serializer(server: LiveServer, limit: int) -> int:
    """Walk the index at `limit`; every page is `JSONResponse`'s bytes. Returns the pages."""
    client: httpx.Client = server.client()
    state = _state(server)
    cursor: str | None = None
    after: Position | None = None
    pages = 0
    while True:
        params: dict[str, Any] = {"limit": limit} | ({"cursor": cursor} if cursor else {})
        answer = client.get("/v1/sessions", params=params)
        assert answer.status_code == 200, answer.text
        views = _expected(server, limit, after)
        cursor = answer.json()["next_cursor"]
        if cursor is not None:
            after = Position(views[-1]["updated_at"], views[-1]["id"])
            tenant, principal = _owner(server)
            assert cursor == state.cursors.encode("sessions", tenant, principal, after)
        expected = JSONResponse({"items": views, "next_cursor": cursor}).body
        assert answer.content == expected
        assert answer.headers["content-type"] == "application/json"
        pages += 1
        if cursor is None:
            return pages


def _owner(server: LiveServer) -> tuple[str, str]:
    with _state(server).db.read() as s:
        row = s.scalars(select(SessionRow).limit(1)).one()
        return row.tenant, row.principal


@pytest.mark.parametrize("limit", [3, 50])
def test_sqlite_renders_hostile_titles_as_the_serializer_does(
    server_factory: ServerFactory, limit: int
) -> None:
    server = server_factory()
    _seed_hostile(server, [*TITLES, NUL])
    assert _walk_matches_the_serializer(server, limit) == (4 if limit == 3 else 1)
    # Again from the loop's read (the first page was remembered at its version).
    bump = server.client()
    new_session(bump)
    _walk_matches_the_serializer(server, limit)


@pytest.mark.postgres
@pytest.mark.parametrize("limit", [3, 50])
def test_postgresql_renders_hostile_titles_as_the_serializer_does(
    server_factory: ServerFactory, postgres_cluster: PostgresCluster, limit: int
) -> None:
    server = server_factory(backend="postgres", database_url=postgres_cluster.clean_database())
    _seed_hostile(server, TITLES)
    assert _walk_matches_the_serializer(server, limit) == (4 if limit == 3 else 1)
    new_session(server.client())
    _walk_matches_the_serializer(server, limit)


def _no_views_built(server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first page after a change and a page at a cursor build no view per row in Python
    (`_index_views` is the Session path's, for legacy titles and a locked SQLite)."""

    def refused(*_args: Any) -> Any:
        raise AssertionError("a view built in Python")

    client = server.client()
    for _ in range(4):
        new_session(client)
    monkeypatch.setattr(sessions, "_index_views", refused)
    first = client.get("/v1/sessions", params={"limit": 2})
    assert first.status_code == 200
    deeper = client.get("/v1/sessions", params={"limit": 2, "cursor": first.json()["next_cursor"]})
    assert deeper.status_code == 200 and len(deeper.json()["items"]) == 2


def test_sqlite_pages_are_joined_not_built_per_row(
    server_factory: ServerFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_views_built(server_factory(), monkeypatch)


@pytest.mark.postgres
def test_postgresql_pages_are_joined_not_built_per_row(
    server_factory: ServerFactory,
    postgres_cluster: PostgresCluster,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = server_factory(backend="postgres", database_url=postgres_cluster.clean_database())
    _no_views_built(server, monkeypatch)


def _stored_items(server: LiveServer) -> dict[str, tuple[str, str]]:
    """Session id → (its stored item, the serializer's bytes for its row)."""
    with _state(server).db.read() as s:
        rows = s.execute(
            text(
                "SELECT index_item, id, title, created_at, updated_at, active_run_id,"
                " last_run_id FROM sessions"
            )
        ).all()
    keys = ("id", "title", "created_at", "updated_at", "active_run_id", "last_run_id")
    return {row[1]: (row[0], sessions._json(dict(zip(keys, row[1:], strict=True)))) for row in rows}


@pytest.mark.postgres
def test_postgresql_stores_each_item_as_the_serializer_writes_it_after_every_write(
    server_factory: ServerFactory, postgres_cluster: PostgresCluster
) -> None:
    """Created, titled by a run's start (active run), finished (last run), moved by a later
    run, and written past every rule: each row's stored item is its view's bytes."""
    server = server_factory(backend="postgres", database_url=postgres_cluster.clean_database())
    client = server.client()
    created = new_session(client)
    titled = new_session(client)
    run_to_end(client, titled, HOSTILE)
    running = new_session(client)
    wait_terminal(client, start_run(client, running, '\u2028 "quoted" \x01')["id"])
    start_run(client, titled, "again")
    _seed_hostile(server, TITLES)
    stored = _stored_items(server)
    assert {created, titled, running} <= stored.keys() and len(stored) == 3 + len(TITLES)
    assert {sid: item for sid, (item, _) in stored.items()} == {
        sid: expected for sid, (_, expected) in stored.items()
    }
