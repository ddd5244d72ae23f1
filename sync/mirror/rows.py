"""Reading session rows out of the mirror by id: the planner's snapshot, one row.

One sidebar row is the very value the server's index sends (`SessionView`; the name
`SessionView` says where a row comes from). Reads are plain SQL: a pass runs them on every
wake, and building the same statement with SQLAlchemy cost several times running it
(`python -m bench device_cost`). The sidebar's rows in order are read by
`sync.mirror.reader.query_rows` (the one row reader, shared with the first paint). The
functions take the caller's connection and never commit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sync.mirror.reader import ROW_SELECT
from sync.wire.models import SessionView

#: One sidebar row, as the mirror holds it: the very value the server's index sends (one
#: session type on the client; the name says where a row comes from).

#: Ids per `IN (...)` list (SQLite allows 32,766 parameters; this keeps a statement small).
IN_CHUNK = 500


def rows_by_id(conn: Any, ids: Sequence[str]) -> dict[str, SessionView]:
    out: dict[str, SessionView] = {}
    if len(ids) > 2000:  # cheaper to read everything than to chunk a huge IN list
        for r in conn.exec_driver_sql(ROW_SELECT):
            out[r[0]] = SessionView(*r)
        return out
    for chunk in chunks(ids, IN_CHUNK):
        marks = ",".join("?" * len(chunk))
        for r in conn.exec_driver_sql(f"{ROW_SELECT} WHERE id IN ({marks})", tuple(chunk)):
            out[r[0]] = SessionView(*r)
    return out


def present_ids(conn: Any, ids: Sequence[str]) -> set[str]:
    """Which of `ids` the mirror holds."""
    found: set[str] = set()
    for chunk in chunks(ids, IN_CHUNK):
        marks = ",".join("?" * len(chunk))
        found.update(
            r[0]
            for r in conn.exec_driver_sql(
                f"SELECT id FROM sessions WHERE id IN ({marks})", tuple(chunk)
            )
        )
    return found


def count_rows(conn: Any) -> int:
    return int(conn.exec_driver_sql("SELECT count(*) FROM sessions").scalar_one())


def unseen_since(conn: Any, generation: float) -> list[str]:
    """Ids of rows whose `synced_at` is below `generation`, in id order."""
    rows = conn.exec_driver_sql(
        "SELECT id FROM sessions WHERE synced_at < ? ORDER BY id", (generation,)
    )
    return [r[0] for r in rows]


def seen_before(conn: Any, generation: float, epoch: float) -> list[str]:
    """Ids of rows whose `synced_at` is in [`generation`, `epoch`), in id order: a walk's
    rows seen only under an older version of the index (`sync.reconcile.walk`)."""
    if epoch <= generation:
        return []
    rows = conn.exec_driver_sql(
        "SELECT id FROM sessions WHERE synced_at >= ? AND synced_at < ? ORDER BY id",
        (generation, epoch),
    )
    return [r[0] for r in rows]


def chunks(items: Sequence[str], size: int) -> Iterable[list[str]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])
