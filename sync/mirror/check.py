"""Is the mirror file sound? The check run when a mirror is opened and after a database error.

A mirror can be damaged behind the program's back: a disk or file-system fault, a crash of
the machine under `synchronous=NORMAL`, a copy taken mid-write, a file edited by hand. SQLite
then answers some statements and fails others, and a pass that meets only the pages that
survived (a 304 reads just the ETag) would report success over a broken file. So the file is
checked as a whole: `PRAGMA quick_check` (every b-tree page reachable and well formed; it
skips the index-content comparison of `integrity_check`, which is what makes it quick), then
the tables and columns the migrations build (`sync.mirror.schema`),
which a dropped table or a file from elsewhere lacks. A read that SQLite found malformed or
whose text did not decode, and a repair, get a thorough check: `integrity_check` and every
text decoded (an index entry that points at no row, a text damaged into bytes that are not
UTF-8: `quick_check` passes both).

`quick_check` reads every page, which on a large mirror costs as much as a search of every
conversation. So a mirror opened only to be read (`converge ls`, `show`, `search`) larger
than `WHOLE_CHECK_BYTES` gets a check bounded in cost: its rows table and the schema. The
pages such a read meets SQLite checks as it reads them, and a read that fails is checked
whole then and named (`sync.mirror.store.failure`); damage in pages it never reads leaves
its answer right, and the next sync or window meets it (decision 0230).

The check opens its own read-only connection (`mode=ro`: it never creates, migrates or writes
the file) and answers with SQLite's own short account of the damage, or None. A file that is
merely locked or on a full disk is not damaged: those answer None, and the caller's own error
handling names them.
"""

from __future__ import annotations

import logging
from functools import cache
from pathlib import Path

from sync.errors import MirrorDamaged
from sync.mirror import sqlite_driver
from sync.mirror.schema import (
    MIGRATIONS,
    SCHEMA_VERSION,
    busy_timeout_ms,
    open_read_only,
    read_schema_version,
    run_step,
)

log = logging.getLogger(__name__)

#: At most this many problems are asked of `quick_check` (the first few say enough).
MAX_PROBLEMS = 3
#: The reason shown is cut to this many characters (SQLite can name many pages).
MAX_REASON = 300
#: A mirror opened to be read is checked whole up to this size; a larger one, the rows.
WHOLE_CHECK_BYTES = 16 << 20


def find_damage(path: Path, *, thorough: bool = False) -> str | None:
    """What is wrong with the mirror file at `path`, in SQLite's words, or None when it is
    sound (or missing, locked, or on a full disk: not damage). `thorough`: `integrity_check`,
    which also compares every index with its table, and every text decoded (the module
    docstring). Synchronous: call it off the event loop."""
    return _inspect(path, thorough=thorough)[0]


def _inspect(
    path: Path, *, reading: bool = False, thorough: bool = False
) -> tuple[str | None, int | None]:
    """`find_damage`'s answer, and the schema version the same connection read (None when
    it read none: a missing, locked or unreadable file). `reading`: a current file over
    `WHOLE_CHECK_BYTES` has its schema and rows table checked, not every page."""
    try:
        if not path.is_file():
            return None, None
        large = reading and path.stat().st_size > WHOLE_CHECK_BYTES
    except OSError:
        return None, None
    try:
        conn = open_read_only(path, timeout=busy_timeout_ms() / 1000)
    except sqlite_driver.Error as exc:
        log.info("mirror check could not open %s: %s", path, exc)
        return None, None
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        current = version == SCHEMA_VERSION  # an older file gets its tables from `migrate`
        if large and current:
            return missing_schema(conn) or _problems(conn, "sessions"), version
        if thorough:
            whole = _problems(conn, MAX_PROBLEMS, "integrity_check") or _text_not_utf8(conn)
        else:
            whole = _problems(conn, MAX_PROBLEMS)
        return whole or (missing_schema(conn) if current else None), version
    except sqlite_driver.OperationalError as exc:
        if _is_transient(exc):
            log.info("mirror check of %s skipped: %s", path, exc)
            return None, None
        return _cut(str(exc)), None
    except (
        sqlite_driver.DatabaseError
    ) as exc:  # "file is not a database", "disk image is malformed"
        return _cut(str(exc)), None
    except UnicodeDecodeError:
        # The driver could not decode SQLite's message: it quotes the damaged bytes.
        return "SQLite's account of it quotes damaged bytes", None
    finally:
        conn.close()


