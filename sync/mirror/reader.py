"""The mirror's one row reader: `query_rows`, the sidebar's rows in its order and with its
filter, used by `Mirror.rows` (through SQLAlchemy's connection) and by the window's first
paint (through the standard library's, `read_mirror_rows`): one SQL text, one row type.
`query_changes` is the same reader asked "what changed since N" (decision 0209): every
write that changes rows numbers itself in the mirror and stamps that number on each row it
wrote and each removal it remembered, so a screen that shows the mirror at N pulls the
rows and removals numbered above N, in one read, whoever wrote them (this process or
another), and the order in which it heard of them does not matter.

`Mirror.open` needs SQLAlchemy (0.3–0.5 s to import) and may create or migrate the file; the
window should not wait for either to show the history it already has. This reader opens the
file read-only (`sync.mirror.sqlite_driver`, `mode=ro`: it never creates, migrates or writes it) and
returns `Mirror.rows`'s rows (`SessionView`: the wire's `SessionView`), in its order and with its
filter (`sync.mirror.title_filter`), optionally only the first ones. The window paints the first
few hundred at once, then reads the rest, and opens the `Mirror` (through the engine) only
after that.

It answers only for a file of the schema this program writes (`SCHEMA_VERSION`): a missing
file, an older or newer schema, a locked or unreadable file give None, and the caller takes
the normal path (which migrates, or says what is wrong). On a WAL file SQLite may leave empty
`-wal`/`-shm` files behind a read-only reader; the next `Mirror.open` uses them.

A read needs no free space: on a full disk `open_read_only` keeps the WAL index in memory
rather than in a `-shm` file it could not grow (`converge ls` still shows the history).
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sync.mirror import sqlite_driver
from sync.mirror.migrations import SCHEMA_VERSION
from sync.mirror.title_filter import fold, like_pattern, matches_filter
from sync.wire.models import SessionView

log = logging.getLogger(__name__)

#: Below this many free bytes on the mirror's file system, the disk is taken for full (a
#: mirror write needs a few pages, its WAL index 32 KiB).
DISK_FULL_BELOW = 1024 * 1024

#: Rows fetched from SQLite at a time (and, at start-up, between two hand-overs of the GIL).
READ_CHUNK = 2000

#: The columns of a row (`SessionView`, in its field order), for every reader of rows.
ROW_SELECT = "SELECT id, title, created_at, updated_at, active_run_id, last_run_id FROM sessions"
_FILTER = " WHERE fold(title) LIKE ? ESCAPE '\\' OR id LIKE ? ESCAPE '\\'"
# The order of `Mirror.rows`, served by the index `ix_sessions_order`; LIMIT -1 is no limit.
_ORDER = " ORDER BY updated_at DESC, id DESC LIMIT ?"


#: `sync_state` keys: the mirror's change sequence (the number of its last row-changing
#: write) and the removals' floor (removals numbered up to it were forgotten, after
#: `REMOVED_MEMORY_SECONDS`: a reader that shows less must read whole).
CHANGE_SEQ_KEY = "change_seq"
REMOVED_FLOOR_KEY = "removed_floor"
_STATE = "SELECT value FROM sync_state WHERE key = ?"


@dataclass(frozen=True, slots=True)
class MirrorChanges:
    """What a reader that shows the mirror at some change sequence applies to show it at
    `seq`: the changed `rows` that match its filter, and the ids to take away (`removed`:
    rows removed, and changed rows that no longer match the filter). `whole`: the reader's
    number was too old (or unknown, or from another file) or more changed than it asked
    to take as a delta, so `rows` are all the rows, in sidebar order, to diff against."""

    seq: int
    rows: list[SessionView]
    removed: list[str]
    whole: bool


def query_changes(
    execute: Callable[[str, tuple[Any, ...]], Any],
    since: int | None,
    filter_text: str = "",
    limit: int | None = None,
) -> MirrorChanges:
    """The changes since `since` (None: read whole), or the whole rows when `since` is
    below the removals' floor or above the mirror's seq, or when more than `limit` rows and
    removals changed. Run it inside one read transaction: the parts then agree."""
    seq = _state_int(execute, CHANGE_SEQ_KEY)
    floor = _state_int(execute, REMOVED_FLOOR_KEY)
    if since is not None and floor <= since <= seq and limit is not None:
        (count,) = execute(
            "SELECT (SELECT count(*) FROM sessions WHERE change_seq > ?)"
            " + (SELECT count(*) FROM removed_sessions WHERE change_seq > ?)",
            (since, since),
        ).fetchone()
        if count > limit:
            since = None
    if since is None or not floor <= since <= seq:
        return MirrorChanges(seq, query_rows(execute, filter_text), [], whole=True)
    changed = [
        SessionView(*row)
        for row in execute(ROW_SELECT + " WHERE change_seq > ? ORDER BY change_seq", (since,))
    ]
    here = {row.id for row in changed}  # a row written again since its removal is here
    removed = [
        sid
        for (sid,) in execute(
            "SELECT session_id FROM removed_sessions WHERE change_seq > ? ORDER BY change_seq",
            (since,),
        )
        if sid not in here
    ]
    rows = [row for row in changed if matches_filter(row.id, row.title, filter_text)]
    removed += [row.id for row in changed if not matches_filter(row.id, row.title, filter_text)]
    return MirrorChanges(seq, rows, removed, whole=False)


def _state_int(execute: Callable[[str, tuple[Any, ...]], Any], key: str) -> int:
    found = execute(_STATE, (key,)).fetchone()
    return int(found[0]) if found is not None and found[0] is not None else 0


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
        cursor = execute(ROW_SELECT + _ORDER, (most,))
    else:
        cursor = execute(ROW_SELECT + _FILTER + _ORDER, (fold(pattern), pattern, most))
    out: list[SessionView] = []
    while part := cursor.fetchmany(READ_CHUNK):
        out.extend(SessionView(*row) for row in part)
        if hand_over:
            time.sleep(0)
    return out


def disk_is_full(path: Path) -> bool:
    """Whether the file system holding `path` has less than `DISK_FULL_BELOW` free."""
    try:
        return shutil.disk_usage(path.parent).free < DISK_FULL_BELOW
    except OSError:
        return False


def open_read_only(
    path: Path, timeout: float, *, check_same_thread: bool = True
) -> sqlite_driver.Connection:
    """A connection that can only read the file at `path` (`mode=ro`: it never creates,
    migrates or writes it), waiting up to `timeout` seconds for a lock. No SQLAlchemy, so
    the first paint can use it before SQLAlchemy is imported. Raises `sqlite_driver.Error`.

    Even a reader of a WAL file maps the shared WAL index (`-shm`, 32 KiB), which a full
    disk cannot hold: its first read fails with a bare "disk I/O error". So on a full disk
    the file is read with a private index (`_open_with_private_index`) when there is no
    `-shm` yet, or when the shared one fails at the first read."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    if not disk_is_full(path):
        return sqlite_driver.connect(
            uri, uri=True, timeout=timeout, check_same_thread=check_same_thread
        )
    if path.with_name(path.name + "-shm").exists():
        conn = sqlite_driver.connect(
            uri, uri=True, timeout=timeout, check_same_thread=check_same_thread
        )
        try:
            conn.execute("PRAGMA user_version").fetchone()  # the first read maps the index
        except sqlite_driver.OperationalError:
            conn.close()
        else:
            return conn
    return _open_with_private_index(path, timeout, check_same_thread)


def _open_with_private_index(
    path: Path, timeout: float, check_same_thread: bool
) -> sqlite_driver.Connection:
    """A reader that keeps the WAL index in its own memory: SQLite does that only in
    exclusive locking mode, which takes a write lock on the file and so needs it opened
    read-write (`mode=rw`, never created); `query_only` refuses every write through it.
    Other processes wait for the file (their busy timeout) while it is open: the commands
    that read are short. Its only file is an empty `-wal`, which it removes at close."""
    conn = sqlite_driver.connect(
        f"{path.resolve().as_uri()}?mode=rw",
        uri=True,
        timeout=timeout,
        check_same_thread=check_same_thread,
    )
    try:
        conn.execute("PRAGMA query_only=ON")
        conn.execute("PRAGMA locking_mode=EXCLUSIVE")  # before the first read of the file
        conn.execute("PRAGMA user_version").fetchone()
    except BaseException:
        conn.close()
        raise
    return conn


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
