"""How the mirror file is opened, and brought to the schema this program writes.

The schema is stated once, as the DDL steps of `MIGRATIONS`; the damage check
(`sync.mirror.check`) compares a file with the tables they build. Every connection is the
standard DB-API one of `sync.mirror.sqlite_driver`, with autocommit off at the driver
level (`isolation_level=None`) so that `sync.mirror.store.Mirror` says where each
transaction begins (`BEGIN IMMEDIATE` for a write, so two writers queue on the lock rather
than fail at their first write) and ends.

Why SQLite `user_version` with ordered steps rather than a migration tool: the mirror is a
private cache of a few tables, and `converge ls` must start fast; a list of DDL steps, each
run in one `BEGIN IMMEDIATE` transaction together with the version bump, gives forward
migrations with no extra machinery (decision 0122).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from sync.errors import MirrorError, MirrorTooNew
from sync.mirror import sqlite_driver, title_index
from sync.mirror.search_text import fold as search_fold
from sync.mirror.sqlite_driver import Connection
from sync.mirror.title_filter import fold
from sync.mirror.transcripts import fill_short_index

BUSY_TIMEOUT_MS = 5000

#: Below this many free bytes on the mirror's file system, the disk is taken for full (a
#: mirror write needs a few pages, its WAL index 32 KiB).
DISK_FULL_BELOW = 1024 * 1024

#: Forward migrations, in order; step N brings user_version from N to N+1. Never edit a
#: released step: append a new one (with a fixture of the version it migrates from:
#: `tests/sync/test_mirror_migrations.py`).
#: A step's part: a DDL statement, or (rarely) a function filling what the DDL before it
#: added from what the file already holds.
type Step = str | Callable[[Connection], None]

#: The index of titles (`sync.mirror.title_index`), as steps 6 and 7 create it.
_TITLE_INDEX = """CREATE VIRTUAL TABLE search_titles USING fts5(
    text, content='', tokenize='unicode61', detail=none, columnsize=0
)"""

MIGRATIONS: tuple[tuple[Step, ...], ...] = (
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
    (
        # Transcripts (CONTRACT §11, `sync.mirror.transcripts`): how far each conversation is
        # mirrored, its events, and a contentless trigram index over their folded text,
        # one entry per stored batch of a conversation's events (`search_rows` maps an
        # entry to its conversation and sequences; decision 0121: `detail=none`, matches
        # confirmed against the events' text).
        """CREATE TABLE transcripts (
            session_id TEXT NOT NULL PRIMARY KEY,
            up_to INTEGER NOT NULL DEFAULT 0,
            fetched_updated_at TEXT,
            size INTEGER NOT NULL DEFAULT 0,
            active_at TEXT NOT NULL DEFAULT ''
        )""",
        "CREATE INDEX ix_transcripts_active_at ON transcripts (active_at)",
        """CREATE TABLE events (
            id INTEGER NOT NULL PRIMARY KEY,
            session_id TEXT NOT NULL,
            sequence INTEGER NOT NULL,
            run_id TEXT,
            type TEXT NOT NULL,
            created_at TEXT NOT NULL,
            data TEXT NOT NULL
        )""",
        "CREATE UNIQUE INDEX ix_events_session_sequence ON events (session_id, sequence)",
        """CREATE TABLE search_rows (
            id INTEGER NOT NULL PRIMARY KEY,
            session_id TEXT NOT NULL,
            first_sequence INTEGER NOT NULL,
            last_sequence INTEGER NOT NULL
        )""",
        "CREATE INDEX ix_search_rows_session_id ON search_rows (session_id)",
        """CREATE VIRTUAL TABLE search USING fts5(
            text, content='', tokenize='trigram case_sensitive 1', detail=none, columnsize=0
        )""",
    ),
    (
        # The change sequence (decision 0209, `sync.mirror.apply`): every write that
        # changes rows takes the next number and stamps it on each row it wrote and each
        # removal it remembered, so a reader asks "what changed since N"
        # (`sync.mirror.reader.query_changes`). The rows and removals already here are
        # numbered 1, and the counter goes on from there.
        "ALTER TABLE sessions ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0",
        "UPDATE sessions SET change_seq = 1",
        "CREATE INDEX ix_sessions_change_seq ON sessions (change_seq)",
        "ALTER TABLE removed_sessions ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0",
        "UPDATE removed_sessions SET change_seq = 1",
        "CREATE INDEX ix_removed_sessions_change_seq ON removed_sessions (change_seq)",
        """INSERT OR REPLACE INTO sync_state (key, value) SELECT 'change_seq', '1'
            WHERE EXISTS (SELECT 1 FROM sessions) OR EXISTS (SELECT 1 FROM removed_sessions)""",
    ),
    (
        # The short index (decision 0123): the one- and two-character grams of the text's
        # unspaced scripts (`sync.mirror.search_text.short_grams`), under the entry ids of
        # `search`, so a one- or two-character Chinese or Japanese word is found in message
        # text. Filled at once from the events already mirrored.
        """CREATE VIRTUAL TABLE search_short USING fts5(
            text, content='', tokenize='unicode61 remove_diacritics 0', detail=none,
            columnsize=0
        )""",
        fill_short_index,
    ),
    (
        # The index of titles and ids (decision 0124, `sync.mirror.title_index`): their
        # one-, two- and three-character grams, so search and the title filter find a
        # title without reading every one. Filled at once from the rows already mirrored.
        """CREATE TABLE title_rows (
            id INTEGER NOT NULL PRIMARY KEY,
            session_id TEXT NOT NULL UNIQUE
        )""",
        _TITLE_INDEX,
        # Filled by the next step, which builds this index again.
    ),
    (
        # Ids in an index of their own (decision 0232): SQLite's trigram tokenizer spells
        # an id's entry, and a title's entry no longer holds its id's grams, so the title
        # index is built again. Filled at once from the rows already mirrored.
        "DROP TABLE search_titles",
        "DELETE FROM title_rows",
        _TITLE_INDEX,
        """CREATE VIRTUAL TABLE search_ids USING fts5(
            text, content='', tokenize='trigram case_sensitive 1', detail=none, columnsize=0
        )""",
        title_index.fill,
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)

#: How long a removed session's id is remembered (far longer than any download takes).
REMOVED_MEMORY_SECONDS = 24 * 3600.0


def disk_is_full(path: Path) -> bool:
    """Whether the file system holding `path` has less than `DISK_FULL_BELOW` free."""
    try:
        return shutil.disk_usage(path.parent).free < DISK_FULL_BELOW
    except OSError:
        return False


def open_read_only(
    path: Path, timeout: float, *, check_same_thread: bool = True
) -> sqlite_driver.Connection:
    """A connection that can only read the file at `path` (`mode=ro`: it never creates,
    migrates or writes it), waiting up to `timeout` seconds for a lock. Raises
    `sqlite_driver.Error`.

    Even a reader of a WAL file maps the shared WAL index (`-shm`, 32 KiB), which a full
    disk cannot hold: its first read fails with a bare "disk I/O error". So on a full disk
    the file is read with a private index (`_open_with_private_index`) when there is no
    `-shm` yet, or when the shared one fails at the first read."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    if not disk_is_full(path):
        return sqlite_driver.connect(
            uri, uri=True, timeout=timeout, check_same_thread=check_same_thread
        )
    if path.with_name(path.name + "-shm").exists():
        conn = sqlite_driver.connect(
            uri, uri=True, timeout=timeout, check_same_thread=check_same_thread
        )
        try:
            conn.execute("PRAGMA user_version").fetchone()  # the first read maps the index
        except sqlite_driver.OperationalError:
            conn.close()
        else:
            return conn
    return _open_with_private_index(path, timeout, check_same_thread)


