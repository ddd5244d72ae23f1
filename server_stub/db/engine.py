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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, make_url, select
from sqlalchemy.orm import Session

from server_stub.db.models import Base, ServerMeta

_WRITE = "converge_write"


class Database:
    """One engine plus `read()` / `write()` transaction scopes; the caller owns the commit."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        if self.is_sqlite:
            _ensure_sqlite_folder(url)
        self.engine = _make_engine(url)

    def create_schema(self) -> None:
        """Create every table and index that is missing."""
        Base.metadata.create_all(self.engine)

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A read-only transaction (a deferred `BEGIN` on SQLite)."""
        with self._scope(write=False) as session:
            yield session

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A write transaction, committed on normal exit, rolled back on an exception."""
        with self._scope(write=True) as session:
            yield session

    @contextmanager
    def _scope(self, *, write: bool) -> Iterator[Session]:
        with self.engine.connect() as conn:
            conn.execution_options(**{_WRITE: write})
            with conn.begin():
                session = Session(bind=conn, expire_on_commit=False, autoflush=True)
                try:
                    yield session
                    session.flush()
                finally:
                    session.close()

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
        """Close every pooled connection."""
        self.engine.dispose()

    def lock_clause_supported(self) -> bool:
        """Whether `SELECT … FOR UPDATE` means something on this backend."""
        return not self.is_sqlite

    def scalar_meta(self, key: str) -> str | None:
        """Read a meta value without creating it."""
        with self.read() as s:
            return s.scalar(select(ServerMeta.value).where(ServerMeta.key == key))


def _ensure_sqlite_folder(url: str) -> None:
    """Create the folder of a SQLite file (the default one lives in a user data directory
    that may not exist yet)."""
    database = make_url(url).database
    if database and database != ":memory:" and not database.startswith("file:"):
        Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)


def _make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": 30},
            pool_size=10,
            max_overflow=30,
        )
        _install_sqlite_listeners(engine)
        return engine
    engine = create_engine(url, pool_size=10, max_overflow=30, pool_pre_ping=True)
    _install_postgres_listeners(engine)
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


def _install_sqlite_listeners(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA busy_timeout=30000")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        write = conn.get_execution_options().get(_WRITE, True)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")
