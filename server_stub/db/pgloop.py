"""PostgreSQL: the session index's small reads on the event loop, over psycopg's own async
connections, so that they need no worker thread.

One `SELECT` through the pooled SQLAlchemy engine on a worker thread (hop, pre-ping, BEGIN,
COMMIT) costs several times the same `SELECT` on an autocommit `psycopg.AsyncConnection` on
the loop (`python -m bench server --postgres`). The index's reads are single statements
under READ COMMITTED, where a transaction adds no consistency (each statement takes its own
snapshot anyway), so autocommit loses nothing; the first page's version and rows come from
one statement, one snapshot, so an ETag is never newer than the page it goes with.

Bounds: at most `size` connections (requests beyond wait for one, on the loop, costing no
thread); `connect_timeout` and a `statement_timeout` on every connection, so a database
that stops answering cannot hold a request for ever. Failures: a connection that broke (the
server restarted) is dropped with every idle one (a restart ends them all at once, so the
next idle one would be dead too) and the statement is tried once more on a fresh
connection, as the engine's pre-ping would have done; any other error, or a second failure,
is raised as SQLAlchemy's `DBAPIError`, so the app's handlers answer it exactly as an
engine error (503 `unavailable` for an outage, `server_stub.db.outage`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import psycopg
from sqlalchemy import exc as sa_exc
from sqlalchemy import make_url

#: Connections a process keeps for loop reads, beside the engine's pool (the fleet's total
#: against PostgreSQL's `max_connections`: `server_stub.db.engine.POOL_SIZE`).
LOOP_CONNECTIONS = 4
CONNECT_TIMEOUT_S = 10
STATEMENT_TIMEOUT_MS = 10_000


class PgLoopReader:
    """A few autocommit async connections and `fetch(sql, params)` on them (loop only)."""

    def __init__(self, url: str, size: int = LOOP_CONNECTIONS) -> None:
        self._conninfo = make_url(url).set(drivername="postgresql").render_as_string(False)
        self._idle: list[psycopg.AsyncConnection[Any]] = []
        # Bound to the loop at its first use, not here (made on a thread, `_open_state`).
        self._slots = asyncio.Semaphore(size)

    async def fetch(self, sql: str, params: Mapping[str, Any]) -> Sequence[tuple[Any, ...]]:
        """Every row of one statement (pyformat `%(name)s` parameters)."""
        async with self._slots:
            for attempt in (1, 2):
                conn = await self._connection()
                try:
                    cursor = await conn.execute(sql, params)
                    rows = await cursor.fetchall()
                except psycopg.Error as error:
                    broken = conn.broken or conn.closed
                    await conn.close()
                    if broken and attempt == 1:
                        # The server dropped it, so it dropped its idle siblings too: once
                        # more, on a connection made now.
                        await self.close()
                        continue
                    raise _as_dbapi_error(sql, params, error) from error
                except BaseException:  # cancelled mid-statement (a shutdown): not reused
                    await conn.close()
                    raise
                self._idle.append(conn)
                return rows
        raise AssertionError("unreachable")

    async def fetch_in_transaction(
        self, statements: Sequence[tuple[str, Mapping[str, Any]]], *, stop_unless_first: bool
    ) -> list[Sequence[tuple[Any, ...]]]:
        """Each statement's rows, in one transaction on one connection; with
        `stop_unless_first`, the rest are skipped (and the transaction ends) when the first
        one's first value is not true (`server_stub.domain.indexlease`: a lock taken or not)."""
        async with self._slots:
            conn = await self._connection()
            results: list[Sequence[tuple[Any, ...]]] = []
            try:
                async with conn.transaction():
                    for sql, params in statements:
                        cursor = await conn.execute(sql, params)
                        results.append(await cursor.fetchall())
                        if stop_unless_first and len(results) == 1 and not results[0][0][0]:
                            break
            except psycopg.Error as error:
                broken = conn.broken
                await conn.close()
                if broken:
                    await self.close()
                raise _as_dbapi_error(statements[0][0], {}, error) from error
            except BaseException:  # cancelled mid-statement: the connection is not reused
                await conn.close()
                raise
            self._idle.append(conn)
            return results

    async def _connection(self) -> psycopg.AsyncConnection[Any]:
        if self._idle:
            return self._idle.pop()
        try:
            return await psycopg.AsyncConnection.connect(
                self._conninfo,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT_S,
                options=f"-c statement_timeout={STATEMENT_TIMEOUT_MS}",
            )
        except psycopg.Error as error:
            raise _as_dbapi_error("connect", {}, error) from error

    async def close(self) -> None:
        """Close every idle connection: at shutdown, and when one broke (a server restart
        ends them all, so none is worth a try)."""
        idle, self._idle = self._idle, []
        for conn in idle:
            await conn.close()


def _as_dbapi_error(sql: str, params: Mapping[str, Any], error: psycopg.Error) -> sa_exc.DBAPIError:
    """`error` as SQLAlchemy would have raised it (OperationalError, ProgrammingError, …)."""
    wrapped = sa_exc.DBAPIError.instance(sql, dict(params), error, psycopg.Error)
    assert isinstance(wrapped, sa_exc.DBAPIError)
    return wrapped
