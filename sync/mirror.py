"""The SQLite mirror of a profile: session rows and the index of cached artifact bytes.

The mirror is never authoritative (ADR-0050 §8): it holds what the last reconcile saw, so the
window can draw at once and `converge ls` can answer offline.

Why SQLite `user_version` with ordered steps rather than alembic: the mirror is a private
cache with three tables, and `converge ls` must start fast; a list of DDL steps, each run in
one `BEGIN IMMEDIATE` transaction together with the version bump, gives forward migrations
with no extra machinery. A mirror whose version is newer than `SCHEMA_VERSION` was written by
a newer program: it is refused with `MirrorTooNew` before anything writes to it (the check
opens the file read-only, before the WAL pragma would touch it).

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
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    Index,
    Integer,
    String,
    create_engine,
    delete,
    event,
    func,
    or_,
    select,
)
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from sync.errors import MirrorError, MirrorTooNew
from sync.models import SessionView

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 5000
#: Rows per executemany call of `Mirror.apply` (all calls of one apply share a transaction).
UPSERT_CHUNK = 2000
#: Rows `Mirror.rows` builds between two GIL hand-overs (it runs in a worker thread).
READ_CHUNK = 2000


class Base(DeclarativeBase):
    pass


class SessionRecord(Base):
    """One mirrored SessionView."""

    __tablename__ = "sessions"

    id: Mapped[str] = mapped_column(String, primary_key=True)
    title: Mapped[str | None] = mapped_column(String, nullable=True)
    created_at: Mapped[str] = mapped_column(String)
    updated_at: Mapped[str] = mapped_column(String)
    active_run_id: Mapped[str | None] = mapped_column(String, nullable=True)
    last_run_id: Mapped[str | None] = mapped_column(String, nullable=True)
    synced_at: Mapped[float] = mapped_column(default=0.0)

    __table_args__ = (Index("ix_sessions_order", updated_at.desc(), id.desc()),)


class CachedArtifact(Base):
    """Index of artifact bytes cached as files in the profile's cache folder."""

    __tablename__ = "artifacts"

    artifact_id: Mapped[str] = mapped_column(String, primary_key=True)
    session_id: Mapped[str] = mapped_column(String, index=True)
    name: Mapped[str] = mapped_column(String)
    media_type: Mapped[str] = mapped_column(String)
    size: Mapped[int] = mapped_column(Integer)
    sha256: Mapped[str] = mapped_column(String)
    file_name: Mapped[str] = mapped_column(String)
    cached_at: Mapped[float] = mapped_column(default=0.0)


class UnconfirmedDelete(Base):
    """A delete whose answer never came (the request may have reached the server): the row
    stays, marked, until a retry, a point read or a reconcile settles it (CONTRACT §9.2)."""

    __tablename__ = "unconfirmed_deletes"

    session_id: Mapped[str] = mapped_column(String, primary_key=True)
    since: Mapped[float] = mapped_column()


class RemovedSession(Base):
    """Ids of sessions removed from this mirror in the last day (ids only, no content), so a
    download that finishes after its session left is not recorded (see record_cached_file)."""

    __tablename__ = "removed_sessions"

    session_id: Mapped[str] = mapped_column(String, primary_key=True)
    removed_at: Mapped[float] = mapped_column()


class SyncState(Base):
    """Small key/value facts about the mirror (the first page's ETag)."""

    __tablename__ = "sync_state"

    key: Mapped[str] = mapped_column(String, primary_key=True)
    value: Mapped[str | None] = mapped_column(String, nullable=True)


#: Forward migrations, in order; step N brings user_version from N to N+1. Never edit a
#: released step: append a new one. DDL is spelled out so a step never depends on the models.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE sessions (
            id TEXT NOT NULL PRIMARY KEY,
            title TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            active_run_id TEXT,
            last_run_id TEXT,
            synced_at FLOAT NOT NULL DEFAULT 0
        )""",
        "CREATE INDEX ix_sessions_order ON sessions (updated_at DESC, id DESC)",
        """CREATE TABLE artifacts (
            artifact_id TEXT NOT NULL PRIMARY KEY,
            session_id TEXT NOT NULL,
            name TEXT NOT NULL,
            media_type TEXT NOT NULL,
            size INTEGER NOT NULL,
            sha256 TEXT NOT NULL,
            file_name TEXT NOT NULL,
            cached_at FLOAT NOT NULL DEFAULT 0
        )""",
        "CREATE INDEX ix_artifacts_session_id ON artifacts (session_id)",
        "CREATE TABLE sync_state (key TEXT NOT NULL PRIMARY KEY, value TEXT)",
    ),
    (
        """CREATE TABLE unconfirmed_deletes (
            session_id TEXT NOT NULL PRIMARY KEY,
            since FLOAT NOT NULL
        )""",
        """CREATE TABLE removed_sessions (
            session_id TEXT NOT NULL PRIMARY KEY,
            removed_at FLOAT NOT NULL
        )""",
    ),
)
#: How long a removed session's id is remembered (far longer than any download takes).
REMOVED_MEMORY_SECONDS = 24 * 3600.0
SCHEMA_VERSION = len(MIGRATIONS)

ETAG_KEY = "sessions_first_page_etag"
IDENTITY_KEY = "connection_identity"


@dataclass(frozen=True, slots=True)
class SessionRow:
    """One sidebar row, as the mirror holds it."""

    id: str
    title: str | None
    created_at: str
    updated_at: str
    active_run_id: str | None
    last_run_id: str | None

    @classmethod
    def from_view(cls, view: SessionView) -> SessionRow:
        return cls(
            id=view.id,
            title=view.title,
            created_at=view.created_at,
            updated_at=view.updated_at,
            active_run_id=view.active_run_id,
            last_run_id=view.last_run_id,
        )

    def to_json(self) -> dict[str, str | None]:
        """The `converge ls --json` shape."""
        return {
            "id": self.id,
            "title": self.title,
            "updated_at": self.updated_at,
            "active_run_id": self.active_run_id,
            "last_run_id": self.last_run_id,
        }


@dataclass(frozen=True, slots=True)
class CachedFile:
    artifact_id: str
    session_id: str
    name: str
    media_type: str
    size: int
    sha256: str
    file_name: str


def read_schema_version(path: Path) -> int:
    """The mirror's user_version, read without writing anything (0 for a missing file)."""
    if not path.exists():
        return 0
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
        try:
            row = conn.execute("PRAGMA user_version").fetchone()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise MirrorError(f"Cannot open the mirror {path}: {exc}.") from exc
    return int(row[0]) if row else 0


