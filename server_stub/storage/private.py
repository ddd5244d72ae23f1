"""Files and folders only the server's user may read, whatever the umask.

Under the common umask 022 the database, its WAL (which holds deleted content until a
checkpoint, PITFALLS §10) and the artifact bytes would be world-readable. Everything the server
creates goes through these helpers: folders 0700, files 0600, set explicitly (`chmod`) so an
existing file from an older run is tightened too. SQLite creates its `-wal` and `-shm` with
the mode of the database file, so a 0600 database gives 0600 companions.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600
#: The files SQLite keeps beside a database (journal, WAL, shared memory).
SQLITE_COMPANIONS = ("-journal", "-wal", "-shm")


def private_dir(path: Path) -> Path:
    """Create `path` (and missing parents) and make `path` itself 0700.

    Only the folder named is tightened: parents that already existed belong to the user
    (a home directory, `/tmp`) and are left as they are."""
    path.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    os.chmod(path, DIR_MODE)
    return path


def ensure_parent(path: Path) -> None:
    """Create the folder of `path` when missing, 0700 (an existing one is left alone)."""
    if not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)


def private_sqlite_file(path: Path) -> None:
    """Create the SQLite database file 0600 (or tighten an existing one and its companions)
    before SQLite opens it, so the WAL and shared-memory files inherit 0600."""
    ensure_parent(path)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
    for suffix in SQLITE_COMPANIONS:
        with contextlib.suppress(FileNotFoundError):
            os.chmod(path.with_name(path.name + suffix), FILE_MODE)


def write_private(path: Path, data: bytes) -> None:
    """Write `data` to `path` as a 0600 file (created, or truncated and tightened)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    finally:
        os.close(fd)
