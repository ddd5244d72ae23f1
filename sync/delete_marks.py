"""Unconfirmed-delete marks: rows whose delete was sent but never answered.

Such a delete may or may not have happened on the server, so the row stays (ADR-0050: only
a server answer removes it) and carries a mark until a retry or a sync settles it: a 204 or
a 404 removes the row and its mark, a walk or a point read that shows the session clears
the mark. The functions take the caller's connection and never commit.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, delete, select
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from sync.mirror_schema import SessionRecord, UnconfirmedDelete


def unconfirmed_ids(conn: Connection) -> set[str]:
    return set(conn.execute(select(UnconfirmedDelete.session_id)).scalars())


def mark_unconfirmed(conn: Connection, session_id: str, now: float) -> None:
    """Mark the row, if it is still mirrored (a mark never outlives its row)."""
    stmt = sqlite_insert(UnconfirmedDelete).on_conflict_do_nothing(index_elements=["session_id"])
    present = conn.execute(select(SessionRecord.id).where(SessionRecord.id == session_id)).first()
    if present is not None:
        conn.execute(stmt, [{"session_id": session_id, "since": now}])


def clear_marks(conn: Connection, session_ids: Sequence[str]) -> None:
    """Settle these rows' marks (removed, or shown to exist by the server)."""
    conn.execute(delete(UnconfirmedDelete).where(UnconfirmedDelete.session_id.in_(session_ids)))
