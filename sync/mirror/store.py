"""The SQLite mirror of a profile: session rows and the index of cached artifact bytes.

The mirror is never authoritative (ADR-0050 §8): it holds what the last reconcile saw, so the
window can draw at once and `converge ls` can answer offline.

The file format (tables, migrations, connection settings) is `sync.mirror.schema`. A mirror
whose version is newer than `SCHEMA_VERSION` was written by a newer program: it is refused
with `MirrorTooNew` before anything writes to it (the check opens the file read-only, before
the WAL pragma would touch it).

Threads: every method is synchronous and meant to run off the event loop
(`asyncio.to_thread`). Each call borrows a connection of its own for one transaction and
gives it back; no connection is used by two threads at once. Writes are serialised inside
the process by a lock and across processes by `BEGIN IMMEDIATE` plus `busy_timeout`. The
mirror is the only place that orders changes (decision 0209): a write that changes rows
takes the next change sequence inside its transaction (`sync.mirror.apply`), and
`changes_since(n)` answers what changed after n, whichever process or mirror object wrote
it.

This module owns the file, its connections, the write lock and transaction and the
post-removal scrub; what a transaction does is in the modules beside it: `sync.mirror.reader`
(reading rows), `sync.mirror.apply` (the write path), `sync.mirror.delete_marks`
(unconfirmed deletes), `sync.mirror.file_index` (cached artifact files) and
`sync.mirror.state` (the ETag and the connection identity).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from sync.errors import MirrorError, MirrorTooNew
from sync.files.private_files import PRIVATE_FILE_MODE, create_private_file, private_dir, tighten
from sync.mirror import sqlite_driver, title_index, transcripts
from sync.mirror.apply import ApplyResult, WalkEnd, leftovers, write_changes
from sync.mirror.check import check_mirror, damaged_error, find_damage
from sync.mirror.delete_marks import mark_unconfirmed, unconfirmed_ids
from sync.mirror.file_index import CachedFile, forget_files_of, read_cached_file, record_cached_file
from sync.mirror.legacy import IDENTITY_KEY
from sync.mirror.reader import (
    MirrorChanges,
    MirrorIds,
    count_rows,
    mirror_ids,
    query_changes,
    query_rows,
    rows_by_id,
    unseen_since,
)
from sync.mirror.schema import (
    SCHEMA_VERSION,
    busy_timeout_ms,
    connect,
    disk_full_error,
    is_locked,
    locked_error,
    migrate,
)
from sync.mirror.search import SEARCH_LIMIT, SearchHit, search
from sync.mirror.sqlite_driver import Connection
from sync.mirror.state import get_state, get_states, rebind_identity
from sync.mirror.transcripts import MirroredTranscript, TranscriptState
from sync.wire.models import Event, SessionView

log = logging.getLogger(__name__)

#: A checkpoint blocked by a reader is tried this many times, this many seconds apart.
CHECKPOINT_TRIES = 10
CHECKPOINT_PAUSE = 0.02
#: How long `close` waits for worker threads to give back the connections they hold.
CLOSE_WAIT = 10.0


class Mirror:
    """Synchronous access to one profile's mirror file; call it off the event loop."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        """Use `Mirror.open`; `read_only` (`converge ls` on a current file) writes nothing:
        its connections are `sync.mirror.schema.open_read_only`'s."""
        self.path = path
        self._read_only = read_only
        self._write_lock = threading.Lock()
        self._scrub_pending = False  # a removal whose WAL frames may still hold content
        # Title entries may be pending (`index_titles`): unknown at open (another process may
        # have left some), set by a write that leaves some, cleared once none is left.
        self._titles_pending = True
        self._closed = False
        self._idle = threading.Condition()  # guards the pools; notified as each comes back
        self._in_use = 0
        # Idle connections, the last given back first. Writes hold `_write_lock`, so at
        # most one write connection is ever made; reads make one per concurrent reader.
        self._writers: list[Connection] = []
        self._readers: list[Connection] = []

    @contextlib.contextmanager
    def _lease(self, pool: list[Connection]) -> Iterator[Connection]:
        """A connection of `pool` for the caller's thread, given back afterwards. Counted
        while out, so that `close` can wait for worker threads still inside the mirror; one
        given back after `close` is closed instead."""
        with self._idle:
            conn = pool.pop() if pool else None
            self._in_use += 1
        try:
            if conn is None:
                conn = connect(self.path, read_only=self._read_only)
            yield conn
        finally:
            with self._idle:
                self._in_use -= 1
                if conn is not None:
                    if self._closed:
                        conn.close()
                    else:
                        pool.append(conn)
                self._idle.notify_all()

    @contextlib.contextmanager
    def _transaction(self, pool: list[Connection], begin: str) -> Iterator[Connection]:
        with self._lease(pool) as conn:
            conn.execute(begin)
            try:
                yield conn
                conn.execute("COMMIT")
            finally:
                if conn.in_transaction:  # an exception, or a COMMIT that failed
                    conn.execute("ROLLBACK")

    @classmethod
    def open(cls, path: Path, *, create: bool = True) -> Mirror:
        """Open (creating and migrating when needed) the mirror at `path`.

        Raises MirrorTooNew, leaving the file untouched, when it comes from a newer schema,
        and MirrorDamaged, reading nothing more, when the file fails `sync.mirror.check`.
        """
        found = check_mirror(path)  # the version, read by the check's connection
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
            private_dir(path.parent)
        # Created (or tightened) 0600 before SQLite opens it: SQLite gives the -wal and -shm
        # files the database file's mode, whatever the umask (CONTRACT §10.1).
        try:
            create_private_file(path)
        except OSError as exc:
            raise MirrorError(f"Cannot create the mirror {path}: {exc.strerror or exc}.") from exc
        for suffix in ("-wal", "-shm"):
            tighten(path.with_name(path.name + suffix), PRIVATE_FILE_MODE)
        mirror = cls(path)
        try:
            if found < SCHEMA_VERSION:  # a current mirror opens without a write (`ls` reads
                mirror._migrate()  # while another process holds the write lock)
        except sqlite_driver.Error as exc:
            mirror.close()
            raise failure(
                path, exc, "open or upgrade", " It was left at its previous version."
            ) from exc
        except BaseException:
            mirror.close()
            raise
        return mirror

    def close(self) -> None:
        """Close every connection, once the worker threads still inside the mirror are out.

        `SyncEngine.close()` cancels passes whose worker threads may be mid-statement; a
        connection they hold would keep the file open after `close()` returned, so the
        closing checkpoint would give up and a rebuild could not take the file out of WAL
        (`sync.repair`). Waiting is bounded by `CLOSE_WAIT`: a stuck thread delays the
        shutdown, it does not hang it. Call it from a thread holding no connection.
        """
        with self._idle:
            if not self._idle.wait_for(lambda: self._in_use == 0, CLOSE_WAIT):
                log.warning(
                    "mirror close: %d connection(s) still in use after %.0f s; closing anyway",
                    self._in_use,
                    CLOSE_WAIT,
                )
        if self._scrub_pending:
            with contextlib.suppress(MirrorError):
                self.scrub()
        with self._idle:
            self._closed = True
            idle = [*self._writers, *self._readers]
            self._writers.clear()
            self._readers.clear()
        for conn in idle:
            conn.close()

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
        """A few quick tries, never a long wait: the write lock is held meanwhile, and a
        TRUNCATE checkpoint waiting in SQLite's busy handler also blocks other processes'
        writers. Readers of the mirror are short (a sidebar read), so a few short pauses
        usually see them go; otherwise the next write or `close` tries again."""
        try:
            with self._lease(self._writers) as raw:
                raw.execute("PRAGMA busy_timeout=0")
                try:
                    for _attempt in range(CHECKPOINT_TRIES):
                        busy, frames, copied = (
                            int(v)
                            for v in raw.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                        )
                        if not busy and frames == copied:
                            return True
                        time.sleep(CHECKPOINT_PAUSE)
                finally:
                    raw.execute(f"PRAGMA busy_timeout={busy_timeout_ms()}")
        except sqlite_driver.Error as exc:
            log.warning("mirror checkpoint failed: %s", exc)
            return False
        log.info("mirror checkpoint incomplete (a reader holds older frames); will retry")
        return False

    @contextlib.contextmanager
    def _writing(self) -> Iterator[Connection]:
        """One write transaction; a database failure (another process holding the lock past
        `busy_timeout`, a full disk) is a MirrorError with words, and nothing is written."""
        try:
            with self._write_lock, self._transaction(self._writers, "BEGIN IMMEDIATE") as conn:
                yield conn
        except sqlite_driver.Error as exc:
            raise failure(self.path, exc, "write") from exc

    @contextlib.contextmanager
    def _reading(self) -> Iterator[Connection]:
        """One read transaction; a database failure is a MirrorError with words (a damaged
        file: MirrorDamaged), never a raw database error."""
        try:
            with self._transaction(self._readers, "BEGIN") as conn:
                yield conn
        except sqlite_driver.Error as exc:
            raise failure(self.path, exc, "read") from exc

    # -- schema -----------------------------------------------------------------------------

    def _migrate(self) -> None:
        with self._write_lock, self._transaction(self._writers, "BEGIN IMMEDIATE") as conn:
            migrate(conn, self.path)

    def schema_version(self) -> int:
        with self._reading() as conn:
            return int(conn.execute("PRAGMA user_version").fetchone()[0])

    # -- reads ------------------------------------------------------------------------------

    def rows(self, filter_text: str = "") -> list[SessionView]:
        """Rows in sidebar order (updated_at DESC, id DESC), optionally filtered by title/id."""
        with self._reading() as conn:
            return query_rows(conn, filter_text)

    def changes_since(
        self, since: int | None, filter_text: str = "", limit: int | None = None
    ) -> MirrorChanges:
        """What changed after change sequence `since`, in one read (see `query_changes`):
        the rows to apply and the ids to remove for a view of `rows(filter_text)`, or the
        whole rows when `since` is None, too old, or more than `limit` changed."""
        with self._reading() as conn:
            return query_changes(conn, since, filter_text, limit)

    def get(self, session_id: str) -> SessionView | None:
        with self._reading() as conn:
            return rows_by_id(conn, [session_id]).get(session_id)

    def count(self) -> int:
        with self._reading() as conn:
            return count_rows(conn)

    def unseen_since(self, generation: float) -> list[str]:
        """Ids of rows no write or walk has touched since `generation` (`synced_at` below
        it): after a complete walk, the ones it did not list (`sync.reconcile.walk`)."""
        with self._reading() as conn:
            return unseen_since(conn, generation)

    def get_state(self, key: str) -> str | None:
        with self._reading() as conn:
            return get_state(conn, key)

    def get_states(self, keys: Sequence[str]) -> dict[str, str | None]:
        """`get_state` of each key, in one read transaction."""
        with self._reading() as conn:
            return get_states(conn, keys)

    def pass_start(
        self, keys: Sequence[str], ids_up_to: int = 0
    ) -> tuple[dict[str, str | None], int, MirrorIds | None]:
        """What a pass reads before its first request, in one read: the state `keys` (the
        ETag and the walk's position), the row count (a new walk's "about N") and, when
        there are rows but no more than `ids_up_to`, their ids (`MirrorIds`)."""
        with self._reading() as conn:
            state, rows = get_states(conn, keys), count_rows(conn)
            return state, rows, mirror_ids(conn) if 0 < rows <= ids_up_to else None

    def unconfirmed_deletes(self) -> set[str]:
        """Ids of rows whose delete was sent but never answered."""
        with self._reading() as conn:
            return unconfirmed_ids(conn)

    def walk_leftovers(
        self, generation: float | None, epoch: float | None = None
    ) -> tuple[set[str], list[str], list[str]]:
        """What a walk leaves to settle, in one read: the rows whose delete was never
        answered; after a walk of `generation` (None after a 304), the rows it did not see
        (`unseen_since`); and, when it found the index changed at `epoch`, the rows it saw
        only before then (`seen_before`)."""
        with self._reading() as conn:
            left = leftovers(conn, generation, epoch)
        return left.marked, left.unseen, left.older

    def mark_unconfirmed(self, session_id: str) -> None:
        """Mark a row whose delete may or may not have happened (kept until settled)."""
        now = time.time()
        with self._writing() as conn:
            mark_unconfirmed(conn, session_id, now)

    def cached_file(self, artifact_id: str) -> CachedFile | None:
        with self._reading() as conn:
            return read_cached_file(conn, artifact_id)

    # -- writes -----------------------------------------------------------------------------

    def apply(
        self,
        upserts: Sequence[SessionView] = (),
        removals: Sequence[str] = (),
        *,
        state: dict[str, str | None] | None = None,
        skip: Callable[[str], bool] | None = None,
        settle: Sequence[str] = (),
        seen_at: float | None = None,
        end: WalkEnd | None = None,
        scrub: bool = True,
    ) -> ApplyResult:
        """Upsert views and remove rows (with their artifact index) in ONE transaction.

        Rows are classified as inserted or updated against the mirror as it is inside this
        transaction, so a concurrent change is reported truthfully; an unchanged row is not
        rewritten. A write that changed rows returns the change sequence it stamped them
        with (`ApplyResult.seq`). `skip(id)` drops an upsert at write time (a session
        this device deleted since the walk saw it must not come back). `settle` names rows
        the server has just shown to exist: their unconfirmed-delete marks are cleared.
        `seen_at`: an index walk's generation, marking its rows seen (`sync.reconcile.walk`);
        `end`: the walk's last page, which concludes it when it leaves nothing unseen.
        `scrub=False`: a removal's WAL is left for the caller's `scrub()` (a pass tells its
        listeners first: the row is gone at the commit, and a checkpoint's copy and sync
        would hold the news back); until then `scrub_pending` says so, and the next write
        or `close` scrubs if the caller does not.
        """
        now = time.time()
        with self._writing() as conn:
            done = write_changes(
                conn,
                upserts,
                removals,
                now=now,
                state=state,
                skip=skip,
                settle=settle,
                seen_at=seen_at,
                end=end,
            )
            self._titles_pending = self._titles_pending or done.pended
        if done.removed or done.removed_files or self._scrub_pending:
            if scrub:
                self.scrub()
            else:
                self._scrub_pending = True
        return done

    @property
    def scrub_pending(self) -> bool:
        """A removal's WAL frames may still hold content (`scrub()` has not finished)."""
        return self._scrub_pending

    def bind_identity(self, identity: str) -> bool:
        """Record which server and token this mirror follows; on a change, forget the ETag.

        An ETag only means something to the server (and principal) that issued it. Returns
        True when the identity changed. Rows are left alone: the next pass point-reads the
        ones the new index lacks and prunes those that answer 404.
        """
        if self.get_state(IDENTITY_KEY) == identity:
            return False  # the usual case writes nothing: opening needs no write lock
        with self._writing() as conn:
            return rebind_identity(conn, identity)

    # -- transcripts (`sync.mirror.transcripts`, `sync.mirror.search`) -----------------------------

    def stale_transcripts(self, limit: int) -> list[TranscriptState]:
        """Conversations whose transcript is behind their row, newest first."""
        with self._reading() as conn:
            return transcripts.stale(conn, limit)

    def transcript_state(self, session_id: str) -> TranscriptState | None:
        with self._reading() as conn:
            return transcripts.state_of(conn, session_id)

    def transcript(self, session_id: str) -> list[Event]:
        """The mirrored events of a conversation, in sequence order (offline too)."""
        with self._reading() as conn:
            return transcripts.read(conn, session_id)

    def mirrored_transcript(self, session_id: str, after: int = 0) -> MirroredTranscript:
        """Events (those after sequence `after`) and state in one read transaction."""
        with self._reading() as conn:
            return MirroredTranscript(
                transcripts.read(conn, session_id, after), transcripts.state_of(conn, session_id)
            )

    def store_events(
        self, session_id: str, events: Sequence[Event], *, fetched_at: str | None
    ) -> bool:
        """Add fetched events (one transaction); False when the row is no longer mirrored."""
        with self._writing() as conn:
            return transcripts.store(conn, session_id, events, fetched_at=fetched_at)

    def index_titles(self) -> int:
        """Write the title entries a big write left pending (`title_index.index_pending`), one
        batch in one transaction; how many (0: none is left). Once none is left, this takes
        no transaction until one of this object's writes leaves more."""
        if not self._titles_pending:
            return 0
        with self._writing() as conn:
            written = title_index.index_pending(conn, title_index.PENDING_BATCH)
            self._titles_pending = written == title_index.PENDING_BATCH
            return written

    def store_events_held(
        self, session_id: str, events: Sequence[Event], *, fetched_at: str | None
    ) -> tuple[bool, int]:
        """`store_events`, and the bytes held after it (`transcripts.held_bytes`) read in
        its transaction: the content phase evicts only when they pass its budget, rather
        than take a write transaction after every conversation to find out."""
        with self._writing() as conn:
            kept = transcripts.store(conn, session_id, events, fetched_at=fetched_at)
            return kept, transcripts.held_bytes(conn)

    def search(self, query: str, limit: int | None = SEARCH_LIMIT) -> list[SearchHit]:
        with self._reading() as conn:
            return search(conn, query, limit)

    def evict_over_budget(self, budget: int) -> tuple[list[str], list[str]]:
        """Evict the least recently active transcripts, with their cached files' index
        entries, until what is held fits `budget` bytes; returns (evicted ids, file names
        for the caller to remove)."""
        with self._writing() as conn:
            ids = transcripts.over_budget(conn, budget)
            files = forget_files_of(conn, ids) if ids else []
            if ids:
                transcripts.evict(conn, ids)
        if ids:
            self.scrub()
        return ids, files

    def record_cached_file(self, entry: CachedFile) -> bool:
        """Index a cached file, only while its session is still mirrored; returns whether
        it was recorded.

        The check and the insert share the write transaction that a delete or a prune also
        takes, so a download that finishes after its session left the mirror records
        nothing (the caller then removes the file), and one that finished before is
        removed with the session. A session not mirrored yet (opened before the first
        sync saw it) may cache; one removed recently may not.
        """
        now = time.time()
        with self._writing() as conn:
            return record_cached_file(conn, entry, now)


def failure(path: Path, exc: Exception, doing: str, after: str = "") -> MirrorError:
    """The words for a database error met while `doing` something with the mirror: locked,
    a full disk, a damaged file (checked now: the error may be the first sign of it), or
    SQLite's own reason."""
    if is_locked(exc):
        return locked_error(path)
    if (full := disk_full_error(path)) is not None:
        return full
    # Damage `quick_check` passes: SQLite's "malformed" (an index entry astray), a text that
    # is not UTF-8 (the driver's "Could not decode to UTF-8 column …").
    thorough = "malformed" in str(exc) or "decode" in str(exc)
    if (reason := find_damage(path, thorough=thorough)) is not None:
        log.warning("mirror damaged: %s", reason)
        return damaged_error(path, reason)
    return MirrorError(f"Cannot {doing} the mirror {path}: {exc}.{after}")
