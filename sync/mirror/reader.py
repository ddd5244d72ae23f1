"""Reading session rows out of the mirror: the sidebar's rows in order (`query_rows`), what
changed since N (`query_changes`), rows by id (the planner's snapshot, one row), and the
walk's leftovers. One SQL text, one row type, whose columns are `SessionView`'s fields in
their order. The functions take the caller's connection and never commit.

`query_rows` serves `Mirror.rows` and the window's first paint (`read_mirror_rows`).
`query_changes` is the same reader asked "what changed since N" (decision 0209): every
write that changes rows numbers itself in the mirror and stamps that number on each row it
wrote and each removal it remembered, so a screen that shows the mirror at N pulls the
rows and removals numbered above N, in one read, whoever wrote them (this process or
another), and the order in which it heard of them does not matter.

`Mirror.open` may create or migrate the file, and the engine behind it loads httpx; the
window should not wait for either to show the history it already has. This reader opens the
file read-only (`mode=ro`: it never creates, migrates or writes it) and returns
`Mirror.rows`'s rows, in its order and with its filter (`sync.mirror.title_filter`),
optionally only the first ones. The window paints the first
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
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from sync.mirror import sqlite_driver, title_index
from sync.mirror.schema import SCHEMA_VERSION, add_functions, open_read_only
from sync.mirror.search_text import is_text
from sync.mirror.sqlite_driver import Connection
from sync.mirror.title_filter import ASCII_LOWER, ID_MATCH_CHARS, fold, matches_filter
from sync.wire.models import SessionView

log = logging.getLogger(__name__)

#: Rows fetched from SQLite at a time (and, at start-up, between two hand-overs of the GIL).
READ_CHUNK = 2000

#: A row's columns are `SessionView`'s fields, in their order: `SessionView(*row)` is safe.
ROW_SELECT = f"SELECT {', '.join(SessionView._fields)} FROM sessions"
# Candidates from the title index (`sync.mirror.title_index`), confirmed by the filter itself.
# `instr`, not `LIKE`: a pattern's text ends at a NUL character, a needle's does not; the
# title folded as UTF-8 bytes for the same reason (`sync.mirror.schema.sql_fold`), unless it
# is in ASCII (without NUL: `length` counts up to one), which `lower()` folds alike in C.
_FILTER = (
    " WHERE id IN ({}) AND (instr(CASE WHEN length(CAST(title AS BLOB)) = length(title)"
    " THEN lower(title) ELSE fold(CAST(title AS BLOB)) END, ?) > 0 OR instr(lower(id), ?) > 0)"
)
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
    conn: Connection,
    since: int | None,
    filter_text: str = "",
    limit: int | None = None,
    *,
    hand_over: bool = False,
) -> MirrorChanges:
    """The changes since `since` (None: read whole), or the whole rows when `since` is
    below the removals' floor or above the mirror's seq, or when more than `limit` rows and
    removals changed. Run it inside one read transaction: the parts then agree.
    `hand_over`: as `query_rows`'s, for a whole read."""
    seq = _state_int(conn, CHANGE_SEQ_KEY)
    floor = _state_int(conn, REMOVED_FLOOR_KEY)
    if since is not None and floor <= since <= seq and limit is not None:
        (count,) = conn.execute(
            "SELECT (SELECT count(*) FROM sessions WHERE change_seq > ?)"
            " + (SELECT count(*) FROM removed_sessions WHERE change_seq > ?)",
            (since, since),
        ).fetchone()
        if count > limit:
            since = None
    if since is None or not floor <= since <= seq:
        rows = query_rows(conn, filter_text, hand_over=hand_over)
        return MirrorChanges(seq, rows, [], whole=True)
    changed = [
        SessionView(*row)
        for row in conn.execute(ROW_SELECT + " WHERE change_seq > ? ORDER BY change_seq", (since,))
    ]
    here = {row.id for row in changed}  # a row written again since its removal is here
    removed = [
        sid
        for (sid,) in conn.execute(
            "SELECT session_id FROM removed_sessions WHERE change_seq > ? ORDER BY change_seq",
            (since,),
        )
        if sid not in here
    ]
    rows = [row for row in changed if matches_filter(row.id, row.title, filter_text)]
    removed += [row.id for row in changed if not matches_filter(row.id, row.title, filter_text)]
    return MirrorChanges(seq, rows, removed, whole=False)


def _state_int(conn: Connection, key: str) -> int:
    found = conn.execute(_STATE, (key,)).fetchone()
    return int(found[0]) if found is not None and found[0] is not None else 0


