"""Artifact bytes outside the database, behind a small protocol.

Each artifact has its own object (`<session_id>/<artifact_id>`), never shared and never
content-addressed, so deleting one session's bytes can never take another's. The session id
in the locator lets the residue audit count a session's objects after its metadata is gone.
The fault switch (`available = False`) makes every delete fail, for the outbox scenarios.
The folder store is the default; `server_stub.storage.s3store` keeps the same objects in a bucket.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import Protocol

from server_stub.storage.private import DIR_MODE, private_dir, write_private


class ObjectStoreUnavailable(OSError):
    """The store refused an operation (the fault switch is down, or I/O failed). An OSError,
    as the folder store's own failures are: every caller that handles one handles both."""


class ObjectStore(Protocol):
    """What the server needs from a byte store."""

    available: bool

    def put(self, locator: str, data: bytes) -> None:
        """Store `data` under `locator` (a new object)."""

    def get(self, locator: str) -> bytes:
        """The bytes at `locator`; FileNotFoundError when absent."""

    def delete(self, locator: str) -> None:
        """Remove `locator`; deleting a missing object succeeds. Raises when unavailable."""

    def count(self, session_id: str) -> int:
        """How many objects belong to `session_id`'s artifacts."""

    def locators(self) -> list[str]:
        """Every object in the store, half-written ones included (the start-up sweep)."""

    def compact(self) -> None:
        """Make the store drop deleted bytes from its own files, where it can be asked to
        (a maintenance pass calls it; the folder store has nothing to do)."""


#: Suffix of an object being written (renamed into place when complete).
TMP_SUFFIX = ".tmp"


def locator_for(session_id: str, artifact_id: str) -> str:
    """The one object of one artifact."""
    return f"{session_id}/{artifact_id}"


class FilesystemObjectStore:
    """One file per object under a root folder (created when missing)."""

    def __init__(self, root: Path) -> None:
        self.root = private_dir(root)  # 0700, and every object 0600 (see `private_dir`)
        self.available = True
        self._lock = threading.Lock()

    def _path(self, locator: str) -> Path:
        parts = locator.split("/")
        if len(parts) != 2 or any(p in ("", ".", "..") for p in parts):
            raise ValueError(f"bad locator {locator!r}")
        return self.root / parts[0] / parts[1]

    def put(self, locator: str, data: bytes) -> None:
        path = self._path(locator)
        path.parent.mkdir(exist_ok=True, mode=DIR_MODE)
        tmp = path.with_name(path.name + TMP_SUFFIX)
        write_private(tmp, data)
        os.replace(tmp, path)

    def get(self, locator: str) -> bytes:
        return self._path(locator).read_bytes()

    def delete(self, locator: str) -> None:
        if not self.available:
            raise ObjectStoreUnavailable("object store is down (fault switch)")
        path = self._path(locator)
        path.with_name(path.name + TMP_SUFFIX).unlink(missing_ok=True)
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise ObjectStoreUnavailable(str(exc)) from exc
        with self._lock, contextlib.suppress(OSError):
            path.parent.rmdir()

    def count(self, session_id: str) -> int:
        return sum(
            1
            for p in _listing(self.root / session_id)
            if p.is_file() and not p.name.endswith(TMP_SUFFIX)
        )

    def compact(self) -> None:
        return None  # an unlinked file's blocks are the file system's (docs/server.md)

    def locators(self) -> list[str]:
        return sorted(
            f"{folder.name}/{p.name}"
            for folder in _listing(self.root)
            if folder.is_dir()
            for p in _listing(folder)
            if p.is_file()
        )


def _listing(folder: Path) -> list[Path]:
    """A folder's entries; none when it is missing. A delete removes a session's folder
    with its last object, so a folder found a moment ago may be gone when it is read."""
    try:
        return list(folder.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
