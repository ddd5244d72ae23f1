"""What PostgreSQL itself sees of a page of the index: one statement, executed by name.

The loop's reads (`server_stub.db.pgloop`) prepare each statement on a connection at its first
use and then only bind and execute it, in autocommit: no BEGIN, COMMIT or ROLLBACK around a
page, no parse or plan per request. Counted from the database's own log (`log_statement =
all` on the test's database), so no layer of the client can hide a round trip. The reader's
answers stay those of `cursor.execute`: the same parameter types, values and errors.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path

import httpx
import psycopg
import pytest
from sqlalchemy import exc as sa_exc
from sqlalchemy import make_url

from server_stub.db import pgloop
from tests.conftest import PostgresCluster, ServerFactory
from tests.server.conftest import new_session

pytestmark = pytest.mark.postgres

#: One log entry's head: `2026-12-07 20:43:45.099 UTC [25307] LOG:  execute name: SELECT …`.
_ENTRY = re.compile(r"^\d{4}-\d\d-\d\d [\d:.]+ \S+ \[(\d+)\] (\w+):  (.*)$")


def _logged_database(cluster: PostgresCluster) -> str:
    """A fresh database whose every statement the cluster's log records."""
    url = cluster.new_database()
    name = make_url(url).database
    with psycopg.connect(
        f"host=127.0.0.1 port={cluster.port} user=postgres dbname=postgres", autocommit=True
    ) as conn:
        conn.execute(f"ALTER DATABASE \"{name}\" SET log_statement = 'all'")
    return url


def _statements_during(log: Path, request: Callable[[], httpx.Response]) -> list[tuple[str, str]]:
    """(backend pid, message) of every statement logged while `request` ran (a statement is
    logged before it runs, so before its answer reaches the request)."""
    start = log.stat().st_size
    response = request()
    assert response.status_code == 200, response.text
    with log.open("rb") as fh:
        fh.seek(start)
        text = fh.read().decode("utf-8", "replace")
    entries: list[tuple[str, str, str]] = []  # (pid, level, message and its further lines)
    for line in text.splitlines():
        match = _ENTRY.match(line)
        if match:
            entries.append((match.group(1), match.group(2), match.group(3)))
        elif entries:
            pid, level, message = entries[-1]
            entries[-1] = (pid, level, f"{message}\n{line}")
    return [(pid, message) for pid, level, message in entries if level == "LOG"]


def test_each_page_of_the_index_is_one_execution_of_a_prepared_statement(
    postgres_cluster: PostgresCluster, server_factory: ServerFactory, tmp_path: Path
) -> None:
    """The first page just after a change and a page at a cursor: one statement each, by
    the name it was prepared under, and nothing else on that backend; from the first
    request (psycopg's own cursor sends a statement unnamed, parsed and planned again, for
    its first five executions on a connection). Without the index-cache lease, whose
    renewals would share the loop's connections."""
    server = server_factory(
        backend="postgres",
        database_url=_logged_database(postgres_cluster),
        artifacts_dir=tmp_path / "objects",
        index_lease=False,
    )
    client = server.client()
    for _ in range(3):
        new_session(client)
    cursor = client.get("/v1/sessions", params={"limit": 2}).json()["next_cursor"]
    assert cursor is not None
    log = postgres_cluster.root / "log"
    pages: dict[str, Callable[[], httpx.Response]] = {
        "first page after a change": lambda: client.get("/v1/sessions", params={"limit": 2}),
        "page at a cursor": lambda: client.get(
            "/v1/sessions", params={"limit": 2, "cursor": cursor}
        ),
    }
    for round_no in range(7):  # past psycopg's prepare threshold of five
        new_session(client)  # the first page is read again, not sent from memory
        for what, request in pages.items():
            seen = _statements_during(log, request)
            reads = [(pid, message) for pid, message in seen if "FROM sessions" in message]
            assert len(reads) == 1, (what, round_no, seen)
            pid, message = reads[0]
            assert [m for p, m in seen if p == pid] == [message], (what, round_no, seen)
            named = message.startswith("execute ") and not message.startswith("execute <unnamed>")
            assert named, (what, round_no, message)


