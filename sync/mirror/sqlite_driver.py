"""The one SQLite library every reader and writer of the mirror uses (decision 0120).

The mirror's search index relies on FTS5's `secure-delete` option (SQLite 3.44) so that a
deleted conversation's terms leave the index segments at once (CONTRACT §11). The
interpreters here link SQLite 3.40, so the choice is made once, here: the standard
library's `sqlite3` when its SQLite is new enough, else `pysqlite3.dbapi2` (the
`pysqlite3-binary` wheel, a drop-in DB-API module built with a current SQLite) when it is
installed, else the standard library anyway, with `SECURE_DELETE` False: the mirror then
merges the whole index after a removal instead (`sync.mirror.transcripts`), slower but as clean.
Every connection to the mirror (`sync.mirror.store`'s, the first paint's reader,
`sync.mirror.check`, `sync.mirror.legacy`, `sync.repair`) is made here, so one SQLite library
touches the file.
"""

from __future__ import annotations

import os
import sqlite3 as _stdlib
from types import ModuleType
from typing import Any

#: FTS5 `secure-delete` arrived in SQLite 3.44.0.
SECURE_DELETE_VERSION = (3, 44, 0)


def _choose() -> ModuleType:
    if _stdlib.sqlite_version_info >= SECURE_DELETE_VERSION:
        return _stdlib
    try:
        from pysqlite3 import dbapi2  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        return _stdlib
    return dbapi2  # type: ignore[no-any-return,unused-ignore]


#: The DB-API module (`sqlite3`'s interface) the mirror is read and written with.
DBAPI: ModuleType = _choose()
#: The SQLite version behind `DBAPI`, as a tuple.
SQLITE_VERSION: tuple[int, ...] = tuple(DBAPI.sqlite_version_info)
#: Whether FTS5 can drop a deleted row's terms from its segments at once.
SECURE_DELETE: bool = SQLITE_VERSION >= SECURE_DELETE_VERSION
#: `DBAPI.Error`: catch this (not `sqlite3.Error`) around the mirror's raw connections;
#: pysqlite3's exception classes are its own.
Error: type[Exception] = DBAPI.Error
OperationalError: type[Exception] = DBAPI.OperationalError
DatabaseError: type[Exception] = DBAPI.DatabaseError
#: A connection of `DBAPI` (pysqlite3's class has the standard library's interface).
type Connection = _stdlib.Connection


def connect(database: str | os.PathLike[str], **kwargs: Any) -> _stdlib.Connection:
    """`sqlite3.connect` of the chosen library (its connections have the same methods)."""
    conn: _stdlib.Connection = DBAPI.connect(database, **kwargs)
    return conn


def describe() -> str:
    """The library and SQLite version in use, for logs and `converge --version` style output."""
    name = "pysqlite3" if DBAPI is not _stdlib else "sqlite3"
    return f"{name} (SQLite {'.'.join(map(str, SQLITE_VERSION))})"
