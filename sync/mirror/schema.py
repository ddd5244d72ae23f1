"""The mirror's file format: its tables (typed models), its migrations (the steps are in
`sync.mirror.migrations`), and how a connection to it is opened.

Why SQLite `user_version` with ordered steps rather than alembic: the mirror is a private
cache of a few tables, and `converge ls` must start fast; a list of DDL steps, each run in one
`BEGIN IMMEDIATE` transaction together with the version bump, gives forward migrations with
no extra machinery. The models and the steps must describe the same schema:
`tests/sync/test_mirror_schema.py` builds a file from the steps and compares it with the
models, table by table.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, Index, Integer, String, create_engine, event
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from sync.errors import MirrorError, MirrorTooNew
from sync.mirror import sqlite_driver
from sync.mirror.migrations import MIGRATIONS, SCHEMA_VERSION
from sync.mirror.reader import DISK_FULL_BELOW, open_read_only
from sync.mirror.search_text import fold as search_fold
from sync.mirror.title_filter import fold

BUSY_TIMEOUT_MS = 5000


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
    #: The change sequence of the write that last wrote the row (`sync.mirror.apply`).
    change_seq: Mapped[int] = mapped_column(Integer, default=0, index=True)

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
    download that finishes after its session left is not recorded (see record_cached_file),
    and a reader asking what changed since N learns of the removals numbered above N."""

    __tablename__ = "removed_sessions"

    session_id: Mapped[str] = mapped_column(String, primary_key=True)
    removed_at: Mapped[float] = mapped_column()
    change_seq: Mapped[int] = mapped_column(Integer, default=0, index=True)


class Transcript(Base):
    """How much of one conversation's event log the mirror holds (`sync.mirror.transcripts`).

    `up_to`: the last mirrored `sequence` (0: none, or evicted). `fetched_updated_at`: the
    row's `updated_at` the events were fetched at; a pass fetches again only when the row's
    moved. `size`: bytes of event data held (the size budget counts it). `active_at`: the
    row's `updated_at`, the order of eviction (least recently active first)."""

    __tablename__ = "transcripts"

    session_id: Mapped[str] = mapped_column(String, primary_key=True)
    up_to: Mapped[int] = mapped_column(Integer, default=0)
    fetched_updated_at: Mapped[str | None] = mapped_column(String, nullable=True)
    size: Mapped[int] = mapped_column(Integer, default=0)
    active_at: Mapped[str] = mapped_column(String, default="", index=True)


class EventRecord(Base):
    """One mirrored Event; `data` is its JSON."""

    __tablename__ = "events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    session_id: Mapped[str] = mapped_column(String)
    sequence: Mapped[int] = mapped_column(Integer)
    run_id: Mapped[str | None] = mapped_column(String, nullable=True)
    type: Mapped[str] = mapped_column(String)
    created_at: Mapped[str] = mapped_column(String)
    data: Mapped[str] = mapped_column(String)

    __table_args__ = (Index("ix_events_session_sequence", session_id, sequence, unique=True),)


class SearchRow(Base):
    """One entry of the `search` index: the folded text of a conversation's events from
    `first_sequence` to `last_sequence` (one stored batch), so a query's candidates are
    conversations, not events, and a removal can rebuild the entry's text (decision 0121)."""

    __tablename__ = "search_rows"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    session_id: Mapped[str] = mapped_column(String, index=True)
    first_sequence: Mapped[int] = mapped_column(Integer)
    last_sequence: Mapped[int] = mapped_column(Integer)


#: The FTS5 table over events' folded text and its shadow tables (not SQLAlchemy models).
SEARCH_TABLES = frozenset({"search", "search_data", "search_idx", "search_config"})


class SyncState(Base):
    """Small key/value facts about the mirror (the first page's ETag)."""

    __tablename__ = "sync_state"

    key: Mapped[str] = mapped_column(String, primary_key=True)
    value: Mapped[str | None] = mapped_column(String, nullable=True)


#: How long a removed session's id is remembered (far longer than any download takes).
REMOVED_MEMORY_SECONDS = 24 * 3600.0


