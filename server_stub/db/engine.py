"""Engine factory and transaction helpers.

SQLite: WAL, `synchronous=NORMAL`, a busy timeout and foreign keys in a connect listener; the
driver's own transaction handling is switched off so that we emit `BEGIN IMMEDIATE` for write
transactions (one writer at a time, taken at the start, never upgraded midway: this is what
makes "check for an active run, then purge" one atomic step) and a plain `BEGIN` for reads.
PostgreSQL: ordinary READ COMMITTED transactions; the routes that must exclude each other
(delete and run start) lock the session row with `SELECT … FOR UPDATE`.
"""

from __future__ import annotations

import secrets
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, func, make_url, select
from sqlalchemy import exc as sa_exc
from sqlalchemy.orm import Session
from sqlalchemy.pool import StaticPool

from server_stub.db.fairlock import FairLock
from server_stub.db.models import DeletionTombstoneRow, ServerMeta
from server_stub.db.schema import upgrade_schema
from server_stub.storage.private import private_sqlite_file

_WRITE = "converge_write"
#: Execution option: no BEGIN at all, each statement reads its own snapshot (`read_now`).
_STATEMENTS = "converge_statements"

#: `Session.info` key: the (tenant, principal) pairs whose index version the transaction
#: bumped (`history.bump_version` adds them); `Database.index_listener` hears each one after
#: the commit.
CHANGED_INDEXES = "converge_changed_indexes"

IndexListener = Callable[[str, str], None]


#: Connections the pool keeps open: the request threads (`server_stub.state.REQUEST_THREADS`,
#: shared by requests and run feeds) plus the agents', leases' and maintenance's threads. A
#: connection checked out above it is closed when given back (churn); the overflow only
#: absorbs rare bursts of those others, and is kept because without it a burst waits for the
#: pool's timeout and fails. A PostgreSQL process holds at most 24 + 16 + 4 loop
#: connections (`pgloop`) + 1 bus listener = 45, 29 outside a burst: a fleet of three needs
#: `max_connections` of 135 plus the superuser reserve at worst (the default 100 holds it
#: only while no process overflows, 3 x 29 = 87).
POOL_SIZE = 24
POOL_OVERFLOW = 16

SQLITE_BUSY_TIMEOUT_MS = 30000
#: How long a checkpoint waits for readers of older WAL frames before giving up for now.
SCRUB_BUSY_TIMEOUT_MS = 2000
#: server_meta key: the deletion time up to which a VACUUM FULL has scrubbed.
FULL_VACUUM_KEY = "vacuum_full_through"


class LockedNow(Exception):
    """SQLite was locked at that instant: `Database.read_now` does not wait; read on a
    thread instead (`Database.read`, with the busy timeout)."""


@dataclass(frozen=True)
class ScrubResult:
    """Whether purged content has left the database files, how long it took, and a note."""

    complete: bool
    seconds: float
    note: str