def _make_engine(path: Path, *, immediate: bool) -> Engine:
    engine = create_engine(
        f"sqlite:///{path}",
        connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000},
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event choose the BEGIN kind (SQLAlchemy's SQLite recipe).
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        # A removed row's bytes are zeroed in its page, not just unlinked (CONTRACT §9.2).
        cur.execute("PRAGMA secure_delete=ON")
        cur.close()
        # SQLite's lower() folds ASCII only ("Écrire" would not match "écrire").
        dbapi_conn.create_function("fold", 1, _fold, deterministic=True)

    begin_sql = "BEGIN IMMEDIATE" if immediate else "BEGIN"

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql(begin_sql)

    return engine


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


class Mirror:
    """Synchronous access to one profile's mirror file; call it off the event loop."""

    def __init__(self, path: Path, write_engine: Engine, read_engine: Engine) -> None:
        self.path = path
        self._write = write_engine
        self._read = read_engine
        self._write_lock = threading.Lock()
        self._commit_seq = 0  # guarded by _write_lock
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
        write_engine = _make_engine(path, immediate=True)
        read_engine = _make_engine(path, immediate=False)
        mirror = cls(path, write_engine, read_engine)
        try:
            if found < SCHEMA_VERSION:  # a current mirror opens without a write (`ls` reads
                mirror._migrate()  # while another process holds the write lock)
        except SQLAlchemyError as exc:
            mirror.close()
            if _is_locked(exc):
                raise _locked(path) from exc
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
        try:
            with self._write.connect() as conn:
                raw = conn.connection.dbapi_connection
                assert raw is not None
                row = raw.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except (sqlite3.Error, SQLAlchemyError) as exc:
            log.warning("mirror checkpoint failed: %s", exc)
            return False
        busy, frames, copied = (int(v) for v in row)
        if busy or frames != copied:
            log.info("mirror checkpoint incomplete (a reader holds older frames); will retry")
            return False
        return True

    @contextlib.contextmanager
    def _writing(self) -> Iterator[Connection]:
        """One write transaction; a database failure (another process holding the lock past
        `busy_timeout`, a full disk) is a MirrorError with words, and nothing is written."""
        try:
            with self._write_lock, self._write.begin() as conn:
                yield conn
        except SQLAlchemyError as exc:
            if _is_locked(exc):
                raise _locked(self.path) from exc
            reason = getattr(exc, "orig", None) or exc
            raise MirrorError(f"Cannot write the mirror {self.path}: {reason}.") from exc

    # -- schema -----------------------------------------------------------------------------

    def _migrate(self) -> None:
        with self._write_lock, self._write.begin() as conn:
            current = int(conn.exec_driver_sql("PRAGMA user_version").scalar_one())
            if current > SCHEMA_VERSION:  # raced with a newer program since the check
                raise MirrorTooNew(
                    f"The mirror {self.path} was written by a newer version of Converge.",
                    found=current,
                    supported=SCHEMA_VERSION,
                )
            for step in range(current, SCHEMA_VERSION):
                for statement in MIGRATIONS[step]:
                    conn.exec_driver_sql(statement)
                conn.exec_driver_sql(f"PRAGMA user_version={step + 1}")

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
                    func.fold(SessionRecord.title).like(_fold(pattern), escape="\\"),
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
            params: list[dict[str, Any]] = []
            for view in wanted:
                before = current.get(view.id)
                row = SessionRow.from_view(view)
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
        if removed or files or self._scrub_pending:
            self.scrub()
        return ApplyResult(inserted, updated, removed, files, seq)

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


def _fold(text: object) -> object:
    """Unicode case folding for the title filter (NFC first: a typed "é" may be decomposed)."""
    if not isinstance(text, str):
        return text
    return unicodedata.normalize("NFC", text).casefold()


def _is_locked(exc: SQLAlchemyError) -> bool:
    reason = str(getattr(exc, "orig", None) or exc).lower()
    return "locked" in reason or "busy" in reason


def _locked(path: Path) -> MirrorError:
    return MirrorError(
        f"The mirror {path} is locked by another program (another Converge window or "
        "command?). Close it and try again."
    )


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