def _problems(
    conn: sqlite_driver.Connection, scope: str | int, check: str = "quick_check"
) -> str | None:
    """`check`'s account of `scope` (a table, or the whole file up to that many problems),
    or None when it finds nothing."""
    found = [str(row[0]) for row in conn.execute(f"PRAGMA {check}({scope})")]
    return None if found == ["ok"] else _cut("; ".join(found))


def _text_not_utf8(conn: sqlite_driver.Connection) -> str | None:
    """The first table and column holding text that is not UTF-8, which this program never
    writes: a damaged value no page check sees, met by a read as "Could not decode to
    UTF-8". Reads every text of the file's own tables (not the indexes' shadow tables)."""
    tables = [
        str(row[0])
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE TABLE %'"
            " AND sql NOT LIKE 'CREATE TABLE ''%'"
        )
    ]
    factory = conn.text_factory
    conn.text_factory = bytes
    try:
        for table in tables:
            info = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
            columns = [bytes(row[1]).decode() for row in info if bytes(row[2]).upper() == b"TEXT"]
            if not columns:
                continue
            names = ", ".join(f'"{column}"' for column in columns)
            for row in conn.execute(f'SELECT {names} FROM "{table}"'):
                for column, value in zip(columns, row, strict=True):
                    if isinstance(value, bytes) and not _is_utf8(value):
                        return f"the table {table} holds a {column} that is not UTF-8 text"
    finally:
        conn.text_factory = factory
    return None


def _is_utf8(value: bytes) -> bool:
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def missing_schema(conn: sqlite_driver.Connection) -> str | None:
    """The first table or columns of the schema that the file lacks, or None."""
    for table, columns in expected_tables().items():
        found = {str(row[1]) for row in conn.execute(f'PRAGMA table_info("{table}")')}
        if not found:
            return f"the table {table} is missing"
        lacking = sorted(columns - found)
        if lacking:
            return f"the table {table} lacks the column(s) {', '.join(lacking)}"
    return None


@cache
def expected_tables() -> dict[str, frozenset[str]]:
    """The tables and columns the migrations build: read from an in-memory database that
    ran them, so the schema is written once (as its DDL) and checked against itself."""
    conn = sqlite_driver.connect(":memory:")
    try:
        for step in MIGRATIONS:
            for part in step:
                run_step(conn, part)
        names = [
            str(row[0])
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE"
                " 'CREATE TABLE ''%' ORDER BY name"
            )
        ]
        return {
            name: frozenset(str(row[1]) for row in conn.execute(f'PRAGMA table_info("{name}")'))
            for name in names
        }
    finally:
        conn.close()


def damaged_error(path: Path, reason: str) -> MirrorDamaged:
    """The one sentence a damaged mirror gets, in the command line and in the window."""
    return MirrorDamaged(
        f"The saved copy of your conversations ({path}) is damaged ({reason}). Nothing on "
        "the server is affected. Run `converge repair` (or press Rebuild in the window) to "
        "rebuild it from the server.",
        path=str(path),
        reason=reason,
    )


def check_mirror(path: Path, *, reading: bool = False) -> int:
    """Raise `MirrorDamaged` when `find_damage` finds something; else the file's schema
    version (0: no file), read by the check's own connection. A file the check could not
    read (locked, a full disk) is asked again by `read_schema_version`, which names why.
    `reading`: the file is opened to be read only (the module docstring: a large one gets
    the bounded check)."""
    reason, version = _inspect(path, reading=reading)
    if reason is not None:
        raise damaged_error(path, reason)
    return version if version is not None else read_schema_version(path)


def _is_transient(exc: Exception) -> bool:
    words = str(exc).lower()
    return any(w in words for w in ("locked", "busy", "disk is full", "disk i/o", "unable to open"))


def _cut(reason: str) -> str:
    reason = " ".join(reason.split())  # one line, whatever SQLite listed
    return reason if len(reason) <= MAX_REASON else reason[: MAX_REASON - 1] + "…"
