"""The mirror's index of cached artifact files: which file holds which artifact's bytes.

`sync.files.cache.ArtifactCache` keeps the bytes as files in the profile's cache folder; this
index, a table of the mirror, says which session each file belongs to, so removing a
session (a delete, a prune) removes its files in the same write transaction (§9.2). The
functions take the caller's connection and never commit: `sync.mirror.store.Mirror` owns the
transaction and its lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, delete, select
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from sync.mirror.schema import CachedArtifact, RemovedSession


@dataclass(frozen=True, slots=True)
class CachedFile:
    artifact_id: str
    session_id: str
    name: str
    media_type: str
    size: int
    sha256: str
    file_name: str


def read_cached_file(session: Session, artifact_id: str) -> CachedFile | None:
    rec = session.get(CachedArtifact, artifact_id)
    if rec is None:
        return None
    return CachedFile(
        rec.artifact_id,
        rec.session_id,
        rec.name,
        rec.media_type,
        rec.size,
        rec.sha256,
        rec.file_name,
    )


def record_cached_file(conn: Connection, entry: CachedFile, now: float) -> bool:
    """Index a cached file unless its session was removed recently; returns whether it was
    recorded (see `Mirror.record_cached_file` for why the check shares the transaction)."""
    values = {
        "artifact_id": entry.artifact_id,
        "session_id": entry.session_id,
        "name": entry.name,
        "media_type": entry.media_type,
        "size": entry.size,
        "sha256": entry.sha256,
        "file_name": entry.file_name,
        "cached_at": now,
    }
    stmt = sqlite_insert(CachedArtifact)
    stmt = stmt.on_conflict_do_update(
        index_elements=["artifact_id"],
        set_={k: stmt.excluded[k] for k in values if k != "artifact_id"},
    )
    removed = conn.execute(
        select(RemovedSession.session_id).where(RemovedSession.session_id == entry.session_id)
    ).first()
    if removed is not None:
        return False
    conn.execute(stmt, [values])
    return True


def forget_files_of(conn: Connection, session_ids: Sequence[str]) -> list[str]:
    """Drop the index entries of these sessions; returns their files' names (the caller
    removes the files once the transaction committed)."""
    files = list(
        conn.execute(
            select(CachedArtifact.file_name).where(CachedArtifact.session_id.in_(session_ids))
        ).scalars()
    )
    conn.execute(delete(CachedArtifact).where(CachedArtifact.session_id.in_(session_ids)))
    return files
