"""Artifact bytes cached as files in the profile folder, indexed in the mirror.

Bytes are verified against the artifact metadata's sha256 before they are kept, written to a
temporary file and renamed into place, so a crash never leaves a half file under a real name.
The files die with their session (server-first delete, or a prune after a confirmed 404).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

from sync.api import ApiClient
from sync.errors import CacheError, ConversationGone, IntegrityError
from sync.file_index import CachedFile
from sync.mirror import Mirror

log = logging.getLogger(__name__)

_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


def file_name_for(artifact_id: str) -> str:
    """A file name derived from the opaque id (never from the user-controlled name)."""
    safe = _SAFE.sub("_", artifact_id)
    digest = hashlib.sha256(artifact_id.encode()).hexdigest()[:12]
    return f"{safe[:80]}-{digest}.bin"


def remove_cached_files(cache_dir: Path | None, names: Sequence[str]) -> None:
    if cache_dir is None:
        return
    for name in names:
        try:
            (cache_dir / name).unlink(missing_ok=True)
        except OSError as exc:  # a leftover file is harmless; its index row is gone
            log.warning("could not remove cached file %s: %s", name, exc)


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def _write_atomically(folder: Path, name: str, data: bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".dl-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        target = folder / name
        os.replace(tmp, target)
        return target
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class ArtifactCache:
    def __init__(self, api: ApiClient, mirror: Mirror, cache_dir: Path) -> None:
        self.api = api
        self.mirror = mirror
        self.cache_dir = cache_dir

    async def file(self, artifact_id: str) -> Path:
        """The path of the artifact's verified bytes, downloading them on first use."""
        entry = await asyncio.to_thread(self.mirror.cached_file, artifact_id)
        if entry is not None:
            path = self.cache_dir / entry.file_name
            ok = await asyncio.to_thread(
                lambda: path.exists() and _sha256_file(path) == entry.sha256
            )
            if ok:
                return path
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
            path = await asyncio.to_thread(_write_atomically, self.cache_dir, name, data)
        except OSError as exc:  # ENOSPC, EACCES...: the temporary file is already gone
            raise CacheError(
                f"Could not save the artifact {meta.name!r} in the cache folder "
                f"{self.cache_dir}: {exc.strerror or exc}. Nothing was kept; free some space "
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
