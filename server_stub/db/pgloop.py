"""PostgreSQL: the session index's small reads on the event loop, over psycopg's own async
connections, so that they need no worker thread.

One `SELECT` through the pooled SQLAlchemy engine on a worker thread (hop, pre-ping, BEGIN,
COMMIT) costs several times the same `SELECT` on an autocommit `psycopg.AsyncConnection` on
the loop (`python -m bench server --postgres`). The index's reads are single statements
under READ COMMITTED, where a transaction adds no consistency (each statement takes its own
snapshot anyway), so autocommit loses nothing; the first page's version and rows come from
one statement, one snapshot, so an ETag is never newer than the page it goes with.

`fetch` speaks to libpq itself (decision 0233): each statement is prepared on a connection at
its first use there and then only bound and executed (one message exchange, no parse or plan
per request), its parameters dumped and its rows loaded by psycopg's own `Transformer` (the
same types and values as `cursor.execute`), and the wait for the answer is a future that the
connection's reader, kept on the loop for its life, resolves. psycopg's cursor, its query
parser, its lock and its generic wait cost about as much client CPU as the round trip itself;
none of them is needed for one statement on a connection no one else uses.

Bounds: at most `size` connections (requests beyond wait for one, on the loop, costing no
thread); `connect_timeout` and a `statement_timeout` on every connection, so a database
that stops answering cannot hold a request for ever; at most `PREPARED_PER_CONNECTION`
statements prepared per connection (any further one is sent unnamed). Failures: a connection
that broke (the server restarted) is dropped with every idle one (a restart ends them all at
once, so the next idle one would be dead too) and the statement is tried once more on a
fresh connection, as the engine's pre-ping would have done; any other error, or a second
failure, is raised as SQLAlchemy's `DBAPIError`, so the app's handlers answer it exactly as
an engine error (503 `unavailable` for an outage, `server_stub.db.outage`).
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

import psycopg
from psycopg import errors, pq
from psycopg.adapt import PyFormat, Transformer
from sqlalchemy import exc as sa_exc
from sqlalchemy import make_url

#: Connections a process keeps for loop reads, beside the engine's pool (the fleet's total
#: against PostgreSQL's `max_connections`: `server_stub.db.engine.POOL_SIZE`).
LOOP_CONNECTIONS = 4
CONNECT_TIMEOUT_S = 10
STATEMENT_TIMEOUT_MS = 10_000
#: Statements a loop connection keeps prepared: the index's and the lease's handful.
PREPARED_PER_CONNECTION = 16


class _LoopConnection:
    """A loop connection, the statements prepared on it ((SQL, parameter types) → name), the
    loader of its rows, and its socket's reader on the loop.

    The reader stays on the loop for the connection's life (adding and removing one around
    every wait cost a quarter of a read's client CPU): it hands libpq whatever arrived, so an
    idle connection's notice or the server's goodbye never leaves the loop polling, and
    resumes the statement waiting on `waiter` once libpq holds its next result. psycopg's
    own waits (`fetch_in_transaction`) take the socket's reader for themselves: `detach`
    before, `attach` after."""

    __slots__ = ("attached", "conn", "fileno", "prepared", "transformer", "waiter")

    def __init__(self, conn: psycopg.AsyncConnection[Any]) -> None:
        self.conn = conn
        self.prepared: dict[tuple[str, tuple[int, ...]], bytes] = {}
        self.transformer = Transformer(conn)
        self.waiter: asyncio.Future[None] | None = None
        self.fileno = conn.pgconn.socket  # kept: libpq forgets it once the connection is lost
        self.attached = False
        self.attach()

    def attach(self) -> None:
        asyncio.get_running_loop().add_reader(self.fileno, self._readable)
        self.attached = True

    def detach(self) -> None:
        if self.attached:
            self.attached = False
            asyncio.get_running_loop().remove_reader(self.fileno)

    async def close(self) -> None:
        self.detach()
        await self.conn.close()

    def _readable(self) -> None:
        waiter = self.waiter
        pgconn = self.conn.pgconn
        try:
            pgconn.consume_input()
        except psycopg.OperationalError as error:  # the server ended the connection
            self.detach()
            if waiter is not None and not waiter.done():
                waiter.set_exception(error)
            return
        if waiter is not None and not waiter.done() and not pgconn.is_busy():
            waiter.set_result(None)


class PgLoopReader:
    """A few autocommit async connections and `fetch(sql, params)` on them (loop only)."""

    def __init__(self, url: str, size: int = LOOP_CONNECTIONS) -> None:
        self._conninfo = make_url(url).set(drivername="postgresql").render_as_string(False)
        self._idle: list[_LoopConnection] = []
        # Bound to the loop at its first use, not here (made on a thread, `_open_state`).
        self._slots = asyncio.Semaphore(size)

    async def fetch(self, sql: str, params: Mapping[str, Any]) -> Sequence[tuple[Any, ...]]:
        """Every row of one statement (pyformat `%(name)s` parameters)."""
        async with self._slots:
            for attempt in (1, 2):
                loop_conn = await self._connection()
                conn = loop_conn.conn
                try:
                    rows = await _execute(loop_conn, sql, params)
                except psycopg.Error as error:
                    broken = conn.broken or conn.closed
                    await loop_conn.close()
                    if broken and attempt == 1:
                        # The server dropped it, so it dropped its idle siblings too: once
                        # more, on a connection made now.
                        await self.close()
                        continue
                    raise _as_dbapi_error(sql, params, error) from error
                except BaseException:  # cancelled mid-statement (a shutdown): not reused
                    await loop_conn.close()
                    raise
                self._idle.append(loop_conn)
                return rows
        raise AssertionError("unreachable")

    async def fetch_in_transaction(
        self, statements: Sequence[tuple[str, Mapping[str, Any]]], *, stop_unless_first: bool
    ) -> list[Sequence[tuple[Any, ...]]]:
        """Each statement's rows, in one transaction on one connection; with
        `stop_unless_first`, the rest are skipped (and the transaction ends) when the first
        one's first value is not true (`server_stub.domain.indexlease`: a lock taken or not)."""
        async with self._slots:
            loop_conn = await self._connection()
            conn = loop_conn.conn
            results: list[Sequence[tuple[Any, ...]]] = []
            loop_conn.detach()  # psycopg's waits take the socket's reader
            try:
                async with conn.transaction():
                    for sql, params in statements:
                        cursor = await conn.execute(sql, params)
                        results.append(await cursor.fetchall())
                        if stop_unless_first and len(results) == 1 and not results[0][0][0]:
                            break
            except psycopg.Error as error:
                broken = conn.broken
                await loop_conn.close()
                if broken:
                    await self.close()
                raise _as_dbapi_error(statements[0][0], {}, error) from error
            except BaseException:  # cancelled mid-statement: the connection is not reused
                await loop_conn.close()
                raise
            loop_conn.attach()
            self._idle.append(loop_conn)
            return results

    async def _connection(self) -> _LoopConnection:
        if self._idle:
            return self._idle.pop()
        try:
            conn = await psycopg.AsyncConnection.connect(
                self._conninfo,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT_S,
                options=f"-c statement_timeout={STATEMENT_TIMEOUT_MS}",
            )
        except psycopg.Error as error:
            raise _as_dbapi_error("connect", {}, error) from error
        return _LoopConnection(conn)

    async def close(self) -> None:
        """Close every idle connection: at shutdown, and when one broke (a server restart
        ends them all, so none is worth a try)."""
        idle, self._idle = self._idle, []
        for loop_conn in idle:
            await loop_conn.close()