def test_the_loop_reader_answers_as_psycopgs_cursor(postgres_cluster: PostgresCluster) -> None:
    """Parameters dumped with psycopg's types (a name used twice is one parameter, `%%` a
    percent sign), rows loaded with them; more statements than a connection keeps prepared
    still answer; an error is SQLAlchemy's and leaves no broken connection behind."""
    reader = pgloop.PgLoopReader(postgres_cluster.new_database())

    async def scenario() -> None:
        try:
            rows = await reader.fetch(
                "SELECT %(a)s::int + 1, %(b)s, %(c)s::text, %(a)s * 2, '100%%', %(f)s + 0.5",
                {"a": 41, "b": "x é", "c": None, "f": 2.0},
            )
            assert rows == [(42, "x é", None, 82, "100%", 2.5)]
            for n in range(pgloop.PREPARED_PER_CONNECTION + 3):
                assert await reader.fetch(f"SELECT {n}, %(n)s::int", {"n": n}) == [(n, n)]
            with pytest.raises(sa_exc.ProgrammingError):
                await reader.fetch("SELECT * FROM no_such_table", {})
            with pytest.raises(sa_exc.DataError):
                await reader.fetch("SELECT %(n)s::int", {"n": "not a number"})
            assert await reader.fetch("SELECT 1", {}) == [(1,)]
            assert await reader.fetch("SELECT 1 WHERE false", {}) == []
        finally:
            await reader.close()

    asyncio.run(scenario())


def test_the_loop_reader_keeps_one_reader_per_connection(postgres_cluster: PostgresCluster) -> None:
    """A read adds and removes no reader on the loop (each connection's stays for its life);
    one the server ended while idle is dropped by its reader, not polled, and the next read
    answers on a fresh connection; the lease's transaction (psycopg's own waits) gives the
    socket back to the reader after it."""
    reader = pgloop.PgLoopReader(postgres_cluster.new_database(), size=1)

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        registrations: list[int] = []
        add_reader = loop.add_reader

        def counted(fd: int, *args: object) -> None:
            registrations.append(fd)
            add_reader(fd, *args)  # type: ignore[arg-type]

        try:
            (pid,) = (await reader.fetch("SELECT pg_backend_pid()", {}))[0]
            loop.add_reader = counted  # type: ignore[method-assign,assignment]
            for n in range(20):
                assert await reader.fetch("SELECT %(n)s::int", {"n": n}) == [(n,)]
            assert registrations == []
            lease = await reader.fetch_in_transaction([("SELECT true", {})], stop_unless_first=True)
            assert lease == [[(True,)]]
            assert await reader.fetch("SELECT 2", {}) == [(2,)]
            admin_dsn = f"host=127.0.0.1 port={postgres_cluster.port} user=postgres"
            with psycopg.connect(admin_dsn, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", [pid])
            await asyncio.sleep(0.2)  # the goodbye reaches the idle connection's reader
            assert [loop_conn.attached for loop_conn in reader._idle] == [False]
            assert await reader.fetch("SELECT 3", {}) == [(3,)]
        finally:
            loop.add_reader = add_reader  # type: ignore[method-assign]
            await reader.close()

    asyncio.run(scenario())


def test_the_watches_one_change_wakes_share_one_read_of_the_new_first_page(
    postgres_cluster: PostgresCluster, server_factory: ServerFactory, tmp_path: Path
) -> None:
    """Two servers on one PostgreSQL (the fleet, where no process remembers versions): six
    devices of one principal hold their watches on B; a session created through A wakes
    them all (NOTIFY), and B reads the version and the new first page once for all six,
    not once each. Every watch still answers 200 with that page and its new ETag."""
    url = _logged_database(postgres_cluster)
    a, b = (
        server_factory(
            backend="postgres",
            database_url=url,
            artifacts_dir=tmp_path / "objects",
            index_lease=False,
        )
        for _ in range(2)
    )
    new_session(a.client())
    log = postgres_cluster.root / "log"

    async def watched_change() -> list[httpx.Response]:
        async with httpx.AsyncClient(
            base_url=b.url, headers={"Authorization": "Bearer dev-alice"}, timeout=30
        ) as client:
            etag = (await client.get("/v1/sessions")).headers["ETag"]
            headers = {"If-None-Match": etag, "Prefer": "wait=30"}
            watches = [
                asyncio.ensure_future(client.get("/v1/sessions", headers=headers)) for _ in range(6)
            ]
            watch_state = b.thread.app.state.converge.watches
            while watch_state.held < 6:
                await asyncio.sleep(0.01)
            start = log.stat().st_size
            await asyncio.to_thread(new_session, a.client())
            answers = await asyncio.gather(*watches)
            with log.open("rb") as fh:
                fh.seek(start)
                logged = fh.read().decode("utf-8", "replace")
            reads.append(logged.count("SELECT v.version, p.*"))
            return answers

    reads: list[int] = []
    answers = asyncio.run(watched_change())
    assert [r.status_code for r in answers] == [200] * 6
    assert len({r.headers["ETag"] for r in answers}) == 1
    assert {len(r.json()["items"]) for r in answers} == {2}
    assert reads == [1]
