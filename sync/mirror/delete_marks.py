"""Unconfirmed-delete marks: rows whose delete was sent but never answered.

Such a delete may or may not have happened on the server, so the row stays (ADR-0050: only
a server answer removes it) and carries a mark until a retry or a sync settles it: a 204 or
a 404 removes the row and its mark, a walk or a point read that shows the session clears
the mark. The functions take the caller's connection and never commit.
"""

from __future__ import annotations

from collections.abc import Sequence

from sync.mirror.sqlite_driver import Connection


def unconfirmed_ids(conn: Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT session_id FROM unconfirmed_deletes")}


def mark_unconfirmed(conn: Connection, session_id: str, now: float) -> None:
    """Mark the row, if it is still mirrored (a mark never outlives its row)."""
    conn.execute(
        "INSERT INTO unconfirmed_deletes (session_id, since) SELECT id, ? FROM sessions"
        " WHERE id = ? ON CONFLICT (session_id) DO NOTHING",
        (now, session_id),
    )


def clear_marks(conn: Connection, session_ids: Sequence[str]) -> None:
    """Settle these rows' marks (removed, or shown to exist by the server)."""
    if session_ids:
        marks = ",".join("?" * len(session_ids))
        conn.execute(
            f"DELETE FROM unconfirmed_deletes WHERE session_id IN ({marks})", tuple(session_ids)
        )