class Database:
    """One engine plus `read()` / `write()` transaction scopes; the caller owns the commit."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        if self.is_sqlite:
            _ensure_sqlite_folder(url)
        self.engine = _make_engine(url)
        self._disposed = False
        event.listen(self.engine, "checkin", self._on_checkin)
        # SQLite: one more connection, for reads on the event loop (`read_now`).
        self._quick = _make_quick_engine(url) if self.is_sqlite else None
        self.vacuum_full = False  # PostgreSQL scrubs: VACUUM FULL instead of VACUUM
        # This process's (this app's) identity in a fleet: the origin of its bus messages
        # and the owner of the runs it executes (8 hex digits: an advisory-lock key).
        self.instance_id = secrets.token_hex(4)
        self._write_turns = FairLock()
        #: Called with (tenant, principal) after each commit that bumped that principal's
        #: index version (the app sets it to wake held index watches, `server_stub.domain.watches`).
        self.index_listener: IndexListener | None = None

    def create_schema(self) -> str:
        """Bring the schema to this build's head revision (`server_stub.db.schema`: Alembic
        revisions, a fleet-wide advisory lock on PostgreSQL); what was done, in words.
        Raises `SchemaError` for a database this build cannot serve (a newer one)."""
        return upgrade_schema(self.engine)

    def scrub(self, tables: Sequence[str]) -> ScrubResult:
        """Make purged content leave the database's files (CONTRACT §9.2).

        SQLite: deleted cells are already zeroed (`secure_delete`), but the WAL still holds
        the old page images and the main file lacks the zeroed pages until a checkpoint:
        `wal_checkpoint(TRUNCATE)` copies every frame back and empties the WAL. It can only
        finish when no reader still uses older frames, so it waits a bounded time and says
        whether it finished (PITFALLS §10); the caller retries later when it did not.
        PostgreSQL: `VACUUM` of the purged tables removes the dead tuples from the table and
        index pages (what it cannot reach, WAL segments, is documented in
        docs/reliability.md).
        """
        started = time.perf_counter()
        if self.is_sqlite:
            with self.engine.connect() as conn:
                raw = conn.connection.dbapi_connection
                assert raw is not None
                raw.execute(f"PRAGMA busy_timeout={SCRUB_BUSY_TIMEOUT_MS}")
                try:
                    row = raw.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                finally:
                    raw.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
            busy, frames, copied = (int(v) for v in row)
            complete = busy == 0 and frames == copied
            return ScrubResult(complete, time.perf_counter() - started, f"wal frames {frames}")
        full = self.vacuum_full and self._purged_since_full_vacuum()
        verb = "VACUUM FULL" if full else "VACUUM"
        with self.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            for table in tables:
                conn.exec_driver_sql(f'{verb} "{table}"')
        if full:
            self._set_meta(FULL_VACUUM_KEY, self._latest_purge() or "")
        note = f"{verb.lower()} of {len(tables)} tables"
        return ScrubResult(True, time.perf_counter() - started, note)

    def _latest_purge(self) -> str | None:
        with self.read() as s:
            return s.scalar(select(func.max(DeletionTombstoneRow.deleted_at)))

    def _purged_since_full_vacuum(self) -> bool:
        """VACUUM FULL rewrites whole tables: only worth it when a purge happened since."""
        latest = self._latest_purge()
        return latest is not None and latest > (self.scalar_meta(FULL_VACUUM_KEY) or "")

    def _set_meta(self, key: str, value: str) -> None:
        with self.write() as s:
            row = s.get(ServerMeta, key)
            if row is None:
                s.add(ServerMeta(key=key, value=value))
            else:
                row.value = value

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A read-only transaction (a deferred `BEGIN` on SQLite)."""
        with self._scope(write=False) as session:
            yield session

    @contextmanager
    def read_now(self) -> Iterator[Session]:
        """SQLite only: reads on the calling thread, on one dedicated connection whose busy
        timeout is 0, so that they never wait: a lock raises `LockedNow` at once, opening
        that connection included (it sets WAL mode, which needs the file).

        For the event loop: a WAL reader takes no lock a writer holds, so the index's small
        reads cost less here than the hop to a worker thread; the rare moment a
        reader must wait (WAL recovery, a reset of the WAL index) goes back to a thread. One
        thread only (the loop's): the connection is not shared safely between threads.

        No transaction (a BEGIN and its COMMIT are a large share of the page's cost): each
        statement reads its own snapshot, as under PostgreSQL's READ COMMITTED. The index
        route reads the version before the page, so an ETag is never newer than its page.
        A caller on PostgreSQL is a mistake (`RuntimeError`), never a lock to fall back on.
        """
        if self._quick is None:
            raise RuntimeError("read_now is for SQLite only; use read() on a worker thread")
        try:
            with self._quick.connect() as conn:
                conn.execution_options(**{_WRITE: False, _STATEMENTS: True})
                with conn.begin():
                    session = Session(bind=conn, expire_on_commit=False, autoflush=False)
                    try:
                        yield session
                    finally:
                        session.close()
        except sa_exc.OperationalError as exc:
            if "database is locked" in str(exc.orig).lower():
                raise LockedNow(str(exc.orig)) from exc
            raise

    def fetch_now(
        self, statements: Sequence[tuple[str, Mapping[str, Any]]]
    ) -> list[list[tuple[Any, ...]]]:
        """SQLite only: every row of each (SQL, named parameters) statement, in order, read
        as `read_now` reads (the loop's connection, busy timeout 0, no BEGIN: each statement
        its own snapshot), but on the driver's cursor.

        For the index's first page after a change: reading the version and the page through
        a Connection, a Session and SQLAlchemy's execute costs several times what the
        driver's cursor does (decision 0160). The SQL is precompiled by the caller; the
        rows come back as the driver's tuples (no type processing: only for columns the
        driver returns as they are, text and integers). One thread only, the loop's, as
        `read_now`. A lock raises `LockedNow` at once, any other driver error is
        raised as SQLAlchemy's `DBAPIError`, so the app's handlers answer it as an engine
        error (503 for an outage). Engine events (`before_cursor_execute`) do not see it.
        """
        if self._quick is None:
            raise RuntimeError("fetch_now is for SQLite only; use read() on a worker thread")
        sql: str = ""
        params: Mapping[str, Any] = {}
        try:
            # The pool's checkout raises the driver's own errors (opening the connection
            # sets WAL mode, which needs the file), as the cursor does.
            pooled = self._quick.raw_connection()
            try:
                cursor = pooled.cursor()
                out: list[list[tuple[Any, ...]]] = []
                for sql, params in statements:
                    out.append(cursor.execute(sql, params).fetchall())
                cursor.close()
                return out
            finally:
                pooled.close()
        except sqlite3.Error as error:
            if "database is locked" in str(error).lower():
                raise LockedNow(str(error)) from error
            wrapped = sa_exc.DBAPIError.instance(sql, dict(params), error, sqlite3.Error)
            raise wrapped from error

    @contextmanager
    def write_now(self) -> Iterator[Connection]:
        """SQLite only: a small write transaction on the calling thread (the loop's), on
        `read_now`'s connection, that never waits: `LockedNow` at once when another writer
        holds or waits for the writers' lock, or SQLite's write lock is taken.

        For a write small enough to cost less than the hop to a worker thread (decision
        0196: a typical purge); a write whose size is unknown belongs on a thread
        (`write`), since the loop serves every other request meanwhile. `BEGIN IMMEDIATE`
        goes through the Connection (engine events see it, as on a thread); the commit is
        the driver's, and that connection never checkpoints (`wal_autocheckpoint` off: the
        commits of `write` and the scrub do), so neither waits. Committed on normal exit,
        rolled back on an exception; the caller tells `index_changed` what it changed.
        """
        if self._quick is None:
            raise RuntimeError("write_now is for SQLite only; use write() on a worker thread")
        with self._write_turns.hold_if_free() as free:
            if not free:
                raise LockedNow("another writer holds or waits for the writers' lock")
            try:
                with self._quick.connect() as conn:
                    conn.execution_options(**{_WRITE: False, _STATEMENTS: True})
                    with conn.begin():
                        conn.exec_driver_sql("BEGIN IMMEDIATE")
                        yield conn
                        driver = conn.connection.driver_connection
                        assert driver is not None
                        try:
                            driver.commit()
                        except sqlite3.Error as error:  # as the engine raises it (an outage: 503)
                            raise sa_exc.DBAPIError.instance(
                                "COMMIT", {}, error, sqlite3.Error
                            ) from error
            except sa_exc.OperationalError as exc:
                if "database is locked" in str(exc.orig).lower():
                    raise LockedNow(str(exc.orig)) from exc
                raise

    def index_changed(self, tenant: str, principal: str) -> None:
        """A committed change of the principal's index, for `index_listener`."""
        listener = self.index_listener
        if listener is not None:
            listener(tenant, principal)

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A write transaction, committed on normal exit, rolled back on an exception."""
        with self._scope(write=True) as session:
            yield session

    @contextmanager
    def _scope(self, *, write: bool) -> Iterator[Session]:
        if write and self.is_sqlite:
            # Writers in arrival order (db/fairlock.py).
            with self._write_turns.hold(), self._transaction(write=True) as session:
                yield session
            return
        with self._transaction(write=write) as session:
            yield session

    @contextmanager
    def _transaction(self, *, write: bool) -> Iterator[Session]:
        with self.engine.connect() as conn:
            conn.execution_options(**{_WRITE: write})
            with conn.begin():
                session = Session(bind=conn, expire_on_commit=False, autoflush=True)
                session.info["bus_origin"] = self.instance_id
                info = session.info
                try:
                    yield session
                    session.flush()
                finally:
                    session.close()
            # Committed (an exception skips this): only now may watchers re-read.
            for tenant, principal in info.get(CHANGED_INDEXES, ()):
                self.index_changed(tenant, principal)

    def meta_value(self, key: str, default: str) -> str:
        """A per-database constant, created with `default` the first time it is asked for."""
        with self.write() as s:
            row = s.get(ServerMeta, key)
            if row is None:
                row = ServerMeta(key=key, value=default)
                s.add(row)
            return row.value

    def cursor_key(self) -> bytes:
        """The HMAC key of pagination cursors, stable for the life of the database."""
        return bytes.fromhex(self.meta_value("cursor_key", secrets.token_hex(32)))

    def epoch(self) -> str:
        """A random constant of this database, mixed into ETags."""
        return self.meta_value("epoch", secrets.token_hex(8))

    def dispose(self) -> None:
        """Close every pooled connection, and any given back later (a worker thread that
        finishes its statement after shutdown), rather than leave those to the collector."""
        self._disposed = True
        self.engine.dispose()
        if self._quick is not None:
            self._quick.dispose()

    def _on_checkin(self, dbapi_connection: Any, _record: Any) -> None:
        if self._disposed and dbapi_connection is not None:
            dbapi_connection.close()

    def scalar_meta(self, key: str) -> str | None:
        """Read a meta value without creating it."""
        with self.read() as s:
            return s.scalar(select(ServerMeta.value).where(ServerMeta.key == key))


def _ensure_sqlite_folder(url: str) -> None:
    """Create the folder of a SQLite file (the default one lives in a user data directory
    that may not exist yet) and the file itself 0600, so that its WAL is 0600 too."""
    database = make_url(url).database
    if database and database != ":memory:" and not database.startswith("file:"):
        private_sqlite_file(Path(database).expanduser())


def _make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": 30},
            pool_size=POOL_SIZE,
            max_overflow=POOL_OVERFLOW,
        )
        _install_sqlite_listeners(engine)
        return engine
    engine = create_engine(url, pool_size=POOL_SIZE, max_overflow=POOL_OVERFLOW, pool_pre_ping=True)
    _install_postgres_listeners(engine)
    return engine


def _make_quick_engine(url: str) -> Engine:
    """The engine of `Database.read_now` and `write_now`: one connection (StaticPool), busy
    timeout 0, no checkpoint at its commits."""
    engine = create_engine(url, connect_args={"check_same_thread": False}, poolclass=StaticPool)
    _install_sqlite_listeners(engine, busy_timeout_ms=0)

    @event.listens_for(engine, "connect")
    def _no_checkpoints(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.execute("PRAGMA wal_autocheckpoint=0")

    return engine


def _install_postgres_listeners(engine: Engine) -> None:
    """PostgreSQL text cannot hold U+0000, which SQLite and JSON accept: a request naming an
    id or carrying a text with a NUL made psycopg raise (a 500). Every string parameter is
    sent with U+0000 replaced by U+FFFD, which no generated id contains: such an id is simply
    not found (the plain 404, as on SQLite), and free text is stored with the replacement."""
    from psycopg.abc import Buffer
    from psycopg.types.string import StrDumperUnknown

    class NulSafeStrDumper(StrDumperUnknown):
        def dump(self, obj: str) -> Buffer | None:
            return super().dump(obj.replace("\x00", "\ufffd"))

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.adapters.register_dumper(str, NulSafeStrDumper)


def _install_sqlite_listeners(
    engine: Engine, busy_timeout_ms: int = SQLITE_BUSY_TIMEOUT_MS
) -> None:
    """Every connection's pragmas (the module docstring) and our own BEGIN. The busy timeout
    comes first: setting WAL mode needs the file, and must wait (or not) as the rest does."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA foreign_keys=ON")
        # Deleted content is overwritten with zeros in the page, not merely unlinked from
        # the b-tree (the default differs between builds: set it on every connection).
        cur.execute("PRAGMA secure_delete=ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        options = conn.get_execution_options()
        if options.get(_STATEMENTS, False):
            return  # autocommit reads: the driver's own transaction handling is off
        write = options.get(_WRITE, True)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")
