"""SQLite is served by one process: a second `converge-server` on the same file is refused.

Two processes on one SQLite file would each believe they own every active run (and fail the
other's at start-up), and neither would see the other's events until a poll. So the app
takes an exclusive `flock` on `<database>.lock` for its whole life; a second process (or a
second app in the same process) fails to start with a clear message instead of misbehaving.
The lock dies with the process (also on `kill -9`); the file itself stays.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from sqlalchemy import make_url


class DatabaseInUse(RuntimeError):
    """Another process already serves this SQLite database."""


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL (None for PostgreSQL or an in-memory database)."""
    if not url.startswith("sqlite"):
        return None
    database = make_url(url).database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database).expanduser()


class SqliteProcessLock:
    """The exclusive lock beside a SQLite database file."""

    def __init__(self, database: Path) -> None:
        self.database = database
        self.path = database.with_name(database.name + ".lock")
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise DatabaseInUse (never waits)."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise DatabaseInUse(
                f"the SQLite database {self.database} is already served by another "
                f"converge-server (pid {holder}); SQLite supports one server process: stop "
                "that one, or use PostgreSQL (--database postgresql+psycopg://...) to run several"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd

    def release(self) -> None:
        """Give the lock back (the file stays: removing it would race a new holder)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
