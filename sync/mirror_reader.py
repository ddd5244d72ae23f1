"""The mirror's one row reader: `query_rows`, the sidebar's rows in its order and with its
filter, used by `Mirror.rows` (through SQLAlchemy's connection) and by the window's first
paint (through the standard library's, `read_mirror_rows`): one SQL text, one row type.

`Mirror.open` needs SQLAlchemy (0.3–0.5 s to import) and may create or migrate the file; the
window should not wait for either to show the history it already has. This reader opens the
file read-only (`sync.sqlite_driver`, `mode=ro`: it never creates, migrates or writes it) and
returns `Mirror.rows`'s rows (`SessionRow`: the wire's `SessionView`), in its order and with its
filter (`sync.title_filter`), optionally only the first ones. The window paints the first
few hundred at once, then reads the rest, and opens the `Mirror` (through the engine) only
after that.

It answers only for a file of the schema this program writes (`SCHEMA_VERSION`): a missing
file, an older or newer schema, a locked or unreadable file give None, and the caller takes
the normal path (which migrates, or says what is wrong). On a WAL file SQLite may leave empty
`-wal`/`-shm` files behind a read-only reader; the next `Mirror.open` uses them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sync import sqlite_driver
from sync.mirror_migrations import SCHEMA_VERSION
from sync.models import SessionView
from sync.title_filter import fold, like_pattern

log = logging.getLogger(__name__)

#: Rows fetched from SQLite at a time (and, at start-up, between two hand-overs of the GIL).
READ_CHUNK = 2000

_SELECT = "SELECT id, title, created_at, updated_at, active_run_id, last_run_id FROM sessions"
_FILTER = " WHERE fold(title) LIKE ? ESCAPE '\\' OR id LIKE ? ESCAPE '\\'"
# The order of `Mirror.rows`, served by the index `ix_sessions_order`; LIMIT -1 is no limit.
_ORDER = " ORDER BY updated_at DESC, id DESC LIMIT ?"


def _sql_fold(value: str | bytes | int | float | None) -> str | bytes | int | float | None:
    """`fold` as the SQL function `Mirror`'s connections register (NULL stays NULL)."""
    return str(fold(value)) if isinstance(value, str) else value


def query_rows(
    execute: Callable[[str, tuple[Any, ...]], Any],
    filter_text: str = "",
    limit: int | None = None,
    *,
    hand_over: bool = False,
) -> list[SessionView]:
    """The rows in sidebar order (updated_at DESC, id DESC), filtered by title or id when
    `filter_text` is given, the first `limit` when given. `execute(sql, params)` runs one
    statement and returns something with `fetchmany` (a DB-API connection's `execute`, or
    SQLAlchemy's `Connection.exec_driver_sql`); its connection must have the SQL function
    `fold` (`Mirror`'s connections register it). `hand_over`: give up the GIL between
    chunks (the first paint: the UI thread paints the first rows meanwhile)."""
    most = -1 if limit is None else limit
    pattern = like_pattern(filter_text)
    if pattern is None:
        cursor = execute(_SELECT + _ORDER, (most,))
    else:
        cursor = execute(_SELECT + _FILTER + _ORDER, (fold(pattern), pattern, most))
    out: list[SessionView] = []
    while part := cursor.fetchmany(READ_CHUNK):
        out.extend(SessionView(*row) for row in part)
        if hand_over:
            time.sleep(0)
    return out


def open_read_only(path: Path, timeout: float) -> sqlite_driver.Connection:
    """A connection that can only read the file at `path` (`mode=ro`: it never creates,
    migrates or writes it), waiting up to `timeout` seconds for a lock. No SQLAlchemy, so
    the first paint can use it before SQLAlchemy is imported. Raises `sqlite_driver.Error`."""
    return sqlite_driver.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=timeout)


def read_mirror_rows(
    path: Path, filter_text: str = "", limit: int | None = None
) -> list[SessionView] | None:
    """`Mirror.rows(filter_text)` (its first `limit` rows when given), or None when the file
    is missing, of another schema version, locked or unreadable: never raises for those.

    Synchronous: call it off the event loop (`asyncio.to_thread`).
    """
    if not path.is_file():
        return None
    try:
        # timeout=0: a locked file is skipped at once; the normal path waits for it.
        conn = open_read_only(path, timeout=0)
    except sqlite_driver.Error as exc:
        log.info("mirror %s not read read-only: %s", path, exc)
        return None
    try:
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if version != SCHEMA_VERSION:
            return None
        conn.create_function("fold", 1, _sql_fold, deterministic=True)
        # Hand-overs: start-up only; the measured first paint includes them.
        return query_rows(conn.execute, filter_text, limit, hand_over=True)
    except sqlite_driver.Error as exc:
        log.info("mirror %s not read read-only: %s", path, exc)
        return None
    finally:
        conn.close()
