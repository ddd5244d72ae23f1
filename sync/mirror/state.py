"""The mirror's small key/value sync state, and which server and token it follows.

The index walk's position (`sync.reconcile.walk`, the `WALK_*` keys) lives here too. Two keys
matter most: the first index page's ETag (a pass sends it as `If-None-Match`) and the
connection identity (a hash of server URL and token). An ETag only means something to the
server and principal that issued it, so binding another identity forgets it. Binding
another identity forgets a walk in progress as well. The functions take the caller's
connection and never commit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sync.mirror.legacy import IDENTITY_KEY
from sync.mirror.reader import CHANGE_SEQ_KEY, REMOVED_FLOOR_KEY

ETAG_KEY = "sessions_first_page_etag"
#: The walk's position in `sync_state`. `WALK_CURSOR` absent: no walk in progress; empty:
#: the walk reached its last page and waits for its point reads.
WALK_CURSOR = "walk_cursor"
WALK_ETAG = "walk_etag"  # the first page's ETag the walk follows
WALK_MARK = "walk_top_updated_at"  # the newest updated_at when the walk (re)read the top
WALK_GENERATION = "walk_generation"  # the walk's start (time.time()): seen rows' synced_at
#: When the walk began following `WALK_ETAG` (its start, or a resume that found the index
#: changed): rows with `synced_at` from here on were seen at the version it now follows.
WALK_EPOCH = "walk_epoch"
WALK_SEEN = "walk_seen"  # items walked so far, all passes
WALK_BYTES = "walk_bytes"  # page bytes walked so far, all passes
#: Set when a walk was abandoned past its totals: the timer, the watch and the foreground
#: do not start another (an endless index would fill the disk a walk at a time); a sync the
#: user asks for, or the next start, does. A walk that concludes clears it.
WALK_REFUSED = "walk_refused"
WALK_ESTIMATE = "walk_estimate"  # mirror rows when the walk began: the "about N"
WALK_KEYS = (
    WALK_CURSOR,
    WALK_ETAG,
    WALK_MARK,
    WALK_GENERATION,
    WALK_EPOCH,
    WALK_SEEN,
    WALK_BYTES,
    WALK_ESTIMATE,
    WALK_REFUSED,
)


def get_state(conn: Any, key: str) -> str | None:
    row = conn.execute("SELECT value FROM sync_state WHERE key = ?", (key,)).fetchone()
    return row[0] if row is not None else None


def get_states(conn: Any, keys: Sequence[str]) -> dict[str, str | None]:
    """Several values in one statement (a pass reads the walk's six: one read, not six)."""
    marks = ",".join("?" * len(keys))
    rows = conn.execute(f"SELECT key, value FROM sync_state WHERE key IN ({marks})", tuple(keys))
    found = {key: value for key, value in rows}
    return {key: found.get(key) for key in keys}


def set_state(conn: Any, key: str, value: str | None) -> None:
    set_states(conn, {key: value})


def set_states(conn: Any, values: Mapping[str, str | None]) -> None:
    """Upsert several values in one statement (a walk's page saves up to ten), and clear
    the ones set to None in one more: a concluded walk clears its nine keys on every
    watching device per change, and keys already empty are not written again."""
    kept = [(key, value) for key, value in values.items() if value is not None]
    cleared = [key for key, value in values.items() if value is None]
    if kept:
        conn.executemany(
            "INSERT INTO sync_state (key, value) VALUES (?, ?)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            kept,
        )
    if cleared:
        marks = ",".join("?" * len(cleared))
        conn.execute(
            f"UPDATE sync_state SET value = NULL WHERE key IN ({marks}) AND value IS NOT NULL",
            cleared,
        )


def rebind_identity(conn: Any, identity: str) -> bool:
    """Inside a write transaction: record `identity` and forget the ETag when it differs
    from the recorded one; returns whether it did."""
    if get_state(conn, IDENTITY_KEY) == identity:
        return False
    set_state(conn, IDENTITY_KEY, identity)
    set_state(conn, ETAG_KEY, None)
    for key in WALK_KEYS:  # a walk of another server's index proves nothing here
        set_state(conn, key, None)
    return True


def next_change_seq(conn: Any) -> int:
    """Inside a write transaction: take the mirror's next change sequence (decision 0209).
    `BEGIN IMMEDIATE` serialises writers, in this process and others, so numbers follow
    commit order and none is taken twice."""
    return int(
        conn.execute(
            "INSERT INTO sync_state (key, value) VALUES (?, '1') ON CONFLICT (key) DO UPDATE"
            " SET value = CAST(coalesce(value, '0') AS INTEGER) + 1 RETURNING value",
            (CHANGE_SEQ_KEY,),
        ).fetchone()[0]
    )


def change_seq(conn: Any) -> int:
    """The mirror's current change sequence (0: nothing numbered yet)."""
    value = get_state(conn, CHANGE_SEQ_KEY)
    return int(value) if value else 0


def raise_removed_floor(conn: Any, forgotten: int) -> None:
    """Removals numbered up to `forgotten` are about to be forgotten: a reader that shows
    less than that must read whole (`sync.mirror.reader.query_changes`)."""
    if forgotten > int(get_state(conn, REMOVED_FLOOR_KEY) or 0):
        set_state(conn, REMOVED_FLOOR_KEY, str(forgotten))
