"""The mirror's write path: one transaction's upserts, removals, settled marks and state.

`Mirror.apply` holds the write lock and the transaction; `write_changes` is what it
executes inside it. Rows are classified as inserted or updated against the mirror as it is
inside the transaction, so a concurrent change is reported truthfully; an unchanged row (or
an older view of it) is not rewritten. A write that changes rows takes the mirror's next
change sequence and stamps it on each row it wrote and each removal it remembered
(decision 0209): readers ask the mirror what changed since the number they show
(`sync.mirror_reader.query_changes`). A removal takes the row's artifact index entries and
unconfirmed-delete mark with it and is remembered for a while, so a download finishing late
cannot index a file for it (`sync.file_index`); forgetting it raises the removals' floor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, delete, func, select, update
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from sync.delete_marks import clear_marks
from sync.file_index import forget_files_of
from sync.mirror_rows import chunks, rows_by_id
from sync.mirror_schema import REMOVED_MEMORY_SECONDS, RemovedSession, SessionRecord
from sync.mirror_state import change_seq, next_change_seq, raise_removed_floor, set_states
from sync.models import SessionView
from sync.transcripts import forget as forget_transcripts

#: Rows per executemany call of `Mirror.apply` (all calls of one apply share a transaction).
UPSERT_CHUNK = 2000

_UPSERT_COLUMNS = ("title", "created_at", "updated_at", "active_run_id", "last_run_id")


@dataclass(frozen=True, slots=True)
class ApplyResult:
    inserted: list[str]
    updated: list[str]
    removed: list[str]
    removed_files: list[str]
    #: The change sequence this write stamped on its rows and removals (0: it changed no
    #: row). The engine announces it: "the mirror changed up to `seq`".
    seq: int = 0


def write_changes(
    conn: Connection,
    upserts: Sequence[SessionView],
    removals: Sequence[str],
    *,
    now: float,
    state: dict[str, str | None] | None = None,
    skip: Callable[[str], bool] | None = None,
    settle: Sequence[str] = (),
    seen_at: float | None = None,
) -> ApplyResult:
    """Inside the caller's write transaction; see `Mirror.apply` for the arguments
    (`seen_at`: raise the `synced_at` of every upserted row to at least it)."""
    wanted = [v for v in upserts if skip is None or not skip(v.id)]
    current = rows_by_id(conn, [v.id for v in wanted]) if wanted else {}
    inserted: list[str] = []
    updated: list[str] = []
    params: list[dict[str, Any]] = []
    for view in wanted:
        before = current.get(view.id)
        row = view
        if before is None:
            inserted.append(view.id)
        elif before.updated_at > view.updated_at:
            # updated_at never goes back on the server (CONTRACT §2): this view is
            # older than what a concurrent refresh already wrote. Keep the newer one.
            continue
        elif before != row:
            updated.append(view.id)
        else:
            continue
        params.append(
            {
                "id": view.id,
                "title": view.title,
                "created_at": view.created_at,
                "updated_at": view.updated_at,
                "active_run_id": view.active_run_id,
                "last_run_id": view.last_run_id,
                "synced_at": now,
            }
        )
    removing = list(dict.fromkeys(removals))
    present = _present(conn, removing)
    changed = bool(params or present)
    # Removals of absent rows change nothing: remembered under the current number.
    seq = next_change_seq(conn) if changed else change_seq(conn) if removing else 0
    if params:
        for param in params:
            param["change_seq"] = seq
        stmt = sqlite_insert(SessionRecord)
        stmt = stmt.on_conflict_do_update(
            index_elements=["id"],
            set_={c: stmt.excluded[c] for c in (*_UPSERT_COLUMNS, "synced_at", "change_seq")},
        )
        # PITFALLS §8: rows go as executemany parameters, never into .values(...).
        # In chunks, inside this one transaction: between two calls this worker
        # thread gives the GIL back, so the UI thread is not starved by one long call.
        for start in range(0, len(params), UPSERT_CHUNK):
            conn.execute(stmt, params[start : start + UPSERT_CHUNK])
    if seen_at is not None and wanted:
        # The index walk's seen mark (`sync.index_walk`): every walked row, changed or not.
        for chunk in chunks([v.id for v in wanted], 500):
            conn.execute(
                update(SessionRecord)
                .where(SessionRecord.id.in_(chunk), SessionRecord.synced_at < seen_at)
                .values(synced_at=seen_at)
            )
    files: list[str] = []
    if removing:
        for chunk in chunks(removing, 500):
            files.extend(forget_files_of(conn, chunk))
            forget_transcripts(conn, chunk)  # events and search entries, same transaction
            conn.execute(delete(SessionRecord).where(SessionRecord.id.in_(chunk)))
            clear_marks(conn, chunk)
        remember = sqlite_insert(RemovedSession)
        remember = remember.on_conflict_do_update(
            index_elements=["session_id"],
            set_={c: remember.excluded[c] for c in ("removed_at", "change_seq")},
        )
        conn.execute(
            remember,
            [{"session_id": sid, "removed_at": now, "change_seq": seq} for sid in removing],
        )
        _forget_old_removals(conn, now - REMOVED_MEMORY_SECONDS)
    for chunk in chunks(list(dict.fromkeys(settle)), 500):
        clear_marks(conn, chunk)
    if state:
        set_states(conn, state)
    return ApplyResult(inserted, updated, present, files, seq if changed else 0)


def _present(conn: Connection, ids: list[str]) -> list[str]:
    """Which of `ids` the mirror holds, in their order."""
    found: set[str] = set()
    for chunk in chunks(ids, 500):
        found.update(
            conn.execute(select(SessionRecord.id).where(SessionRecord.id.in_(chunk))).scalars()
        )
    return [sid for sid in ids if sid in found]


def _forget_old_removals(conn: Connection, before: float) -> None:
    """Forget removals older than `before`, raising the floor to the newest one's number."""
    old = RemovedSession.removed_at < before
    forgotten = conn.execute(select(func.max(RemovedSession.change_seq)).where(old)).scalar()
    if forgotten is not None:
        raise_removed_floor(conn, int(forgotten))
        conn.execute(delete(RemovedSession).where(old))
