"""Purged content leaves the database files soon after a delete, off the request path.

A DELETE answers 204 as soon as its transaction has committed and its byte deletes were
tried; the checkpoint that empties SQLite's WAL (or the VACUUM of PostgreSQL's purged tables)
then runs here, in the background, so that a delete's latency does not include it and a
burst of deletes shares one scrub. Requests coalesce: one scrub at a time, and a request
during a scrub causes exactly one more after it. A scrub that cannot finish (a reader holds
older WAL frames) is retried after a short pause, and every maintenance pass scrubs again, so
the window is bounded by the maintenance interval even under constant reading.
"""

from __future__ import annotations

import asyncio
import logging

from server_stub.db.engine import Database, ScrubResult
from server_stub.db.models import Base
from server_stub.purge import PURGED_MODELS

log = logging.getLogger(__name__)

#: Pause between retries of a checkpoint that a reader blocked, and how many retries before
#: leaving the rest to maintenance.
RETRY_PAUSE_SECONDS = 0.5
RETRIES = 5


def purged_tables() -> list[str]:
    """Every table a purge deletes from (the vacuum list on PostgreSQL)."""
    return sorted({model.__tablename__ for model in PURGED_MODELS} & set(Base.metadata.tables))


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
    """Coalescing background scrubs on the app's event loop."""

    def __init__(self, db: Database, loop: asyncio.AbstractEventLoop) -> None:
        self.db = db
        self.loop = loop
        self._task: asyncio.Task[None] | None = None
        self._again = False
        self.completed = 0  # scrubs that finished (for tests and the control plane)

    def request(self) -> None:
        """Ask for a scrub soon (call on the loop's thread)."""
        if self._task is not None and not self._task.done():
            self._again = True
            return
        self._task = self.loop.create_task(self._run(), name="scrub")

    async def _run(self) -> None:
        while True:
            self._again = False
            for _attempt in range(RETRIES + 1):
                try:
                    result = await asyncio.to_thread(scrub_now, self.db)
                except Exception:
                    log.exception("scrub failed; maintenance will retry")
                    break
                if result.complete:
                    self.completed += 1
                    break
                await asyncio.sleep(RETRY_PAUSE_SECONDS)
            if not self._again:
                return

    async def idle(self) -> None:
        """Wait until no scrub is running (tests, shutdown)."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)

    async def shutdown(self) -> None:
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
