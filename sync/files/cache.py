"""Artifact bytes cached as files in the profile folder, indexed in the mirror.

Bytes are verified against the artifact metadata's sha256 before they are kept, written to a
temporary file and renamed into place, so a crash never leaves a half file under a real name.
The file's name comes from the id, made safe (`sync.files.safe_names`), and every path,
the ones the mirror's index names included, is checked to be inside the cache folder
(`sync.files.private_files`); the folder is 0700 and its files 0600. The files die with
their session (server-first delete, or a prune after a confirmed 404).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Sequence
from pathlib import Path

from sync.api.client import ApiClient
from sync.errors import CacheError, ConversationGone, IntegrityError, LocalFileError, UnsafePath
from sync.files.private_files import inside, write_private
from sync.files.safe_names import safe_file_name
from sync.mirror.file_index import CachedFile
from sync.mirror.store import Mirror

log = logging.getLogger(__name__)


def file_name_for(artifact_id: str) -> str:
    """A file name derived from the opaque id (never from the user-controlled name); the
    digest keeps two ids apart that sanitise to the same text."""
    safe = safe_file_name(artifact_id, "artifact", max_bytes=80)
    digest = hashlib.sha256(artifact_id.encode()).hexdigest()[:12]
    return f"{safe}-{digest}.bin"


def remove_cached_files(cache_dir: Path | None, names: Sequence[str]) -> None:
    if cache_dir is None:
        return
    for name in names:
        try:
            inside(cache_dir, name).unlink(missing_ok=True)
        except UnsafePath:  # an index row edited to name a file elsewhere: never touched
            log.warning("refused to remove a cached file outside the cache folder")
        except OSError as exc:  # a leftover file is harmless; its index row is gone
            log.warning("could not remove cached file %s: %s", name, exc)


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def _verified(folder: Path, name: str, sha256: str) -> Path | None:
    """The cached file the index names, if it is inside the folder and its bytes match."""
    try:
        path = inside(folder, name)
    except UnsafePath:
        return None
    return path if path.is_file() and _sha256_file(path) == sha256 else None


class ArtifactCache:
    def __init__(self, api: ApiClient, mirror: Mirror, cache_dir: Path) -> None:
        self.api = api
        self.mirror = mirror
        self.cache_dir = cache_dir

    async def held(self, artifact_id: str) -> tuple[CachedFile, Path] | None:
        """The artifact's index entry and verified bytes if this device holds them; never
        asks the server (an export offline, CONTRACT §11)."""
        entry = await asyncio.to_thread(self.mirror.cached_file, artifact_id)
        if entry is None:
            return None
        cached = await asyncio.to_thread(_verified, self.cache_dir, entry.file_name, entry.sha256)
        return None if cached is None else (entry, cached)

    async def file(self, artifact_id: str) -> Path:
        """The path of the artifact's verified bytes, downloading them on first use."""
        if (held := await self.held(artifact_id)) is not None:
            return held[1]
        meta = await self.api.get_artifact(artifact_id)
        data = await self.api.artifact_content(artifact_id, size=meta.size)
        digest = hashlib.sha256(data).hexdigest()
        if digest.lower() != meta.sha256.lower():
            raise IntegrityError(
                f"The bytes of artifact {meta.name!r} do not match their checksum; "
                "they were not kept."
            )
        name = file_name_for(artifact_id)
        try:
            path = await asyncio.to_thread(write_private, self.cache_dir, name, data)
        except (OSError, LocalFileError) as exc:  # ENOSPC, EACCES...: no temporary file left
            cause = exc if isinstance(exc, OSError) else exc.__cause__
            reason = cause.strerror if isinstance(cause, OSError) else None
            raise CacheError(
                f"Could not save the artifact {meta.name!r} in the cache folder "
                f"{self.cache_dir}: {reason or exc}. Nothing was kept; free some space "
                "(or fix the folder's permissions) and try again."
            ) from exc
        recorded = await asyncio.to_thread(
            self.mirror.record_cached_file,
            CachedFile(
                artifact_id=meta.id,
                session_id=meta.session_id,
                name=meta.name,
                media_type=meta.media_type,
                size=meta.size,
                sha256=meta.sha256.lower(),
                file_name=name,
            ),
        )
        if not recorded:
            # The conversation left the mirror (deleted or pruned) while the bytes were on
            # their way: keep nothing of it (CONTRACT §9.2).
            await asyncio.to_thread(remove_cached_files, self.cache_dir, [name])
            raise ConversationGone(
                "This conversation is no longer in your history (it was deleted); its file "
                "was not kept."
            )
        return path
