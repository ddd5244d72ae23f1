"""Purged content leaves the database files soon after a delete, off the request path.

A DELETE answers 204 as soon as its transaction has committed and its byte deletes were
tried; the checkpoint that empties SQLite's WAL (or the VACUUM of PostgreSQL's purged tables)
then runs here, in the background, so that a delete's latency does not include it and a
burst of deletes shares one scrub (debounced: see `Scrubber`). One scrub at a time; a purge
during a scrub causes exactly one more after it. A scrub that cannot finish (a reader holds
older WAL frames) is retried after a short pause, and every maintenance pass scrubs again, so
the window is bounded by the maintenance interval even under constant reading.
"""

from __future__ import annotations

import asyncio
import logging

from server_stub.db.engine import Database, ScrubResult
from server_stub.domain.purge import PURGED_TABLES

log = logging.getLogger(__name__)

#: Pause between retries of a checkpoint that a reader blocked, and how many retries before
#: leaving the rest to maintenance.
RETRY_PAUSE_SECONDS = 0.5
RETRIES = 5
#: The scrub runs once no purge came for this long ...
QUIET_SECONDS = 0.5
#: ... but at the latest this long after the first purge it covers.
MAX_DELAY_SECONDS = 2.0


def purged_tables() -> list[str]:
    """Every table a purge deletes from (the vacuum list on PostgreSQL)."""
    return list(PURGED_TABLES)


def scrub_now(db: Database) -> ScrubResult:
    """One scrub (blocking): checkpoint and truncate the WAL, or vacuum."""
    result = db.scrub(purged_tables())
    level = logging.DEBUG if result.complete else logging.WARNING
    log.log(
        level,
        "scrub %s in %.1f ms (%s)",
        "complete" if result.complete else "incomplete, will retry",
        result.seconds * 1000,
        result.note,
    )
    return result


class Scrubber:
    """Debounced, coalescing background scrubs on the app's event loop.

    A checkpoint that truncates the WAL blocks writers while it runs, so a checkpoint after
    every delete would make each delete of a burst wait for the previous one's. So the
    scrub waits for `QUIET_SECONDS` without a new purge, but never more than
    `MAX_DELAY_SECONDS` after the first purge it covers: content leaves the WAL soon after
    a delete, and a burst of deletes shares one checkpoint.
    """

    def __init__(self, db: Database, loop: asyncio.AbstractEventLoop) -> None:
        self.db = db
        self.loop = loop
        self._task: asyncio.Task[None] | None = None
        self._pending = False
        self._first = 0.0  # loop time of the first purge not yet scrubbed
        self._last = 0.0  # loop time of the latest purge
        self.completed = 0  # scrubs that finished (for tests and the control plane)

    def request(self) -> None:
        """Ask for a scrub soon (call on the loop's thread)."""
        now = self.loop.time()
        if not self._pending:
            self._first = now
        self._pending = True
        self._last = now
        if self._task is None or self._task.done():
            self._task = self.loop.create_task(self._run(), name="scrub")

    async def _run(self) -> None:
        while self._pending:
            due = min(self._last + QUIET_SECONDS, self._first + MAX_DELAY_SECONDS)
            delay = due - self.loop.time()
            if delay > 0:
                await asyncio.sleep(delay)  # a debounce timer: purges meanwhile move `due`
                continue
            self._pending = False
            await self._scrub_with_retries()

    async def _scrub_with_retries(self) -> None:
        for _attempt in range(RETRIES + 1):
            try:
                result = await asyncio.to_thread(scrub_now, self.db)
            except Exception:
                log.exception("scrub failed; maintenance will retry")
                return
            if result.complete:
                self.completed += 1
                return
            await asyncio.sleep(RETRY_PAUSE_SECONDS)

    async def shutdown(self) -> None:
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
