"""This process's memory of each principal's index version, and of the first page rendered at
that version, so that on SQLite a conditional first page is answered 304 without opening a
transaction, and an unchanged first page is sent again without reading it again.

A first page is a function of the database's state, which the version names: every write
that changes what a page shows (a session created, deleted, retitled, a run started or
ended, an event) bumps the version in the same transaction. That is what the ETag already
promises (a 304 for an unchanged version), so the rendered bytes remembered with the
version they were read at are exactly as current as a 304 would be.

Why it is correct only where it is used: a SQLite database is served by one process
(`server_stub.storage.singleprocess`), and every commit that bumps a version goes through
`Database._transaction`, which calls `forget` for that principal right after the commit and
before the writer's request answers. So a version remembered here can only be stale between
a commit and its `forget`, and a reader that read the old version in that window cannot
store it: `remember` refuses a value read before the latest `forget` (the generation taken
with `generation()` before the read). On PostgreSQL other processes commit too, and their
notifications arrive a moment after their commit: a memory invalidated by them could let a
stale ETag through for that moment, so there versions are remembered only while this
process holds the index-cache lease (`server_stub.domain.indexlease`, decision 0190): `trust(until)`
and `distrust()`; every other read goes to the database (`server_stub.routes.sessions`).

Pages are kept on both backends: a page is served only for a version that was just read
from the database or is trusted, and a version names one state of the index (versions only
grow, and every change bumps it in its own transaction), so a page read after its version
was read at `v` holds exactly the state at `v` whenever the version is `v` again.
"""

from __future__ import annotations

import math
import threading
import time

#: A bound on remembered principals (they come from the token table, so this is never hit
#: in practice; it keeps memory bounded whatever the configuration).
MAX_REMEMBERED = 10_000
#: A bound on remembered first pages, all principals together (many full pages' worth).
MAX_PAGE_BYTES = 16 * 1024 * 1024


class IndexVersions:
    """Remembered versions per (tenant, principal); thread-safe."""

    def __init__(self, *, enabled: bool) -> None:
        #: Versions trusted for ever (SQLite); else only until `trust`'s deadline.
        self.enabled = enabled
        self._trusted_until = math.inf if enabled else 0.0
        self._lock = threading.Lock()
        self._versions: dict[tuple[str, str], int] = {}
        #: (version, limit, rendered body) of each principal's latest first page.
        self._pages: dict[tuple[str, str], tuple[int, int, bytes]] = {}
        self._page_bytes = 0
        self._generation = 0

    def trusted(self) -> bool:
        """Whether remembered versions may be used now."""
        return time.monotonic() < self._trusted_until

    def trust(self, until: float, *, clear: bool) -> None:
        """Use remembered versions until the monotonic time `until` (the lease's deadline);
        `clear`: forget every version first (and refuse values read before now)."""
        with self._lock:
            if clear:
                self._generation += 1
                self._versions.clear()
            self._trusted_until = until

    def distrust(self) -> None:
        """Stop using remembered versions now, and forget them (and refuse values read before
        now). Remembered pages stay: they are served only for a version read or trusted."""
        with self._lock:
            self._trusted_until = 0.0
            self._generation += 1
            self._versions.clear()

    def get(self, tenant: str, principal: str) -> int | None:
        """The remembered version, or None (unknown, or not trusted now)."""
        if not self.trusted():
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
        if not self.trusted():
            return
        with self._lock:
            if generation != self._generation:
                return
            if len(self._versions) >= MAX_REMEMBERED:
                self._versions.clear()
            self._versions[(tenant, principal)] = version

    def page(self, tenant: str, principal: str, version: int, limit: int) -> bytes | None:
        """The first page of `limit` rendered at `version`, if remembered."""
        with self._lock:
            kept = self._pages.get((tenant, principal))
        if kept is None or kept[:2] != (version, limit):
            return None
        return kept[2]

    def page_version(self, tenant: str, principal: str, limit: int) -> int | None:
        """The version of the first page of `limit` remembered for this principal, if any."""
        with self._lock:
            kept = self._pages.get((tenant, principal))
        return kept[0] if kept is not None and kept[1] == limit else None

    def remember_page(
        self, tenant: str, principal: str, version: int, limit: int, body: bytes, generation: int
    ) -> None:
        """Keep a first page read at `version` (after `generation()` returned `generation`),
        unless something was forgotten since; one page per principal, the latest."""
        if len(body) > MAX_PAGE_BYTES:
            return
        with self._lock:
            if generation != self._generation:
                return
            self._drop_page((tenant, principal))
            if self._page_bytes + len(body) > MAX_PAGE_BYTES:
                self._pages.clear()
                self._page_bytes = 0
            self._pages[(tenant, principal)] = (version, limit, body)
            self._page_bytes += len(body)

    def forget(self, tenant: str, principal: str) -> None:
        """A commit changed the principal's index (("", ""): maybe any principal's)."""
        with self._lock:
            self._generation += 1
            if (tenant, principal) == ("", ""):
                self._versions.clear()
                self._pages.clear()
                self._page_bytes = 0
            else:
                self._versions.pop((tenant, principal), None)
                self._drop_page((tenant, principal))

    def _drop_page(self, key: tuple[str, str]) -> None:
        kept = self._pages.pop(key, None)
        if kept is not None:
            self._page_bytes -= len(kept[2])