def _open_with_private_index(
    path: Path, timeout: float, check_same_thread: bool
) -> sqlite_driver.Connection:
    """A reader that keeps the WAL index in its own memory: SQLite does that only in
    exclusive locking mode, which takes a write lock on the file and so needs it opened
    read-write (`mode=rw`, never created); `query_only` refuses every write through it.
    Other processes wait for the file (their busy timeout) while it is open: the commands
    that read are short. Its only file is an empty `-wal`, which it removes at close."""
    conn = sqlite_driver.connect(
        f"{path.resolve().as_uri()}?mode=rw",
        uri=True,
        timeout=timeout,
        check_same_thread=check_same_thread,
    )
    try:
        conn.execute("PRAGMA query_only=ON")
        conn.execute("PRAGMA locking_mode=EXCLUSIVE")  # before the first read of the file
        conn.execute("PRAGMA user_version").fetchone()
    except BaseException:
        conn.close()
        raise
    return conn


type SqlValue = str | bytes | int | float | None


def sql_fold(value: SqlValue) -> SqlValue:
    """`fold` as the SQL function `Mirror`'s connections register, of a text given as its
    UTF-8 bytes (`CAST(title AS BLOB)`) and given back so: SQLite hands a Python function a
    text cut at its first NUL, and takes one back cut there too, but a blob whole. NULL
    stays NULL."""
    if isinstance(value, bytes):
        return str(fold(value.decode("utf-8", "replace"))).encode("utf-8", "surrogatepass")
    return value


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