def read_schema_version(path: Path) -> int:
    """The mirror's user_version, read without writing anything (0 for a missing file)."""
    if not path.exists():
        return 0
    try:
        conn = open_read_only(path, timeout=5)
        try:
            row = conn.execute("PRAGMA user_version").fetchone()
        finally:
            conn.close()
    except sqlite_driver.Error as exc:
        raise disk_full_error(path) or MirrorError(
            f"Cannot open the mirror {path}: {exc}."
        ) from exc
    return int(row[0]) if row else 0


def busy_timeout_ms() -> int:
    """The busy timeout, read at connect time (tests lower it to meet a lock quickly)."""
    return BUSY_TIMEOUT_MS


def make_engine(path: Path, *, immediate: bool, read_only: bool = False) -> Engine:
    """The engine of `Mirror`'s connections. `read_only`: connections of `open_read_only`,
    which set nothing on the file (no journal mode) and write nothing."""
    timeout = busy_timeout_ms() / 1000
    engine = create_engine(
        f"sqlite:///{path}",
        module=sqlite_driver.DBAPI,
        connect_args={"check_same_thread": False, "timeout": timeout},
        **(
            {"creator": lambda: open_read_only(path, timeout, check_same_thread=False)}
            if read_only
            else {}
        ),
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event choose the BEGIN kind (SQLAlchemy's SQLite recipe).
        dbapi_conn.isolation_level = None
        if read_only:
            _add_functions(dbapi_conn)
            return
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute(f"PRAGMA busy_timeout={busy_timeout_ms()}")
        # A removed row's bytes are zeroed in its page, not just unlinked (CONTRACT §9.2).
        cur.execute("PRAGMA secure_delete=ON")
        cur.close()
        _add_functions(dbapi_conn)

    begin_sql = "BEGIN IMMEDIATE" if immediate else "BEGIN"

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql(begin_sql)

    return engine


def _add_functions(dbapi_conn: Any) -> None:
    # SQLite's lower() folds ASCII only ("Écrire" would not match "écrire").
    dbapi_conn.create_function("fold", 1, fold, deterministic=True)
    # Search's folding (accents too), for titles (`sync.mirror.search`).
    dbapi_conn.create_function("search_fold", 1, _search_fold, deterministic=True)


def _search_fold(value: object) -> object:
    return search_fold(value) if isinstance(value, str) else value


def migrate(conn: Connection, path: Path) -> None:
    """Bring the file from its `user_version` to `SCHEMA_VERSION`, inside the caller's write
    transaction: each step and its version bump commit together or not at all."""
    current = int(conn.exec_driver_sql("PRAGMA user_version").scalar_one())
    if current > SCHEMA_VERSION:  # raced with a newer program since the check
        raise MirrorTooNew(
            f"The mirror {path} was written by a newer version of Converge.",
            found=current,
            supported=SCHEMA_VERSION,
        )
    for step in range(current, SCHEMA_VERSION):
        for statement in MIGRATIONS[step]:
            conn.exec_driver_sql(statement)
        conn.exec_driver_sql(f"PRAGMA user_version={step + 1}")


def is_locked(exc: SQLAlchemyError) -> bool:
    """Whether a database error means another connection holds the lock."""
    reason = str(getattr(exc, "orig", None) or exc).lower()
    return "locked" in reason or "busy" in reason


def locked_error(path: Path) -> MirrorError:
    return MirrorError(
        f"The mirror {path} is locked by another program (another Converge window or "
        "command?). Close it and try again."
    )


def disk_full_error(path: Path) -> MirrorError | None:
    """The words for a failure on a full disk, or None when the disk has room.

    At 100 % full SQLite rarely says "database or disk is full": the shared-memory WAL
    index cannot grow first, and that is a plain "disk I/O error", which tells the user
    nothing. So a failed open or write looks at the free space itself."""
    try:
        free = shutil.disk_usage(path.parent).free
    except OSError:
        return None
    if free >= DISK_FULL_BELOW:
        return None
    return MirrorError(
        f"The disk holding the mirror {path} is full ({free // 1024} KiB free). Free some "
        "space and try again."
    )