_PARAMETER = re.compile(r"%\((\w+)\)s|%%")


@functools.lru_cache(maxsize=64)
def _numbered(sql: str) -> tuple[bytes, tuple[str, ...]]:
    """`sql` with its `%(name)s` parameters as libpq's `$n` (one number per name) and `%%` as
    `%`, and the names in their numbers' order."""
    names: list[str] = []

    def number(match: re.Match[str]) -> str:
        name = match.group(1)
        if name is None:
            return "%"
        if name not in names:
            names.append(name)
        return f"${names.index(name) + 1}"

    return _PARAMETER.sub(number, sql).encode(), tuple(names)


async def _execute(
    loop_conn: _LoopConnection, sql: str, params: Mapping[str, Any]
) -> list[tuple[Any, ...]]:
    """One statement's rows: bound to the statement prepared on this connection (prepared
    here at its first use), its parameters dumped as `cursor.execute` dumps them."""
    pgconn = loop_conn.conn.pgconn
    command, names = _numbered(sql)
    transformer = loop_conn.transformer
    values = transformer.dump_sequence([params[n] for n in names], [PyFormat.TEXT] * len(names))
    types = transformer.types or ()
    key = (sql, types)
    name = loop_conn.prepared.get(key)
    if name is None and len(loop_conn.prepared) < PREPARED_PER_CONNECTION:
        name = f"converge_loop_{len(loop_conn.prepared)}".encode()
        pgconn.send_prepare(name, command, types or None)
        await _result(loop_conn)
        loop_conn.prepared[key] = name
    if name is None:
        pgconn.send_query_params(command, values, types or None)
    else:
        pgconn.send_query_prepared(name, values)
    result = await _result(loop_conn)
    transformer.set_pgresult(result)
    return transformer.load_rows(0, result.ntuples, tuple)


async def _result(loop_conn: _LoopConnection) -> pq.abc.PGresult:
    """The result of the command just sent, once the server has answered it; the error it
    carries, raised."""
    pgconn = loop_conn.conn.pgconn
    while pgconn.flush():
        await _writable(pgconn.socket)
    last = None
    while True:  # until libpq has every result and the end of the command (never blocking)
        while pgconn.is_busy():
            if not loop_conn.attached:
                raise psycopg.OperationalError("the connection was lost")
            loop_conn.waiter = asyncio.get_running_loop().create_future()
            try:
                await loop_conn.waiter  # its reader consumes the input (`_readable`)
            finally:
                loop_conn.waiter = None
        result = pgconn.get_result()
        if result is None:
            break
        last = result
    if last is None:
        raise psycopg.InterfaceError("the server sent no result")
    if last.status == pq.ExecStatus.FATAL_ERROR:
        raise errors.error_from_result(last, encoding=loop_conn.conn.info.encoding)
    return last


async def _writable(fileno: int) -> None:
    """Until `fileno` can be written (a statement bigger than the socket's buffer)."""
    loop = asyncio.get_running_loop()
    ready = loop.create_future()
    loop.add_writer(fileno, _settle, ready)
    try:
        await ready
    finally:
        loop.remove_writer(fileno)


def _settle(ready: asyncio.Future[None]) -> None:
    if not ready.done():
        ready.set_result(None)


def _as_dbapi_error(sql: str, params: Mapping[str, Any], error: psycopg.Error) -> sa_exc.DBAPIError:
    """`error` as SQLAlchemy would have raised it (OperationalError, ProgrammingError, …)."""
    wrapped = sa_exc.DBAPIError.instance(sql, dict(params), error, psycopg.Error)
    assert isinstance(wrapped, sa_exc.DBAPIError)
    return wrapped
