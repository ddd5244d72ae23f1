"""The SQLite mirror of a profile: session rows and the index of cached artifact bytes.

The mirror is never authoritative (ADR-0050 §8): it holds what the last reconcile saw, so the
window can draw at once and `converge ls` can answer offline.

The file format (tables, migrations, connection settings) is `sync.mirror_schema`. A mirror
whose version is newer than `SCHEMA_VERSION` was written by a newer program: it is refused
with `MirrorTooNew` before anything writes to it (the check opens the file read-only, before
the WAL pragma would touch it).

Threads: every method is synchronous and meant to run off the event loop
(`asyncio.to_thread`). Each call opens its own `Session`/connection from a pool; nothing is
shared across threads. Writes are serialised inside the process by a lock and across
processes by `BEGIN IMMEDIATE` plus `busy_timeout`. Each `apply` takes the next number of an
in-process commit sequence while it holds the write lock, so `ApplyResult.seq` orders this
process's writes as they committed (`sync.index_writer` relies on it).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, delete, func, or_, select
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from sync.errors import MirrorError, MirrorTooNew
from sync.mirror_schema import (
    REMOVED_MEMORY_SECONDS,
    SCHEMA_VERSION,
    CachedArtifact,
    RemovedSession,
    SessionRecord,
    SyncState,
    UnconfirmedDelete,
    busy_timeout_ms,
    fold,
    is_locked,
    locked_error,
    make_engine,
    migrate,
    read_schema_version,
)
from sync.models import SessionView

log = logging.getLogger(__name__)

#: A checkpoint blocked by a reader is tried this many times, this many seconds apart.
CHECKPOINT_TRIES = 10
CHECKPOINT_PAUSE = 0.02
#: Rows per executemany call of `Mirror.apply` (all calls of one apply share a transaction).
UPSERT_CHUNK = 2000
#: Rows `Mirror.rows` builds between two GIL hand-overs (it runs in a worker thread).
READ_CHUNK = 2000


ETAG_KEY = "sessions_first_page_etag"
IDENTITY_KEY = "connection_identity"


#: One sidebar row, as the mirror holds it: the very value the server's index sends (one
#: session type on the client; the name says where a row comes from).
SessionRow = SessionView


@dataclass(frozen=True, slots=True)
class CachedFile:
    artifact_id: str
    session_id: str
    name: str
    media_type: str
    size: int
    sha256: str
    file_name: str


_ROW_COLUMNS = (
    SessionRecord.id,
    SessionRecord.title,
    SessionRecord.created_at,
    SessionRecord.updated_at,
    SessionRecord.active_run_id,
    SessionRecord.last_run_id,
)
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


class Mirror:
    """Synchronous access to one profile's mirror file; call it off the event loop."""

    def __init__(self, path: Path, write_engine: Engine, read_engine: Engine) -> None:
        self.path = path
        self._write = write_engine
        self._read = read_engine
        self._write_lock = threading.Lock()
        self._commit_seq = 0  # guarded by _write_lock
        self._change_seq = 0  # the seq of the last committed write that changed rows
        self._scrub_pending = False  # a removal whose WAL frames may still hold content

    @classmethod
    def open(cls, path: Path, *, create: bool = True) -> Mirror:
        """Open (creating and migrating when needed) the mirror at `path`.

        Raises MirrorTooNew, leaving the file untouched, when it comes from a newer schema.
        """
        found = read_schema_version(path)
        if found > SCHEMA_VERSION:
            raise MirrorTooNew(
                f"The mirror {path} was written by a newer version of Converge "
                f"(schema {found}; this version knows up to {SCHEMA_VERSION}). "
                "It was left untouched: update Converge or use another profile.",
                found=found,
                supported=SCHEMA_VERSION,
            )
        if not path.exists():
            if not create:
                raise MirrorError(f"There is no mirror at {path} yet.")
            path.parent.mkdir(parents=True, exist_ok=True)
        write_engine = make_engine(path, immediate=True)
        read_engine = make_engine(path, immediate=False)
        mirror = cls(path, write_engine, read_engine)
        try:
            if found < SCHEMA_VERSION:  # a current mirror opens without a write (`ls` reads
                mirror._migrate()  # while another process holds the write lock)
        except SQLAlchemyError as exc:
            mirror.close()
            if is_locked(exc):
                raise locked_error(path) from exc
            raise MirrorError(
                f"Cannot open or upgrade the mirror {path}: {getattr(exc, 'orig', None) or exc}. "
                "It was left at its previous version."
            ) from exc
        except BaseException:
            mirror.close()
            raise
        return mirror

    def close(self) -> None:
        if self._scrub_pending:
            with contextlib.suppress(MirrorError):
                self.scrub()
        self._write.dispose()
        self._read.dispose()

    def scrub(self) -> bool:
        """Empty the WAL into the main file, so removed rows leave every file (§9.2).

        `secure_delete` zeroes a removed row in its page, but the WAL still holds the page
        images from before, and the main file gets the zeroed page only at a checkpoint.
        `wal_checkpoint(TRUNCATE)` copies every frame back and truncates the WAL to zero
        bytes; it cannot finish while a reader still uses older frames (PITFALLS §10), so
        its result is checked and an unfinished scrub is retried after the next write and
        at close. Returns whether it finished.
        """
        with self._write_lock:
            done = self._checkpoint()
            self._scrub_pending = not done
            return done

    def _checkpoint(self) -> bool:
        """A few quick tries, never a long wait: the write lock is held meanwhile, and a
        TRUNCATE checkpoint waiting in SQLite's busy handler also blocks other processes'
        writers. Readers of the mirror are short (a sidebar read), so a few 20 ms pauses
        usually see them go; otherwise the next write or `close` tries again."""
        try:
            with self._write.connect() as conn:
                raw = conn.connection.dbapi_connection
                assert raw is not None
                raw.execute("PRAGMA busy_timeout=0")
                try:
                    for _attempt in range(CHECKPOINT_TRIES):
                        busy, frames, copied = (
                            int(v)
                            for v in raw.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                        )
                        if not busy and frames == copied:
                            return True
                        time.sleep(CHECKPOINT_PAUSE)
                finally:
                    raw.execute(f"PRAGMA busy_timeout={busy_timeout_ms()}")
        except (sqlite3.Error, SQLAlchemyError) as exc:
            log.warning("mirror checkpoint failed: %s", exc)
            return False
        log.info("mirror checkpoint incomplete (a reader holds older frames); will retry")
        return False

    @contextlib.contextmanager
    def _writing(self) -> Iterator[Connection]:
        """One write transaction; a database failure (another process holding the lock past
        `busy_timeout`, a full disk) is a MirrorError with words, and nothing is written."""
        try:
            with self._write_lock, self._write.begin() as conn:
                yield conn
        except SQLAlchemyError as exc:
            if is_locked(exc):
                raise locked_error(self.path) from exc
            reason = getattr(exc, "orig", None) or exc
            raise MirrorError(f"Cannot write the mirror {self.path}: {reason}.") from exc

    # -- schema -----------------------------------------------------------------------------

    def _migrate(self) -> None:
        with self._write_lock, self._write.begin() as conn:
            migrate(conn, self.path)

    def schema_version(self) -> int:
        with self._read.connect() as conn:
            return int(conn.exec_driver_sql("PRAGMA user_version").scalar_one())

    # -- reads ------------------------------------------------------------------------------

    def rows(self, filter_text: str = "") -> list[SessionRow]:
        """Rows in sidebar order (updated_at DESC, id DESC), optionally filtered by title/id.

        Selects plain columns rather than ORM entities: five times faster on 100,000 rows.
        """
        stmt = select(*_ROW_COLUMNS).order_by(
            SessionRecord.updated_at.desc(), SessionRecord.id.desc()
        )
        needle = filter_text.strip()
        if needle:
            pattern = "%" + needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            pattern += "%"
            stmt = stmt.where(
                or_(
                    func.fold(SessionRecord.title).like(fold(pattern), escape="\\"),
                    SessionRecord.id.like(pattern, escape="\\"),
                )
            )
        out: list[SessionRow] = []
        with self._read.connect() as conn, conn.begin():
            result = conn.execute(stmt)
            while part := result.fetchmany(READ_CHUNK):
                out.extend(SessionRow(*r) for r in part)
                # Give the GIL away between chunks: this runs in a worker thread, and when
                # the machine's cores are busy the UI thread waiting for the GIL otherwise
                # stalled 150-240 ms during this read of 100,000 rows (docs/performance.md).
                time.sleep(0)
        return out

    def get(self, session_id: str) -> SessionRow | None:
        with Session(self._read) as session, session.begin():
            rec = session.get(SessionRecord, session_id)
            return _row(rec) if rec is not None else None

    def snapshot(self) -> dict[str, SessionRow]:
        """Every row by id: the planner's view of the mirror."""
        out: dict[str, SessionRow] = {}
        with self._read.connect() as conn, conn.begin():
            result = conn.execute(select(*_ROW_COLUMNS))
            while part := result.fetchmany(READ_CHUNK):
                for r in part:
                    out[r[0]] = SessionRow(*r)
                time.sleep(0)  # as in `rows`: let a waiting UI thread have the GIL
        return out

    def count(self) -> int:
        with self._read.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(SessionRecord)).scalar_one())

    def get_state(self, key: str) -> str | None:
        with Session(self._read) as session, session.begin():
            rec = session.get(SyncState, key)
            return rec.value if rec is not None else None

    def unconfirmed_deletes(self) -> set[str]:
        """Ids of rows whose delete was sent but never answered."""
        with self._read.connect() as conn, conn.begin():
            return set(conn.execute(select(UnconfirmedDelete.session_id)).scalars())

    def mark_unconfirmed(self, session_id: str) -> None:
        """Mark a row whose delete may or may not have happened (kept until settled)."""
        stmt = sqlite_insert(UnconfirmedDelete).on_conflict_do_nothing(
            index_elements=["session_id"]
        )
        with self._writing() as conn:
            present = conn.execute(
                select(SessionRecord.id).where(SessionRecord.id == session_id)
            ).first()
            if present is not None:
                conn.execute(stmt, [{"session_id": session_id, "since": time.time()}])

    def cached_file(self, artifact_id: str) -> CachedFile | None:
        with Session(self._read) as session, session.begin():
            rec = session.get(CachedArtifact, artifact_id)
            if rec is None:
                return None
            return CachedFile(
                rec.artifact_id,
                rec.session_id,
                rec.name,
                rec.media_type,
                rec.size,
                rec.sha256,
                rec.file_name,
            )

    # -- writes -----------------------------------------------------------------------------

    def apply(
        self,
        upserts: Sequence[SessionView] = (),
        removals: Sequence[str] = (),
        *,
        state: dict[str, str | None] | None = None,
        skip: Callable[[str], bool] | None = None,
        settle: Sequence[str] = (),
    ) -> ApplyResult:
        """Upsert views and remove rows (with their artifact index) in ONE transaction.

        Rows are classified as inserted or updated against the mirror as it is inside this
        transaction, so a concurrent change is reported truthfully; an unchanged row is not
        rewritten. `skip(id)` drops an upsert at write time (a session
        this device deleted since the walk saw it must not come back). `settle` names rows
        the server has just shown to exist: their unconfirmed-delete marks are cleared.
        """
        now = time.time()
        with self._writing() as conn:
            self._commit_seq += 1  # under the write lock: commit order
            seq = self._commit_seq
            wanted = [v for v in upserts if skip is None or not skip(v.id)]
            current = _rows_by_id(conn, [v.id for v in wanted]) if wanted else {}
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
            removed: list[str] = []
            files: list[str] = []
            if removals:
                ids = list(dict.fromkeys(removals))
                for chunk in _chunks(ids, 500):
                    present = conn.execute(
                        select(SessionRecord.id).where(SessionRecord.id.in_(chunk))
                    ).scalars()
                    removed.extend(present)
                    files.extend(
                        conn.execute(
                            select(CachedArtifact.file_name).where(
                                CachedArtifact.session_id.in_(chunk)
                            )
                        ).scalars()
                    )
                    conn.execute(delete(SessionRecord).where(SessionRecord.id.in_(chunk)))
                    conn.execute(delete(CachedArtifact).where(CachedArtifact.session_id.in_(chunk)))
                    conn.execute(
                        delete(UnconfirmedDelete).where(UnconfirmedDelete.session_id.in_(chunk))
                    )
                remember = sqlite_insert(RemovedSession)
                remember = remember.on_conflict_do_update(
                    index_elements=["session_id"], set_={"removed_at": remember.excluded.removed_at}
                )
                conn.execute(remember, [{"session_id": sid, "removed_at": now} for sid in ids])
                conn.execute(
                    delete(RemovedSession).where(
                        RemovedSession.removed_at < now - REMOVED_MEMORY_SECONDS
                    )
                )
            for chunk in _chunks(list(dict.fromkeys(settle)), 500):
                conn.execute(
                    delete(UnconfirmedDelete).where(UnconfirmedDelete.session_id.in_(chunk))
                )
            for key, value in (state or {}).items():
                _set_state(conn, key, value)
            after = self._change_seq
        if written or removed:
            # After the commit (so a reader that reads this seq first sees the write), which
            # is outside the lock: a writer that reads a stale `after` meanwhile makes its
            # listeners re-read the mirror whole (safe), never skip a write.
            self._change_seq = max(self._change_seq, seq)
        if removed or files or self._scrub_pending:
            self.scrub()
        return ApplyResult(inserted, updated, removed, files, seq, tuple(written), after)

    @property
    def last_change_seq(self) -> int:
        """The `seq` of the last write that changed session rows: read it before a full
        read of the rows, and deltas with a larger `seq` are the ones that read may lack."""
        return self._change_seq

    def bind_identity(self, identity: str) -> bool:
        """Record which server and token this mirror follows; on a change, forget the ETag.

        An ETag only means something to the server (and principal) that issued it. Returns
        True when the identity changed. Rows are left alone: the next pass point-reads the
        ones the new index lacks and prunes those that answer 404.
        """
        if self.get_state(IDENTITY_KEY) == identity:
            return False  # the usual case writes nothing: opening needs no write lock
        with self._writing() as conn:
            current = conn.execute(
                select(SyncState.value).where(SyncState.key == IDENTITY_KEY)
            ).scalar_one_or_none()
            if current == identity:
                return False
            _set_state(conn, IDENTITY_KEY, identity)
            _set_state(conn, ETAG_KEY, None)
            return True

    def record_cached_file(self, entry: CachedFile) -> bool:
        """Index a cached file, only while its session is still mirrored; returns whether
        it was recorded.

        The check and the insert share the write transaction that a delete or a prune also
        takes, so a download that finishes after its session left the mirror records
        nothing (the caller then removes the file), and one that finished before is
        removed with the session. A session not mirrored yet (opened before the first
        sync saw it) may cache; one removed recently may not.
        """
        values = {
            "artifact_id": entry.artifact_id,
            "session_id": entry.session_id,
            "name": entry.name,
            "media_type": entry.media_type,
            "size": entry.size,
            "sha256": entry.sha256,
            "file_name": entry.file_name,
            "cached_at": time.time(),
        }
        stmt = sqlite_insert(CachedArtifact)
        stmt = stmt.on_conflict_do_update(
            index_elements=["artifact_id"],
            set_={k: stmt.excluded[k] for k in values if k != "artifact_id"},
        )
        with self._writing() as conn:
            removed = conn.execute(
                select(RemovedSession.session_id).where(
                    RemovedSession.session_id == entry.session_id
                )
            ).first()
            if removed is not None:
                return False
            conn.execute(stmt, [values])
            return True


def _row(rec: SessionRecord) -> SessionRow:
    return SessionRow(
        id=rec.id,
        title=rec.title,
        created_at=rec.created_at,
        updated_at=rec.updated_at,
        active_run_id=rec.active_run_id,
        last_run_id=rec.last_run_id,
    )


def _rows_by_id(conn: Any, ids: Sequence[str]) -> dict[str, SessionRow]:
    out: dict[str, SessionRow] = {}
    cols = _ROW_COLUMNS
    if len(ids) > 2000:  # cheaper to read everything than to chunk a huge IN list
        for r in conn.execute(select(*cols)):
            out[r[0]] = SessionRow(*r)
        return out
    for chunk in _chunks(list(ids), 500):
        for r in conn.execute(select(*cols).where(SessionRecord.id.in_(chunk))):
            out[r[0]] = SessionRow(*r)
    return out


def _set_state(conn: Any, key: str, value: str | None) -> None:
    stmt = sqlite_insert(SyncState)
    stmt = stmt.on_conflict_do_update(index_elements=["key"], set_={"value": stmt.excluded.value})
    conn.execute(stmt, [{"key": key, "value": value}])


def _chunks(items: Sequence[str], size: int) -> Iterable[list[str]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])
