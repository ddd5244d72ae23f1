"""The mirror's index of cached artifact files: which file holds which artifact's bytes.

`sync.files.cache.ArtifactCache` keeps the bytes as files in the profile's cache folder; this
index, a table of the mirror, says which session each file belongs to, so removing a
session (a delete, a prune) removes its files in the same write transaction (§9.2). The
functions take the caller's connection and never commit: `sync.mirror.store.Mirror` owns the
transaction and its lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import astuple, dataclass, fields

from sync.mirror.reader import IN_CHUNK, chunks
from sync.mirror.sqlite_driver import Connection


@dataclass(frozen=True, slots=True)
class CachedFile:
    artifact_id: str
    session_id: str
    name: str
    media_type: str
    size: int
    sha256: str
    file_name: str


def read_cached_file(conn: Connection, artifact_id: str) -> CachedFile | None:
    row = conn.execute(_SELECT + " WHERE artifact_id = ?", (artifact_id,)).fetchone()
    return None if row is None else CachedFile(*row)


def record_cached_file(conn: Connection, entry: CachedFile, now: float) -> bool:
    """Index a cached file unless its session was removed recently; returns whether it was
    recorded (see `Mirror.record_cached_file` for why the check shares the transaction)."""
    removed = conn.execute(
        "SELECT 1 FROM removed_sessions WHERE session_id = ?", (entry.session_id,)
    ).fetchone()
    if removed is not None:
        return False
    conn.execute(
        f"INSERT OR REPLACE INTO artifacts ({', '.join(f.name for f in fields(CachedFile))},"
        " cached_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (*astuple(entry), now),
    )
    return True


#: The columns of a `CachedFile`, in its fields' order: `CachedFile(*row)` is safe.
_SELECT = f"SELECT {', '.join(f.name for f in fields(CachedFile))} FROM artifacts"


def forget_files_of(conn: Connection, session_ids: Sequence[str]) -> list[str]:
    """Drop the index entries of these sessions; returns their files' names (the caller
    removes the files once the transaction committed)."""
    files: list[str] = []
    for chunk in chunks(session_ids, IN_CHUNK):
        marks = ", ".join("?" * len(chunk))
        files += [
            str(r[0])
            for r in conn.execute(
                f"SELECT file_name FROM artifacts WHERE session_id IN ({marks})", chunk
            )
        ]
        conn.execute(f"DELETE FROM artifacts WHERE session_id IN ({marks})", chunk)
    return files
