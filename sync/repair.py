"""Rebuild a damaged mirror from the server: `converge repair` and the window's Rebuild.

The mirror is a cache (ADR-0050 §8), so the way forward from a damaged file is to build a new
one from the server, never to patch the old: no row of the damaged file is kept, since none
of it can be trusted and the server confirms every row the new file holds. One thing in the
old file is not the server's to give back: the unconfirmed-delete marks (ids of
conversations the user deleted whose server delete was never answered, `sync.mirror.delete_marks`).
Those are ids, not content; they are salvaged when they can be read, marked again in the new
file, and their deletes retried (a 204 or the contract's 404 settles them). When they cannot
be read, the result says so: a conversation the user deleted may come back.

The new file is built beside the damaged one (`<mirror>.rebuild`, bound to the same account,
§9.3) and only a pass that walked the whole index replaces it, so a server that cannot be
reached leaves everything as it was. The damaged file is then deleted with its -wal and
-shm, not kept aside: it may hold the content of conversations deleted since (§9.2: deletion
leaves nothing behind), and nothing in it is used (ADR-0090). Cached artifact files belong
to the old file's index, which is gone with it: they are removed, and fetched again on use.

Close every other user of the mirror first (the window closes its engine before it calls
this): another process would keep writing to the file that is replaced.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from sync.delete.outcome import DeleteStatus
from sync.engine import SyncEngine
from sync.errors import MirrorError, MirrorUnwritable
from sync.events import TriggerReason
from sync.files.private_files import PRIVATE_FILE_MODE, tighten
from sync.mirror import sqlite_driver
from sync.mirror.check import find_damage
from sync.mirror.schema import open_read_only
from sync.profile.profile import Profile

log = logging.getLogger(__name__)

#: At most this many delete marks are salvaged (a real mirror holds a handful).
MAX_MARKS = 10_000
#: A salvaged id longer than this is not an id the server gave (the server's are ~30).
MAX_ID_LENGTH = 200
#: How long the retried deletes of salvaged marks may take; unanswered ones stay marked.
DELETE_RETRY_SECONDS = 25.0
REBUILD_SUFFIX = ".rebuild"
SIDE_FILES = ("-wal", "-shm", "-journal")


@dataclass(frozen=True)
class RepairResult:
    """What a repair did; `message` says it in a sentence or two for the user."""

    path: Path
    damage: str | None  # what the check found; None: the file was sound (or missing)
    rebuilt: bool
    rows: int = 0  # conversations in the new mirror, each confirmed by the server
    deleted: tuple[str, ...] = ()  # salvaged marks whose delete is now confirmed
    still_unconfirmed: tuple[str, ...] = ()  # salvaged marks kept, their delete unanswered
    marks_lost: bool = False  # the old file's delete marks could not be read
    removed_files: int = 0  # cached artifact files removed with the old index
    message: str = ""


def salvage_marks(path: Path) -> tuple[list[str], bool]:
    """The unconfirmed-delete ids the damaged file still yields, and whether it could be
    read at all. Read-only, bounded (count and length), ids only: never a row's content."""
    if not path.is_file():
        return [], True
    try:
        conn = open_read_only(path, timeout=1)
        try:
            cursor = conn.execute(
                "SELECT session_id FROM unconfirmed_deletes LIMIT ?", (MAX_MARKS,)
            )
            found = [row[0] for row in cursor.fetchall()]
        finally:
            conn.close()
    except (sqlite_driver.Error, UnicodeDecodeError) as exc:  # the latter: `sync.mirror.check`
        log.warning("repair: the delete marks could not be read: %s", exc)
        return [], False
    ids = {i for i in found if isinstance(i, str) and 0 < len(i) <= MAX_ID_LENGTH}
    if len(ids) < len(found):  # not ids the server gave: nothing to retry with them
        log.warning("repair: %d malformed delete mark(s) ignored", len(found) - len(ids))
    return sorted(ids), True


def unwritable(path: Path) -> str | None:
    """Why no rebuilt file can take `path`'s place, in one sentence, or None. Asked before
    anything is built: a folder at the name is no sound mirror, and a read-only folder
    would stop a rebuild halfway (a sound mirror there cannot be written by a sync either).
    `os.access` also answers for a read-only file system, where root's modes do not help."""
    if path.exists() and not path.is_file():
        return (
            f"The saved copy of your conversations ({path}) is a folder, not a file; move it "
            "out of the way and run `converge repair` again."
        )
    if not os.access(path.parent, os.W_OK | os.X_OK):
        return (
            f"The folder of the saved copy of your conversations ({path.parent}) is "
            "read-only; make it writable and run `converge repair` again."
        )
    return None


def _remove_file_set(path: Path) -> None:
    for name in (path, *(path.with_name(path.name + suffix) for suffix in SIDE_FILES)):
        name.unlink(missing_ok=True)


def _clear_cache(cache_dir: Path) -> int:
    """Remove the cached artifact files (their index went with the old mirror)."""
    removed = 0
    if not cache_dir.is_dir():
        return 0
    for entry in cache_dir.iterdir():
        if entry.is_file() and not entry.is_symlink():
            try:
                entry.unlink()
                removed += 1
            except OSError as exc:  # harmless: nothing indexes it any more
                log.warning("repair: could not remove a cached file: %s", exc)
    return removed


