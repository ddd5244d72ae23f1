"""The mirror's write path: one transaction's upserts, removals, settled marks and state.

`Mirror.apply` holds the write lock and the transaction; `write_changes` is what it
executes inside it. Rows are classified as inserted or updated against the mirror as it is
inside the transaction, so a concurrent change is reported truthfully; an unchanged row (or
an older view of it) is not rewritten. A write that changes rows takes the mirror's next
change sequence and stamps it on each row it wrote and each removal it remembered
(decision 0209): readers ask the mirror what changed since the number they show
(`sync.mirror.reader.query_changes`). A removal takes the row's artifact index entries and
unconfirmed-delete mark with it and is remembered for a while, so a download finishing late
cannot index a file for it (`sync.mirror.file_index`); forgetting it raises the removals' floor.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sync.mirror import title_index
from sync.mirror.delete_marks import clear_marks, unconfirmed_ids
from sync.mirror.file_index import forget_files_of
from sync.mirror.reader import IN_CHUNK, chunks, rows_by_id, seen_before, unseen_since
from sync.mirror.schema import REMOVED_MEMORY_SECONDS
from sync.mirror.sqlite_driver import Connection
from sync.mirror.state import (
    ETAG_KEY,
    WALK_KEYS,
    change_seq,
    next_change_seq,
    raise_removed_floor,
    set_states,
)
from sync.mirror.transcripts import forget as forget_transcripts
from sync.wire.models import SessionView

#: Rows per executemany call of `Mirror.apply` (all calls of one apply share a transaction).
UPSERT_CHUNK = 2000

#: The columns a row is written to: its view's fields, in their order, then these two.
_UPSERT_COLUMNS = (*SessionView._fields, "synced_at", "change_seq")
#: The fields a view may leave None, by their place in it (`_upserts` reads them by name).
_NULLABLE = tuple(
    SessionView._fields.index(name) for name in ("title", "active_run_id", "last_run_id")
)

type _Nulls = tuple[bool, bool, bool]
type _Row = tuple[str | float | int, ...]


@functools.cache
def _upsert(nulls: _Nulls) -> tuple[str, Callable[[SessionView], tuple[str, ...]]]:
    """The upsert of a row whose `_NULLABLE` fields are None where `nulls` says, and what
    takes the other fields out of its view. A None is spelled NULL in the statement, never
    bound: the driver looks for an adapter for every parameter that is not a str, an int, a
    float or bytes, and that costs more than the rest of the row's binding (a first sync's
    rows have no run, two None a row)."""
    null = {i for i, is_null in zip(_NULLABLE, nulls, strict=True) if is_null}
    values = ["NULL" if i in null else "?" for i in range(len(SessionView._fields))]
    sql = (
        f"INSERT INTO sessions ({', '.join(_UPSERT_COLUMNS)}) VALUES ({', '.join(values)}, ?, ?)"
        " ON CONFLICT (id) DO UPDATE SET "
        + ", ".join(f"{column} = excluded.{column}" for column in _UPSERT_COLUMNS[1:])
    )
    kept = [i for i in range(len(SessionView._fields)) if i not in null]
    take = operator.itemgetter(*kept)  # at least id, created_at, updated_at: a tuple
    return sql, take


def _upserts(views: Sequence[SessionView], tail: tuple[float, int]) -> list[tuple[str, list[_Row]]]:
    """The statements writing `views` (`_upsert`), each with its rows' parameters, the
    fields of the view then `tail` (`synced_at`, `change_seq`); views alike share one."""
    alike: dict[_Nulls, list[SessionView]] = {}
    for view in views:
        nulls = (view.title is None, view.active_run_id is None, view.last_run_id is None)
        alike.setdefault(nulls, []).append(view)
    out: list[tuple[str, list[_Row]]] = []
    for nulls, group in alike.items():
        sql, take = _upsert(nulls)
        out.append((sql, [take(view) + tail for view in group]))
    return out


@dataclass(frozen=True, slots=True)
class ApplyResult:
    inserted: list[str]
    updated: list[str]
    removed: list[str]
    removed_files: list[str]
    #: The change sequence this write stamped on its rows and removals (0: it changed no
    #: row). The engine announces it: "the mirror changed up to `seq`".
    seq: int = 0
    #: The write was a walk's last page and concluded the walk (`WalkEnd`).
    concluded: bool = False
    #: A walk's last page that did not conclude it: what it leaves to settle, read in the
    #: same transaction (`Leftovers`); None otherwise.
    leftovers: Leftovers | None = None
    #: The write left its new rows' title entries pending (`sync.mirror.title_index.defer`).
    pended: bool = False


@dataclass(frozen=True, slots=True)
class Leftovers:
    """What a complete walk leaves to settle (`Mirror.walk_leftovers`): the rows whose
    delete was never answered, the rows it did not see, and the rows it saw only before
    the index changed under it."""

    marked: set[str]
    unseen: list[str]
    older: list[str]


@dataclass(frozen=True, slots=True)
class WalkEnd:
    """Passed with a walk's last page: when, after it, no row is left unseen (every row of
    the mirror was listed by this walk or written since it began), the walk concludes in
    the same transaction: nothing needs a point read, so its position is cleared, the
    first page's `etag` stored and every unconfirmed-delete mark settled (each marked row
    was just seen). A pass with nothing to point-read then writes the mirror once, the
    cost every watching device pays per change (`python -m bench device_cost`).

    Otherwise, given the walk's `generation`, the same transaction reads what the walk
    leaves to point-read (`ApplyResult.leftovers`): a delete leaves its row unseen on every
    watching device, and a second read would cost each of them another transaction (and a
    turn of its process's threads) before its point read can leave."""

    etag: str | None
    generation: float | None = None


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
    end: WalkEnd | None = None,
) -> ApplyResult:
    """Inside the caller's write transaction; see `Mirror.apply` for the arguments
    (`seen_at`: raise the `synced_at` of every upserted row to at least it; `end`: see
    `WalkEnd`)."""
    wanted = list(upserts) if skip is None else [v for v in upserts if not skip(v.id)]
    current = rows_by_id(conn, [v.id for v in wanted]) if wanted else {}
    if current:
        inserted, updated, written = _classify(wanted, current)
    else:  # none of them is here yet (a first sync's page): all of them are written
        inserted, updated, written = [v.id for v in wanted], [], wanted
    removing = list(dict.fromkeys(removals))
    held = rows_by_id(conn, removing) if removing else {}
    present = [sid for sid in removing if sid in held]
    changed = bool(written or present)
    # Removals of absent rows change nothing: remembered under the current number.
    seq = next_change_seq(conn) if changed else change_seq(conn) if removing else 0
    # A written row is seen by the walk too: its `synced_at` is raised to the walk's mark as
    # it is written, so the seen mark below has only the rows left as they were to touch.
    stamp = now if seen_at is None else max(now, seen_at)
    tail = (stamp, seq)
    # PITFALLS §8: rows go as executemany parameters. In chunks, inside this one
    # transaction: between two calls this worker thread gives the GIL back, so the UI
    # thread is not starved by one long call.
    for sql, rows in _upserts(written, tail):
        for start in range(0, len(rows), UPSERT_CHUNK):
            conn.executemany(sql, rows[start : start + UPSERT_CHUNK])
    # The title index follows every new row and every changed title (decision 0124); many
    # new rows' entries are written after the pass (decision 0238).
    retitled = (
        {v.id for v in written if v.id in current and current[v.id].title != v.title}
        if current
        else set()
    )
    title_index.remove(conn, [(sid, current[sid].title) for sid in retitled])
    pended = len(inserted) > title_index.INLINE_TITLES
    if pended:
        title_index.defer(conn, seq)
    if retitled or not pended:
        title_index.add(
            conn,
            (
                (v.id, v.title)
                for v in written
                if v.id in retitled or (v.id not in current and not pended)
            ),
        )
    if seen_at is not None and len(written) < len(wanted):
        # The index walk's seen mark (`sync.reconcile.walk`): every walked row, changed or not
        # (the written ones already carry it).
        fresh = {v.id for v in written}
        for chunk in chunks([v.id for v in wanted if v.id not in fresh], IN_CHUNK):
            marks = ",".join("?" * len(chunk))
            conn.execute(
                f"UPDATE sessions SET synced_at = ? WHERE id IN ({marks}) AND synced_at < ?",
                (seen_at, *chunk, seen_at),
            )
    files: list[str] = []
    if removing:
        for chunk in chunks(removing, IN_CHUNK):
            files.extend(forget_files_of(conn, chunk))
            forget_transcripts(conn, chunk)  # events and search entries, same transaction
            title_index.remove(conn, [(sid, held[sid].title) for sid in chunk if sid in held])
            marks = ",".join("?" * len(chunk))
            conn.execute(f"DELETE FROM sessions WHERE id IN ({marks})", tuple(chunk))
            clear_marks(conn, chunk)
        conn.executemany(
            "INSERT INTO removed_sessions (session_id, removed_at, change_seq) VALUES (?, ?, ?)"
            " ON CONFLICT (session_id) DO UPDATE SET removed_at = excluded.removed_at,"
            " change_seq = excluded.change_seq",
            [(sid, now, seq) for sid in removing],
        )
        _forget_old_removals(conn, now - REMOVED_MEMORY_SECONDS)
    for chunk in chunks(list(dict.fromkeys(settle)), IN_CHUNK):
        clear_marks(conn, chunk)
    concluded = end is not None and seen_at is not None and not _any_unseen(conn, seen_at)
    if concluded:  # the walk's position and the ETag are written below: not here
        state = {
            key: value
            for key, value in (state or {}).items()
            if key not in WALK_KEYS and key != ETAG_KEY
        }
    if state:
        set_states(conn, state)
    left: Leftovers | None = None
    if concluded:
        assert end is not None
        conn.execute("DELETE FROM unconfirmed_deletes")
        set_states(conn, {**dict.fromkeys(WALK_KEYS), ETAG_KEY: end.etag})
    elif end is not None and end.generation is not None and seen_at is not None:
        left = leftovers(conn, end.generation, seen_at)
    return ApplyResult(
        inserted, updated, present, files, seq if changed else 0, concluded, left, pended
    )


