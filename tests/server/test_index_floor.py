"""The session index near its floor keeps every promise of its ETag.

What changed for speed is proven here by behaviour, never by time (the figures are in
`python -m bench server`): on SQLite a 304 reads nothing and the first page is read on the
event loop; a locked SQLite still never holds the loop; requests never open and close pool
connections under concurrency; and no remembered version ever lets a stale ETag through, in
one process or across a fleet on PostgreSQL (where a lone process remembers under the
index-cache lease: `tests/server/test_index_lease.py`).
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, event, select
from sqlalchemy.exc import DBAPIError

from server_stub.db.engine import Database, LockedNow
from server_stub.db.outage import is_outage
from server_stub.db.pgloop import PgLoopReader
from server_stub.domain.history import VERSION_OF
from server_stub.domain.indexversions import IndexVersions
from server_stub.routes.sessions import _pg_sql
from server_stub.state import REQUEST_THREADS, AppState
from tests.conftest import LiveServer, PostgresCluster, ServerFactory
from tests.server.conftest import new_session, run_to_end, wait_until


def _state(server: LiveServer) -> AppState:
    state = server.thread.server.config.app.state.converge
    assert isinstance(state, AppState)
    return state


@contextmanager
def _statements() -> Iterator[list[tuple[str, str]]]:
    """Every SQL statement any engine of this process runs in the block: (thread, SQL)."""
    seen: list[tuple[str, str]] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        seen.append((threading.current_thread().name, statement))

    event.listen(Engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(Engine, "before_cursor_execute", record)


@contextmanager
def _loop_statements(db: Database) -> Iterator[list[tuple[str, str]]]:
    """Every SQL statement the loop's connection runs in the block, SQLAlchemy's or the
    driver's own (`Database.fetch_now`): (thread, SQL), from SQLite's trace callback."""
    seen: list[tuple[str, str]] = []

    def record(statement: str) -> None:
        seen.append((threading.current_thread().name, statement))

    assert db._quick is not None
    pooled = db._quick.raw_connection()  # the one connection (StaticPool), given back at once
    try:
        driver = pooled.driver_connection
        assert isinstance(driver, sqlite3.Connection)
    finally:
        pooled.close()
    driver.set_trace_callback(record)
    try:
        yield seen
    finally:
        driver.set_trace_callback(None)


def _first_page(client: httpx.Client, etag: str | None = None) -> httpx.Response:
    headers = {"If-None-Match": etag} if etag else {}
    return client.get("/v1/sessions", params={"limit": 50}, headers=headers)


def test_a_304_on_sqlite_reads_nothing_from_the_database(server_factory: ServerFactory) -> None:
    live_server = server_factory()
    client = live_server.client()
    new_session(client)
    etag = _first_page(client).headers["etag"]
    assert _first_page(client, etag).status_code == 304  # the version is now remembered
    with _statements() as seen, _loop_statements(_state(live_server).db) as on_loop:
        answer = _first_page(client, etag)
    assert answer.status_code == 304
    assert answer.headers["etag"] == etag
    assert seen == on_loop == []


def test_an_unchanged_first_page_on_sqlite_is_sent_again_without_a_read(
    server_factory: ServerFactory,
) -> None:
    live_server = server_factory()
    client = live_server.client()
    new_session(client)
    first = _first_page(client)
    with _statements() as seen, _loop_statements(_state(live_server).db) as on_loop:
        again = _first_page(client)
    assert seen == on_loop == []
    assert again.content == first.content
    assert again.headers["etag"] == first.headers["etag"]
    assert again.headers["content-type"] == first.headers["content-type"]


def test_every_change_a_page_shows_reaches_the_next_unconditional_page(
    live_server: LiveServer,
) -> None:
    """No remembered page outlives a change: a run's start and end (active and last run),
    a title, a new session, a delete, each seen by the next plain GET."""
    client = live_server.client()
    sid = new_session(client)
    _first_page(client)
    run = client.post(
        f"/v1/sessions/{sid}/runs",
        json={"input": {"role": "user", "content": [{"type": "text", "text": "/wait 30"}]}},
    ).json()
    item = _first_page(client).json()["items"][0]
    assert item["active_run_id"] == run["id"]
    assert item["title"] is not None
    assert client.post(f"/v1/runs/{run['id']}/cancel").status_code == 202
    wait_until(lambda: _first_page(client).json()["items"][0]["active_run_id"] is None)
    assert _first_page(client).json()["items"][0]["last_run_id"] == run["id"]
    other = new_session(client)
    assert [i["id"] for i in _first_page(client).json()["items"]] == [other, sid]
    assert client.delete(f"/v1/sessions/{other}").status_code == 204
    assert [i["id"] for i in _first_page(client).json()["items"]] == [sid]


def test_the_first_page_on_sqlite_is_read_on_the_event_loop(server_factory: ServerFactory) -> None:
    live_server = server_factory()
    client = live_server.client()
    new_session(client)
    db = _state(live_server).db
    with _statements() as seen, _loop_statements(db) as on_loop:
        assert _first_page(client).status_code == 200
    page_reads = [thread for thread, sql in seen + on_loop if "FROM sessions" in sql]
    assert page_reads == [live_server.thread.thread.name]


@pytest.mark.parametrize("change", ["create", "delete", "title", "another principal"])
def test_a_stale_etag_never_gets_a_304_after_a_change(live_server: LiveServer, change: str) -> None:
    client = live_server.client()
    kept = new_session(client)
    before = _first_page(client)
    etag = before.headers["etag"]
    assert _first_page(client, etag).status_code == 304
    if change == "create":
        new_session(client)
    elif change == "delete":
        assert client.delete(f"/v1/sessions/{kept}").status_code == 204
    elif change == "title":
        run_to_end(client, kept, "a title from the first message")
    else:
        new_session(live_server.client("dev-bob"))
    after = _first_page(client, etag)
    if change == "another principal":
        assert after.status_code == 304
        return
    assert after.status_code == 200
    assert after.headers["etag"] != etag
    assert after.json()["items"] != before.json()["items"]
    assert _first_page(client, after.headers["etag"]).status_code == 304


def test_every_write_is_seen_by_the_next_conditional_request(live_server: LiveServer) -> None:
    """Writes and conditional reads interleaved on two connections: after each write has
    answered, the ETag seen before it never answers 304 (the remembered version is
    forgotten before the writer's request answers)."""
    writer, reader = live_server.client(), live_server.client()
    etag = _first_page(reader).headers["etag"]
    for n in range(30):
        assert _first_page(reader, etag).status_code == 304
        sid = new_session(writer)
        if n % 3 == 0:
            assert writer.delete(f"/v1/sessions/{sid}").status_code == 204
        fresh = _first_page(reader, etag)
        assert fresh.status_code == 200, n
        etag = fresh.headers["etag"]


def test_a_version_read_before_a_commit_is_never_remembered_after_it() -> None:
    versions = IndexVersions(enabled=True)
    taken = versions.generation()  # a reader is about to read version 1
    versions.forget("acme", "alice")  # a commit made it 2 meanwhile
    versions.remember("acme", "alice", 1, taken)
    assert versions.get("acme", "alice") is None
    versions.remember("acme", "alice", 2, versions.generation())
    assert versions.get("acme", "alice") == 2
    versions.forget("", "")  # the bus may have missed messages: forget everyone
    assert versions.get("acme", "alice") is None


def test_nothing_is_remembered_where_other_processes_write() -> None:
    versions = IndexVersions(enabled=False)
    versions.remember("acme", "alice", 3, versions.generation())
    assert versions.get("acme", "alice") is None


def test_a_read_that_finds_sqlite_locked_goes_to_a_worker_thread(
    server_factory: ServerFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop's connection never waits (busy timeout 0): when it finds the database locked
    (`LockedNow`), the page is read on a worker thread, which may wait, and still answers.
    (A WAL reader is locked out only in rare moments, WAL recovery or a connection in
    exclusive locking mode, which a test cannot bring about beside a running server's pool:
    the lock is stood in for where it surfaces: `fetch_now` and `read_now`.)"""
    live_server = server_factory()
    client = live_server.client()
    new_session(client)
    st = _state(live_server)

    @contextmanager
    def locked() -> Iterator[Any]:
        raise LockedNow("database is locked")
        yield

    def locked_rows(_statements: Any) -> Any:
        raise LockedNow("database is locked")

    monkeypatch.setattr(st.db, "fetch_now", locked_rows)
    monkeypatch.setattr(st.db, "read_now", locked)
    with _statements() as seen:
        answer = _first_page(client)
    assert answer.status_code == 200
    assert len(answer.json()["items"]) == 1
    page_reads = [thread for thread, sql in seen if "FROM sessions" in sql]
    assert len(page_reads) == 1
    assert page_reads[0] != live_server.thread.thread.name


def test_the_loops_connection_never_waits_for_a_lock(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'quick.sqlite3'}")
    try:
        db.create_schema()
        with db.read_now() as s:
            assert s.connection().exec_driver_sql("PRAGMA busy_timeout").scalar() == 0
        with db.read() as s:
            assert s.connection().exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000
    finally:
        db.dispose()


def test_the_loops_first_connection_to_a_locked_sqlite_file_says_locked_now(
    tmp_path: Path,
) -> None:
    """The loop's connection is opened at its first read, and opening it sets WAL mode,
    which needs the file: held exclusively by another connection, that read raises
    `LockedNow` at once (the caller reads on a thread), never a plain database error."""
    path = tmp_path / "held.sqlite3"
    made = Database(f"sqlite:///{path}")
    made.create_schema()
    made.dispose()
    holder = sqlite3.connect(path, isolation_level=None)
    db = Database(f"sqlite:///{path}")
    try:
        holder.execute("PRAGMA locking_mode=EXCLUSIVE")
        holder.execute("BEGIN EXCLUSIVE")
        with pytest.raises(LockedNow), db.read_now() as s:
            s.execute(select(1))
        holder.execute("ROLLBACK")
        holder.close()
        with db.read_now() as s:
            assert s.execute(select(1)).scalar() == 1
    finally:
        holder.close()
        db.dispose()


def test_the_loops_driver_reads_fail_as_engine_errors_or_locked_now(tmp_path: Path) -> None:
    """`fetch_now` skips SQLAlchemy's execute, not its errors: a failing statement is a
    `DBAPIError` (what the app's handlers answer in the envelope), and a file held
    exclusively when the loop's connection is opened is `LockedNow` (read on a thread)."""
    path = tmp_path / "held.sqlite3"
    made = Database(f"sqlite:///{path}")
    made.create_schema()
    with pytest.raises(DBAPIError) as raised:
        made.fetch_now([("SELECT version FROM no_such_table WHERE tenant = :t", {"t": "x"})])
    assert isinstance(raised.value.orig, sqlite3.OperationalError)
    assert not is_outage(raised.value)
    assert made.fetch_now([("SELECT 1", {}), ("SELECT :n", {"n": 2})]) == [[(1,)], [(2,)]]
    made.dispose()
    holder = sqlite3.connect(path, isolation_level=None)
    db = Database(f"sqlite:///{path}")
    try:
        holder.execute("PRAGMA locking_mode=EXCLUSIVE")
        holder.execute("BEGIN EXCLUSIVE")
        with pytest.raises(LockedNow):
            db.fetch_now([("SELECT count(*) FROM sessions", {})])
        holder.execute("ROLLBACK")
        holder.close()
        assert db.fetch_now([("SELECT count(*) FROM sessions", {})]) == [[(0,)]]
    finally:
        holder.close()
        db.dispose()


def test_a_sqlite_file_the_loop_cannot_open_answers_the_index_503(
    server_factory: ServerFactory,
) -> None:
    """The file replaced (by a folder) before the loop's connection is opened: the first
    page's driver read fails to open it, and the index answers 503 `unavailable` in the
    envelope, as the engine's path would, never a 500 or a traceback."""
    live_server = server_factory()
    client = live_server.client()
    new_session(client)  # the pool's connections are open; the loop's is not yet
    database = Path(str(live_server.settings.database_url).removeprefix("sqlite:///"))
    database.rename(database.with_name("moved.sqlite3"))
    database.mkdir()
    down = _first_page(client)
    assert down.status_code == 503
    assert down.json()["error"]["code"] == "unavailable"
    assert down.headers["retry-after"]
    assert "Traceback" not in down.text


def test_read_now_on_postgresql_is_a_programming_error_not_a_lock() -> None:
    db = Database("postgresql+psycopg://nobody@127.0.0.1:1/none")
    try:
        with pytest.raises(RuntimeError, match="SQLite only"), db.read_now():
            pass
    finally:
        db.dispose()


def test_run_feeds_and_requests_share_the_request_threads(live_server: LiveServer) -> None:
    """A run feed's poll takes a worker thread and a pooled connection like a request does:
    requests and feeds together never run more than `REQUEST_THREADS` of them at once, so
    they never check out more than the pool keeps."""
    st = _state(live_server)
    entered, gate, lock = [0], threading.Event(), threading.Lock()
    peak = [0]

    def hold() -> tuple[list[dict[str, Any]], bool]:  # shaped as a feed's poll
        with st.db.read() as s:
            s.execute(select(1))
            with lock:
                entered[0] += 1
                peak[0] = max(peak[0], entered[0])
            gate.wait(30)
        with lock:
            entered[0] -= 1
        return [], True

    offload = st.feeds._offload  # what a feed's poll runs on
    futures = [asyncio.run_coroutine_threadsafe(st.run(hold), st.loop) for _ in range(20)]
    futures += [asyncio.run_coroutine_threadsafe(offload(hold), st.loop) for _ in range(20)]
    try:
        wait_until(lambda: entered[0] >= REQUEST_THREADS)
    finally:
        gate.set()
        for future in futures:
            future.result(timeout=30)
    assert peak[0] == REQUEST_THREADS


def test_concurrent_requests_never_churn_pooled_connections(live_server: LiveServer) -> None:
    """Request work that holds a connection, 32 at once: at most the pool's size is ever
    checked out, so no connection is opened and closed per request."""
    st = _state(live_server)
    closed: list[object] = []
    event.listen(st.db.engine, "close", lambda *_: closed.append(1))
    entered, gate, lock = [0], threading.Event(), threading.Lock()
    peak = [0]

    def hold() -> None:
        with st.db.read() as s:
            s.execute(select(1))
            with lock:
                entered[0] += 1
                peak[0] = max(peak[0], st.db.engine.pool.checkedout())  # type: ignore[attr-defined]
            gate.wait(30)
        with lock:
            entered[0] -= 1

    futures = [asyncio.run_coroutine_threadsafe(st.run(hold), st.loop) for _ in range(32)]
    wait_until(lambda: entered[0] >= 16)
    gate.set()
    for future in futures:
        future.result(timeout=30)
    assert peak[0] <= st.db.engine.pool.size()  # type: ignore[attr-defined]
    assert closed == []


@pytest.mark.postgres
def test_a_304_in_one_process_is_right_after_a_change_in_another(
    postgres_cluster: PostgresCluster, server_factory: ServerFactory, tmp_path: Path
) -> None:
    """Two processes of a fleet: right after a write to one has answered, the other never
    answers 304 to the ETag from before it (it reads the version from the database)."""
    url = postgres_cluster.new_database()
    a, b = (
        server_factory(backend="postgres", database_url=url, artifacts_dir=tmp_path / "objects")
        for _ in range(2)
    )
    on_a, on_b = a.client(), b.client()
    etag = _first_page(on_b).headers["etag"]
    for n in range(10):
        assert _first_page(on_b, etag).status_code == 304
        sid = new_session(on_a)
        if n % 2:
            assert on_a.delete(f"/v1/sessions/{sid}").status_code == 204
        fresh = _first_page(on_b, etag)
        assert fresh.status_code == 200, n
        assert fresh.headers["etag"] == _first_page(on_a).headers["etag"]
        etag = fresh.headers["etag"]


@pytest.mark.postgres
def test_a_stale_etag_on_postgresql_is_answered_in_one_round_trip(
    postgres_cluster: PostgresCluster,
    server_factory: ServerFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The conditional check reads the version and, as it differs, the page in the same
    statement: one snapshot, one round trip."""
    server = server_factory(
        backend="postgres",
        database_url=postgres_cluster.new_database(),
        artifacts_dir=tmp_path / "objects",
    )
    alice = server.client()
    etag = _first_page(alice).headers["etag"]
    new_session(alice)
    reader = _state(server).pg_reader
    assert reader is not None
    statements: list[str] = []
    fetch = reader.fetch

    async def recording(sql: str, params: Any) -> Any:
        statements.append(sql)
        return await fetch(sql, params)

    monkeypatch.setattr(reader, "fetch", recording)
    fresh = _first_page(alice, etag)
    assert fresh.status_code == 200 and len(fresh.json()["items"]) == 1
    assert fresh.headers["etag"] != etag
    assert len(statements) == 1, "the version and the page in one round trip"
    assert _pg_sql(VERSION_OF) in statements[0]


@pytest.mark.postgres
def test_a_postgresql_restart_is_invisible_to_the_index_and_an_outage_is_503(
    postgres_cluster: PostgresCluster, server_factory: ServerFactory, tmp_path: Path
) -> None:
    """The loop's own connections (`server_stub.db.pgloop`) behave as the engine's: one the
    restart killed is replaced before a request sees it; a database that is down answers
    503 `unavailable` with `Retry-After` on the same keep-alive connection."""
    server = server_factory(
        backend="postgres",
        database_url=postgres_cluster.new_database(),
        artifacts_dir=tmp_path / "objects",
    )
    alice = server.client()
    new_session(alice)
    etag = _first_page(alice).headers["etag"]
    assert _first_page(alice, etag).status_code == 304  # the loop's connections are open
    postgres_cluster.halt()
    try:
        down = _first_page(alice, etag)
        assert down.status_code == 503
        assert down.json()["error"]["code"] == "unavailable"
        assert down.headers["retry-after"]
        assert _first_page(alice).status_code == 503
    finally:
        postgres_cluster.resume()
    assert _first_page(alice, etag).status_code == 304
    new_session(alice)
    assert _first_page(alice, etag).status_code == 200


@pytest.mark.postgres
def test_after_a_postgresql_restart_no_dead_loop_connection_reaches_a_request(
    postgres_cluster: PostgresCluster,
) -> None:
    """A restart kills every idle loop connection at once, not one: the first read after it
    drops them all and connects afresh, so it succeeds however many were open."""
    reader = PgLoopReader(postgres_cluster.new_database())

    async def scenario() -> None:
        try:
            # Four reads at once each open their own connection (none is idle yet).
            opened = await asyncio.gather(*(reader.fetch("SELECT 1", {}) for _ in range(4)))
            assert opened == [[(1,)]] * 4
            postgres_cluster.halt()
            postgres_cluster.resume()
            for _ in range(4):
                assert await reader.fetch("SELECT 1", {}) == [(1,)]
        finally:
            await reader.close()

    asyncio.run(scenario())


@pytest.mark.postgres
def test_a_first_page_on_postgresql_costs_one_statement_after_a_change(
    server_factory: ServerFactory,
    postgres_cluster: PostgresCluster,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The version and the page come in one round trip (one snapshot, so the ETag is never
    newer than the page); unchanged, the page remembered for that version is sent again."""
    server = server_factory(backend="postgres", database_url=postgres_cluster.clean_database())
    client = server.client()
    reader = _state(server).pg_reader
    assert reader is not None
    sent: list[str] = []
    fetch = reader.fetch

    async def counted(sql: str, params: Any) -> Any:
        sent.append(sql)
        return await fetch(sql, params)

    monkeypatch.setattr(reader, "fetch", counted)
    for _ in range(3):
        sid = new_session(client)
        sent.clear()
        page = _first_page(client)
        assert page.status_code == 200 and page.json()["items"][0]["id"] == sid
        assert len(sent) == 1, sent
        sent.clear()
        again = _first_page(client)
        assert again.content == page.content and again.headers["etag"] == page.headers["etag"]
        assert len(sent) <= 1, sent
