"""The mirror's write path: one transaction's upserts, removals, settled marks and state.

`Mirror.apply` holds the write lock and numbers the commit; `write_changes` is what it
executes inside that transaction. Rows are classified as inserted or updated against the
mirror as it is inside the transaction, so a concurrent change is reported truthfully; an
unchanged row (or an older view of it) is not rewritten. A removal takes the row's
artifact index entries and unconfirmed-delete mark with it and is remembered for a while,
so a download finishing late cannot index a file for it (`sync.file_index`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, delete, select, update
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from sync.delete_marks import clear_marks
from sync.file_index import forget_files_of
from sync.mirror_rows import SessionRow, chunks, rows_by_id
from sync.mirror_schema import REMOVED_MEMORY_SECONDS, RemovedSession, SessionRecord
from sync.mirror_state import set_states
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
    #: This write's place in the mirror object's commit order (1, 2, ...; writes that
    #: failed leave gaps). Taken under the write lock, so a later commit has a larger seq.
    seq: int = 0
    #: The values written (inserted and updated rows, in that order): a listener applies
    #: them as a delta instead of re-reading the mirror.
    rows: tuple[SessionRow, ...] = field(default=(), repr=False)
    #: The `seq` of the previous write that changed session rows (0: none yet). A listener
    #: that last saw a different seq missed a change and must re-read the mirror whole.
    after: int = 0


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
    (`seen_at`: raise the `synced_at` of every upserted row to at least it). The
    result's `seq` and `after` are left at 0: the mirror numbers its commits."""
    wanted = [v for v in upserts if skip is None or not skip(v.id)]
    current = rows_by_id(conn, [v.id for v in wanted]) if wanted else {}
    inserted: list[str] = []
    updated: list[str] = []
    written: list[SessionRow] = []
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
        written.append(view)
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
    if params:
        stmt = sqlite_insert(SessionRecord)
        stmt = stmt.on_conflict_do_update(
            index_elements=["id"],
            set_={c: stmt.excluded[c] for c in (*_UPSERT_COLUMNS, "synced_at")},
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
    removed: list[str] = []
    files: list[str] = []
    if removals:
        ids = list(dict.fromkeys(removals))
        for chunk in chunks(ids, 500):
            present = conn.execute(
                select(SessionRecord.id).where(SessionRecord.id.in_(chunk))
            ).scalars()
            removed.extend(present)
            files.extend(forget_files_of(conn, chunk))
            forget_transcripts(conn, chunk)  # events and search entries, same transaction
            conn.execute(delete(SessionRecord).where(SessionRecord.id.in_(chunk)))
            clear_marks(conn, chunk)
        remember = sqlite_insert(RemovedSession)
        remember = remember.on_conflict_do_update(
            index_elements=["session_id"], set_={"removed_at": remember.excluded.removed_at}
        )
        conn.execute(remember, [{"session_id": sid, "removed_at": now} for sid in ids])
        conn.execute(
            delete(RemovedSession).where(RemovedSession.removed_at < now - REMOVED_MEMORY_SECONDS)
        )
    for chunk in chunks(list(dict.fromkeys(settle)), 500):
        clear_marks(conn, chunk)
    if state:
        set_states(conn, state)
    return ApplyResult(inserted, updated, removed, files, rows=tuple(written))
