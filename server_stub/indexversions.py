"""This process's memory of each principal's index version, so that a conditional first page
on SQLite is answered 304 without opening a transaction.

Why it is correct only where it is used: a SQLite database is served by one process
(`server_stub.singleprocess`), and every commit that bumps a version goes through
`Database._transaction`, which calls `forget` for that principal right after the commit and
before the writer's request answers. So a version remembered here can only be stale between
a commit and its `forget`, and a reader that read the old version in that window cannot
store it: `remember` refuses a value read before the latest `forget` (the generation taken
with `generation()` before the read). On PostgreSQL other processes commit too, and their
notifications arrive a moment after their commit: a memory invalidated by them could let a
stale ETag through for that moment, so `enabled` is False there and every read goes to the
database (`server_stub.routes.sessions`).
"""

from __future__ import annotations

import threading

#: A bound on remembered principals (they come from the token table, so this is never hit
#: in practice; it keeps memory bounded whatever the configuration).
MAX_REMEMBERED = 10_000


class IndexVersions:
    """Remembered versions per (tenant, principal); thread-safe."""

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled
        self._lock = threading.Lock()
        self._versions: dict[tuple[str, str], int] = {}
        self._generation = 0

    def get(self, tenant: str, principal: str) -> int | None:
        """The remembered version, or None (unknown, or memory disabled)."""
        if not self.enabled:
            return None
        with self._lock:
            return self._versions.get((tenant, principal))

    def generation(self) -> int:
        """Take this before reading a version from the database; pass it to `remember`."""
        with self._lock:
            return self._generation

    def remember(self, tenant: str, principal: str, version: int, generation: int) -> None:
        """Keep `version`, read after `generation()` returned `generation`, unless something
        was forgotten since (then the value may predate that commit: it is dropped)."""
        if not self.enabled:
            return
        with self._lock:
            if generation != self._generation:
                return
            if len(self._versions) >= MAX_REMEMBERED:
                self._versions.clear()
            self._versions[(tenant, principal)] = version

    def forget(self, tenant: str, principal: str) -> None:
        """A commit changed the principal's index (("", ""): maybe any principal's)."""
        with self._lock:
            self._generation += 1
            if (tenant, principal) == ("", ""):
                self._versions.clear()
            else:
                self._versions.pop((tenant, principal), None)