def query_rows(
    conn: Connection,
    filter_text: str = "",
    limit: int | None = None,
    *,
    hand_over: bool = False,
) -> list[SessionView]:
    """The rows in sidebar order (updated_at DESC, id DESC), filtered by title or id when
    `filter_text` is given, the first `limit` when given. `conn.execute(sql, params)` runs one
    statement and returns something with `fetchmany` (a DB-API connection's `execute`); its
    connection must have the SQL function
    `fold` (`Mirror`'s connections register it). `hand_over`: give up the GIL between
    chunks (the first paint: the UI thread paints the first rows meanwhile)."""
    most = -1 if limit is None else limit
    needle = filter_text.strip()
    if not is_text(needle):  # in no title or id (`matches_filter` agrees)
        return []
    candidates = (
        title_index.filter_candidates(needle, title_index.pending_from(conn)) if needle else None
    )
    if candidates is None:
        cursor = conn.execute(ROW_SELECT + _ORDER, (most,))
    else:
        # SQLite's `lower()` lowers ASCII letters alone, as `ASCII_LOWER` does.
        by_id = needle.translate(ASCII_LOWER) if len(needle) >= ID_MATCH_CHARS else None
        sql, params = candidates
        cursor = conn.execute(
            ROW_SELECT + _FILTER.format(sql) + _ORDER,
            (*params, str(fold(needle)).encode("utf-8", "surrogatepass"), by_id, most),
        )
    out: list[SessionView] = []
    while part := cursor.fetchmany(READ_CHUNK):
        out.extend(SessionView(*row) for row in part)
        if hand_over:
            time.sleep(0)
    return out


def read_mirror_rows(
    path: Path, filter_text: str = "", limit: int | None = None
) -> list[SessionView] | None:
    """`Mirror.rows(filter_text)` (its first `limit` rows when given), or None when the file
    is missing, of another schema version, locked or unreadable: never raises for those.

    Synchronous: call it off the event loop (`asyncio.to_thread`).
    """
    # Hand-overs: start-up only; the first paint includes them (docs/performance.md).
    return _read_only(path, lambda conn: query_rows(conn, filter_text, limit, hand_over=True))


def read_mirror_changes(
    path: Path, since: int | None, filter_text: str = "", limit: int | None = None
) -> MirrorChanges | None:
    """`Mirror.changes_since(since, filter_text, limit)` through a read-only connection, or
    None where `read_mirror_rows` gives None. The window's rows before the engine opens:
    with the change sequence they are at, the engine then goes on from that number instead
    of reading every row again (`ui.sidebar.refresher.SidebarRefresher.set_source`).

    Synchronous: call it off the event loop (`asyncio.to_thread`).
    """

    def read(conn: Connection) -> MirrorChanges:
        conn.execute("BEGIN")  # one read transaction: the rows and their number agree
        try:
            return query_changes(conn, since, filter_text, limit, hand_over=True)
        finally:
            conn.rollback()

    return _read_only(path, read)


def _read_only[T](path: Path, read: Callable[[Connection], T]) -> T | None:
    """`read` on a read-only connection to a mirror of this program's schema, or None."""
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
        add_functions(conn)
        return read(conn)
    except (sqlite_driver.Error, UnicodeDecodeError) as exc:  # the latter: `sync.mirror.check`
        log.info("mirror %s not read read-only: %s", path, exc)
        return None
    finally:
        conn.close()


#: Ids per `IN (...)` list (SQLite allows 32,766 parameters; this keeps a statement small).
IN_CHUNK = 500


def rows_by_id(conn: Connection, ids: Sequence[str]) -> dict[str, SessionView]:
    out: dict[str, SessionView] = {}
    if len(ids) > 2000:  # cheaper to read everything than to chunk a huge IN list
        for r in conn.execute(ROW_SELECT):
            out[r[0]] = SessionView(*r)
        return out
    for chunk in chunks(ids, IN_CHUNK):
        marks = ",".join("?" * len(chunk))
        for r in conn.execute(f"{ROW_SELECT} WHERE id IN ({marks})", tuple(chunk)):
            out[r[0]] = SessionView(*r)
    return out


def count_rows(conn: Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM sessions").fetchone()[0])


@dataclass(frozen=True, slots=True)
class MirrorIds:
    """Every row's id with its `updated_at`, and those whose delete was never answered
    (`sync.mirror.delete_marks`): what a one-page walk compares its page with
    (`sync.reconcile.walk.DeferredPage`)."""

    updated: dict[str, str]
    marked: frozenset[str]


def mirror_ids(conn: Connection) -> MirrorIds:
    rows = conn.execute(
        "SELECT s.id, s.updated_at, u.session_id IS NOT NULL FROM sessions s"
        " LEFT JOIN unconfirmed_deletes u ON u.session_id = s.id"
    ).fetchall()
    return MirrorIds({r[0]: r[1] for r in rows}, frozenset(r[0] for r in rows if r[2]))


def unseen_since(conn: Connection, generation: float) -> list[str]:
    """Ids of rows whose `synced_at` is below `generation`, in id order."""
    rows = conn.execute("SELECT id FROM sessions WHERE synced_at < ? ORDER BY id", (generation,))
    return [r[0] for r in rows]


def seen_before(conn: Connection, generation: float, epoch: float) -> list[str]:
    """Ids of rows whose `synced_at` is in [`generation`, `epoch`), in id order: a walk's
    rows seen only under an older version of the index (`sync.reconcile.walk`)."""
    if epoch <= generation:
        return []
    rows = conn.execute(
        "SELECT id FROM sessions WHERE synced_at >= ? AND synced_at < ? ORDER BY id",
        (generation, epoch),
    )
    return [r[0] for r in rows]


def chunks(items: Sequence[str], size: int) -> Iterable[list[str]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])