async def repair_mirror(profile: Profile, *, force: bool = False) -> RepairResult:
    """Rebuild the profile's mirror from the server when it is damaged (always, `force`).

    Raises the pass's `SyncError` when the server could not be walked: then nothing was
    changed (the damaged file stays, and the rebuild can be tried again). Raises
    ProfileError without a server or token, and MirrorUnwritable, before anything is
    written, when no rebuilt file could take the mirror's place. No failure leaves a
    rebuilt file behind.
    """
    profile.require_connection()
    await asyncio.to_thread(profile.ensure_dirs)
    path = profile.mirror_path
    if (problem := await asyncio.to_thread(unwritable, path)) is not None:
        raise MirrorUnwritable(problem)
    damage = await asyncio.to_thread(find_damage, path, thorough=True)
    if damage is None and not force and path.exists():
        return RepairResult(
            path,
            None,
            rebuilt=False,
            message=f"The saved copy of your conversations ({path}) is not damaged; "
            "nothing was changed.",
        )
    marks, readable = await asyncio.to_thread(salvage_marks, path)
    fresh = path.with_name(path.name + REBUILD_SUFFIX)
    await asyncio.to_thread(_remove_file_set, fresh)  # a rebuild interrupted before
    try:
        deleted, kept, rows = await _build(profile, fresh, marks)
        await asyncio.to_thread(_replace, fresh, path)
    except BaseException:
        await asyncio.to_thread(_remove_file_set, fresh)
        raise
    removed = await asyncio.to_thread(_clear_cache, profile.cache_dir)
    result = RepairResult(
        path,
        damage,
        rebuilt=True,
        rows=rows,
        deleted=deleted,
        still_unconfirmed=kept,
        marks_lost=not readable,
        removed_files=removed,
    )
    return _with_message(result)


async def _build(
    profile: Profile, fresh: Path, marks: list[str]
) -> tuple[tuple[str, ...], tuple[str, ...], int]:
    """Walk the server into a new mirror at `fresh`, mark the salvaged ids the server still
    lists and retry their deletes. Returns (confirmed deleted, still unconfirmed, rows)."""
    engine = await SyncEngine.open(profile, mirror_path=fresh)
    try:
        report = await engine.reconcile(TriggerReason.MANUAL)
        if report.error is not None:
            raise report.error
        if report.kept:  # a fresh mirror has nothing to keep; a point read was refused
            raise report.point_read_error or MirrorError("The server did not confirm the index.")
        present = [i for i in marks if await engine.row(i) is not None]
        for session_id in present:  # the mark before the retry: an unanswered one stays
            await engine.mark_delete_unconfirmed(session_id)
        confirmed = {i for i in marks if i not in present}  # the walk lacks them: deleted
        try:
            async with asyncio.timeout(DELETE_RETRY_SECONDS):
                outcomes = await engine.delete_many(present)
        except TimeoutError:
            outcomes = []
        confirmed |= {
            o.session_id
            for o in outcomes
            if o.status in (DeleteStatus.DELETED, DeleteStatus.ALREADY_GONE)
        }
        kept = tuple(sorted(await engine.unconfirmed_deletes()))
        rows = len(await engine.rows())
    finally:
        await engine.close()
    return tuple(sorted(confirmed)), kept, rows


def _replace(fresh: Path, path: Path) -> None:
    """Put the new file in the old one's place. The old -wal and -shm go first: SQLite would
    otherwise replay the old file's WAL onto the new one. The new file's WAL is folded into
    it first, whatever the closing engine managed (its checkpoint is best-effort): deleting
    a WAL that still held the rebuild would leave an empty mirror."""
    _fold_wal(fresh)
    for suffix in SIDE_FILES:
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    for suffix in SIDE_FILES:  # checkpointed above: nothing of the rebuild is in these
        fresh.with_name(fresh.name + suffix).unlink(missing_ok=True)
    try:
        os.replace(fresh, path)
    except OSError as exc:  # e.g. the old file is a mount point: the caller removes `fresh`
        reason = (exc.strerror or str(exc)).lower()
        raise MirrorError(
            f"The rebuilt copy could not take the place of {path}: {reason}."
        ) from exc
    tighten(path, PRIVATE_FILE_MODE)


def _fold_wal(fresh: Path) -> None:
    """Copy every frame of `fresh`'s WAL into it and leave journal mode DELETE (which
    checkpoints and removes the WAL); nobody else has the file open now. A checkpoint that
    cannot finish is a MirrorError: the damaged file stays until a rebuild succeeds."""
    try:
        conn = sqlite_driver.connect(str(fresh))
        try:
            mode = conn.execute("PRAGMA journal_mode=DELETE").fetchone()
        finally:
            conn.close()
    except sqlite_driver.Error as exc:
        raise MirrorError(f"The rebuilt copy could not be finished: {exc}") from exc
    if mode is None or str(mode[0]).lower() != "delete":
        raise MirrorError("The rebuilt copy could not be finished: its journal stayed open.")


def _with_message(result: RepairResult) -> RepairResult:
    words = [
        f"Rebuilt the saved copy of your conversations from the server: {result.rows} "
        "conversation(s), each confirmed by the server."
    ]
    if result.damage is not None:
        words.append("The damaged file was deleted.")
    if result.deleted:
        words.append(f"{len(result.deleted)} earlier delete(s) are now confirmed.")
    if result.still_unconfirmed:
        words.append(
            f"{len(result.still_unconfirmed)} earlier delete(s) are still not confirmed; "
            "they stay marked and are tried again."
        )
    if result.marks_lost:
        words.append(
            "The list of deletes the server had not confirmed could not be read from the "
            "damaged file: a conversation you deleted recently may come back; delete it again."
        )
    return dataclasses.replace(result, message=" ".join(words))