def connect(path: Path, *, read_only: bool = False) -> Connection:
    """A connection of `Mirror`'s, usable from any worker thread (one at a time).

    A writer's connection puts the file in WAL mode (readers go on while a pass writes),
    syncs at commit boundaries only (`synchronous=NORMAL`: a commit survives a process
    kill, the last ones may not survive a power cut), and zeroes removed rows in their pages
    (`secure_delete`, CONTRACT §9.2). `read_only`: `open_read_only`'s connection, which
    sets nothing on the file and writes nothing."""
    timeout = busy_timeout_ms() / 1000
    if read_only:
        conn = open_read_only(path, timeout, check_same_thread=False)
    else:
        conn = sqlite_driver.connect(path, timeout=timeout, check_same_thread=False)
    conn.isolation_level = None
    try:
        if not read_only:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(f"PRAGMA busy_timeout={busy_timeout_ms()}")
            conn.execute("PRAGMA secure_delete=ON")
        add_functions(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def add_functions(conn: Connection) -> None:
    """The SQL functions the mirror's queries call, on one connection."""
    # SQLite's lower() folds ASCII only ("Écrire" would not match "écrire"); the title
    # filter's fold, of and to UTF-8 bytes (`sql_fold`).
    conn.create_function("fold", 1, sql_fold, deterministic=True)
    # Search's folding (accents too), for titles (`sync.mirror.search`).
    conn.create_function("search_fold", 1, _search_fold, deterministic=True)


def _search_fold(value: SqlValue) -> SqlValue:
    """`search_fold` of UTF-8 bytes, given back so, as `sql_fold` is `fold`'s."""
    if isinstance(value, bytes):
        return search_fold(value.decode("utf-8", "replace")).encode("utf-8", "surrogatepass")
    return value


def migrate(conn: Connection, path: Path) -> None:
    """Bring the file from its `user_version` to `SCHEMA_VERSION`, inside the caller's write
    transaction: each step and its version bump commit together or not at all."""
    current = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if current > SCHEMA_VERSION:  # raced with a newer program since the check
        raise MirrorTooNew(
            f"The mirror {path} was written by a newer version of Converge.",
            found=current,
            supported=SCHEMA_VERSION,
        )
    for step in range(current, SCHEMA_VERSION):
        for part in MIGRATIONS[step]:
            run_step(conn, part)
        conn.execute(f"PRAGMA user_version={step + 1}")


def run_step(conn: Connection, part: Step) -> None:
    """One part of a migration step, on the caller's connection and transaction."""
    if callable(part):
        part(conn)
    else:
        conn.execute(part)


def is_locked(exc: Exception) -> bool:
    """Whether a database error means another connection holds the lock."""
    reason = str(exc).lower()
    return "locked" in reason or "busy" in reason


def locked_error(path: Path) -> MirrorError:
    return MirrorError(
        f"The mirror {path} is locked by another program (another Converge window or "
        "command?). Close it and try again."
    )


def disk_full_error(path: Path) -> MirrorError | None:
    """The words for a failure on a full disk, or None when the disk has room.

    On a full disk SQLite rarely says "database or disk is full": the shared-memory WAL
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