def _classify(
    wanted: Sequence[SessionView], current: dict[str, SessionView]
) -> tuple[list[str], list[str], list[SessionView]]:
    """(inserted ids, updated ids, views to write) of `wanted` against the rows `current`
    holds; a view equal to its row, or older than it, is not written."""
    inserted: list[str] = []
    updated: list[str] = []
    written: list[SessionView] = []
    for view in wanted:
        before = current.get(view.id)
        if before is None:
            inserted.append(view.id)
        elif before.updated_at > view.updated_at:
            # updated_at never goes back on the server (CONTRACT §2): this view is
            # older than what a concurrent refresh already wrote. Keep the newer one.
            continue
        elif before != view:
            updated.append(view.id)
        else:
            continue
        written.append(view)
    return inserted, updated, written


def leftovers(conn: Connection, generation: float | None, epoch: float | None) -> Leftovers:
    """`Leftovers` after a walk of `generation` (None: after a 304, only the marks) that
    follows the index since `epoch`."""
    marked = unconfirmed_ids(conn)
    if generation is None:
        return Leftovers(marked, [], [])
    older = seen_before(conn, generation, epoch) if epoch is not None else []
    return Leftovers(marked, unseen_since(conn, generation), older)


def _any_unseen(conn: Connection, generation: float) -> bool:
    """Whether a row's `synced_at` is below `generation` (`sync.mirror.reader.unseen_since`)."""
    return (
        conn.execute("SELECT 1 FROM sessions WHERE synced_at < ? LIMIT 1", (generation,)).fetchone()
        is not None
    )


def _forget_old_removals(conn: Connection, before: float) -> None:
    """Forget removals older than `before`, raising the floor to the newest one's number."""
    (forgotten,) = conn.execute(
        "SELECT max(change_seq) FROM removed_sessions WHERE removed_at < ?", (before,)
    ).fetchone()
    if forgotten is not None:
        raise_removed_floor(conn, int(forgotten))
        conn.execute("DELETE FROM removed_sessions WHERE removed_at < ?", (before,))
