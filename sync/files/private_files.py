"""Every file the client writes: inside its folder, checked after resolution, owner-only.

Two rules of CONTRACT §10.1 meet here. A name never becomes a path by itself: `inside`
joins a name to a folder, resolves the result (following every symlink) and refuses
anything that is not strictly inside the resolved folder, so neither a `../` nor an absolute
path nor a symlink planted in the folder can move a write elsewhere. And whatever the umask,
a folder the client creates is 0700 and a file it writes is 0600: conversations, tokens'
fingerprints, logs and reports are the user's alone (`private_dir`, `write_private`,
`copy_private`, `write_private_at`, `private_opener`, `create_private_file`; the log file's
handler is `sync.files.private_log`).

Writes go to a temporary file (created exclusive and 0600 by `tempfile.mkstemp`) renamed
over the name: a rename replaces a symlink rather than writing through it, and a crash never
leaves half a file under the real name.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

from sync.errors import LocalFileError, UnsafePath

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def inside(folder: Path, name: str) -> Path:
    """`folder / name` resolved, or UnsafePath when that is not strictly inside the resolved
    `folder` (a `..`, an absolute or drive path, a NUL, a symlink pointing out)."""
    base = folder.resolve()
    try:
        if not name or "\0" in name:
            raise ValueError(name)
        candidate = (base / name).resolve()
    except (ValueError, OSError, RuntimeError):  # NUL, a symlink loop
        candidate = None
    if candidate is None or candidate == base or base not in candidate.parents:
        raise UnsafePath(
            f"Refused to write the file {name!r}: it would not be inside the folder {base}. "
            "Nothing was written there."
        )
    return candidate


def _chmod(path: Path, mode: int) -> None:
    try:
        os.chmod(path, mode, follow_symlinks=False)
    except NotImplementedError:  # a platform without lchmod: never follow, so skip links
        if not path.is_symlink():
            os.chmod(path, mode)


def private_dir(path: Path) -> Path:
    """Create `path` and any missing parents as 0700 (umask or not); folders that already
    exist keep their mode (the user's Documents stay as they are)."""
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:
            continue  # made by someone else meanwhile: theirs, not ours
        _chmod(folder, PRIVATE_DIR_MODE)
    return path


def tighten(path: Path, mode: int) -> None:
    """Set an existing file or folder of the client's own to `mode` (files written by an
    older version under umask 022); a path that is missing or not ours is left alone."""
    try:
        if path.exists() and not path.is_symlink():
            _chmod(path, mode)
    except OSError:
        pass


def private_opener(path: str, flags: int) -> int:
    """An `opener` for `open()`: the file is created 0600, an existing one is set to 0600,
    and a symlink at the name is refused (ELOOP) instead of followed."""
    fd = os.open(path, flags | _NOFOLLOW | _CLOEXEC, PRIVATE_FILE_MODE)
    try:
        if hasattr(os, "fchmod") and stat.S_IMODE(os.fstat(fd).st_mode) != PRIVATE_FILE_MODE:
            os.fchmod(fd, PRIVATE_FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def create_private_file(path: Path) -> None:
    """Create `path` empty and 0600 if it does not exist (SQLite then gives its -wal and
    -shm files the same mode as the database file); an existing file is tightened."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, PRIVATE_FILE_MODE)
    except FileExistsError:
        tighten(path, PRIVATE_FILE_MODE)
        return
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, PRIVATE_FILE_MODE)
    finally:
        os.close(fd)


def _write_via(folder: Path, name: str, fill: Callable[[IO[bytes]], object]) -> Path:
    private_dir(folder)
    target = inside(folder, name)
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".converge-", suffix=".tmp")
    except OSError as exc:
        raise _write_failed(target, exc) from exc
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, PRIVATE_FILE_MODE)
        with os.fdopen(fd, "wb") as fh:
            fill(fh)
        os.replace(tmp, target)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise _write_failed(target, exc) from exc
        raise
    return target


def _write_failed(target: Path, exc: OSError) -> LocalFileError:
    return LocalFileError(
        f"Could not write {target.name!r} in {target.parent}: {exc.strerror or exc}. "
        "Nothing was written under that name."
    )


def write_private(folder: Path, name: str, data: bytes | str) -> Path:
    """Write `data` (str as UTF-8) as `name` inside `folder`, atomically and 0600; returns
    the path written. UnsafePath if the name would land outside, LocalFileError if the disk
    refuses."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    return _write_via(folder, name, lambda fh: fh.write(payload))


def write_private_at(path: Path, data: bytes | str) -> None:
    """Write `data` (str as UTF-8) to `path`, a path the user named (a report for CI): a
    new file is 0600, an existing regular file is set to 0600 before it is truncated, and a
    symlink at that name is refused (ELOOP) instead of followed. Opened in place rather than
    renamed over, so that a device the user names (`/dev/stdout`) is written, not replaced.
    OSError as the disk gives it, for the caller's words."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | _NOFOLLOW | _CLOEXEC, PRIVATE_FILE_MODE)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(
                errno.ELOOP, "it is a symlink, and a report is never written through one", path
            ) from exc
        raise
    with os.fdopen(fd, "wb") as fh:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            if hasattr(os, "fchmod"):
                os.fchmod(fd, PRIVATE_FILE_MODE)
            fh.truncate(0)
        fh.write(payload)


def copy_private(source: Path, folder: Path, name: str) -> Path:
    """Copy the bytes of `source` to `name` inside `folder`, with `write_private`'s rules."""
    try:
        reader = source.open("rb")
    except OSError as exc:
        raise LocalFileError(
            f"Could not read {source.name!r}: {exc.strerror or exc}. Nothing was written."
        ) from exc
    with reader:
        return _write_via(folder, name, lambda fh: shutil.copyfileobj(reader, fh, 1 << 16))
