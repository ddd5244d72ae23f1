"""Server-first delete (CONTRACT §7, ADR-0050 §3–§4 and §8).

The local row and its cached bytes leave the mirror only after the server answers 204, or
the contract's own 404 (the envelope's `not_found`: the server confirms the session is
absent; a bare 404 from a proxy or a wrong URL proves nothing, §9.3). 409 keeps the row and
names the active run: a delete never cancels a run by itself; `stop_run_and_delete` is the
separate, explicit action that cancels, waits until the run has ended (completion must be
observed), then deletes. A request that may have reached the server but whose answer was
lost keeps the row, marked "not confirmed" until a retry or a reconcile settles it (§9.2);
anything else keeps the row and says that nothing was deleted.

The local removal's result goes to `on_applied` right after it commits (the engine
announces it with the change sequence it took).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from sync import wording
from sync.delete.outcome import DeleteOutcome, DeleteStatus
from sync.errors import (
    ActiveRunExists,
    ApiError,
    ConnectionFailed,
    MirrorError,
    NetworkError,
    NotFound,
    SyncError,
    loggable,
)
from sync.files.cache import remove_cached_files
from sync.mirror.apply import ApplyResult
from sync.mirror.store import Mirror
from sync.reconcile.ports import SessionIndexApi

log = logging.getLogger(__name__)


def may_have_happened(error: SyncError) -> bool:
    """Whether a failed DELETE may still have deleted (CONTRACT §9.2: say "not confirmed").

    A connection that was never made had no effect; neither had an answer from the server
    itself (401, 403, 500, 503: it refused or rolled back). A request sent and then cut off,
    or a gateway's 502/504 (the request may have reached the server behind it), might have.
    """
    if isinstance(error, ConnectionFailed):
        return False
    if isinstance(error, NetworkError):
        return True
    return isinstance(error, ApiError) and error.status in (502, 504)


class DeleteService:
    def __init__(
        self,
        api: SessionIndexApi,
        mirror: Mirror,
        cache_dir: Path | None,
        *,
        on_removed: Callable[[str], None] | None = None,
        concurrency: int = 4,
        on_applied: Callable[[ApplyResult], None] | None = None,
    ) -> None:
        self.api = api
        self.mirror = mirror
        self.cache_dir = cache_dir
        self._on_removed = on_removed  # before the write: the id joins the engine's skip set
        self._on_applied = on_applied  # right after the commit
        self._limit = asyncio.Semaphore(max(1, concurrency))

    async def _remove_locally(self, session_id: str) -> int:
        """Remove the row and its cached bytes; returns the write's change sequence."""
        if self._on_removed is not None:
            self._on_removed(session_id)
        applied = await asyncio.to_thread(self.mirror.apply, (), [session_id])
        if self._on_applied is not None:
            self._on_applied(applied)
        await asyncio.to_thread(remove_cached_files, self.cache_dir, applied.removed_files)
        return applied.seq

    async def delete(self, session_id: str) -> DeleteOutcome:
        try:
            await self.api.delete_session(session_id)
        except NotFound:  # only the contract's own 404 (CONTRACT §9.3, sync.errors)
            doubt = await self._index_unreachable()
            if doubt is not None:
                return DeleteOutcome(
                    session_id,
                    DeleteStatus.FAILED,
                    wording.nothing_deleted(
                        "the server answered 404, but that address does not serve this "
                        f"account's history ({doubt.message.rstrip('.')})."
                    ),
                    error=doubt,
                )
            return await self._confirmed(
                session_id,
                DeleteStatus.ALREADY_GONE,
                "The conversation was already gone from the server; removed here too.",
            )
        except ActiveRunExists as exc:
            return DeleteOutcome(
                session_id,
                DeleteStatus.ACTIVE_RUN,
                wording.run_in_progress(exc.active_run_id),
                active_run_id=exc.active_run_id,
                error=exc,
            )
        except SyncError as exc:
            log.info("delete %s failed: %s", session_id, loggable(exc))
            if may_have_happened(exc):
                return await self._unconfirmed(session_id, exc)
            return DeleteOutcome(
                session_id, DeleteStatus.FAILED, wording.nothing_deleted(exc.message), error=exc
            )
        return await self._confirmed(
            session_id, DeleteStatus.DELETED, "The conversation was deleted."
        )

    async def _index_unreachable(self) -> SyncError | None:
        """A 404 proves absence only from a server that serves the index at this base URL:
        a wrong base URL on a Converge server answers the envelope's 404 to every path
        (unknown route). One index request tells the two apart; None when it answered."""
        try:
            await self.api.list_sessions(limit=1)
        except SyncError as exc:
            return exc
        return None

    async def _confirmed(
        self, session_id: str, status: DeleteStatus, message: str
    ) -> DeleteOutcome:
        """The server confirmed the session is gone: remove the row; if the mirror cannot be
        written, say that the server delete happened all the same."""
        try:
            seq = await self._remove_locally(session_id)
        except MirrorError as exc:
            log.warning(
                "delete %s: server confirmed, mirror not written: %s", session_id, loggable(exc)
            )
            return DeleteOutcome(
                session_id,
                DeleteStatus.SERVER_ONLY,
                wording.deleted_on_server_only(exc.message),
                error=exc,
            )
        return DeleteOutcome(session_id, status, message, seq=seq)

    async def _unconfirmed(self, session_id: str, exc: SyncError) -> DeleteOutcome:
        """The request may have reached the server: keep the row, marked, and say so."""
        try:
            await asyncio.to_thread(self.mirror.mark_unconfirmed, session_id)
        except MirrorError as mark_error:  # the words stay true; only the mark is missing
            log.warning(
                "delete %s: could not mark as unconfirmed: %s", session_id, loggable(mark_error)
            )
        return DeleteOutcome(
            session_id,
            DeleteStatus.UNCONFIRMED,
            wording.delete_not_confirmed(exc.message),
            error=exc,
        )

    async def delete_many(self, ids: Sequence[str]) -> list[DeleteOutcome]:
        """One outcome per id, in the given order; at most `concurrency` requests at once."""

        async def bounded(sid: str) -> DeleteOutcome:
            async with self._limit:
                return await self.delete(sid)

        unique = list(dict.fromkeys(ids))
        outcomes = await asyncio.gather(*(bounded(sid) for sid in unique))
        by_id = dict(zip(unique, outcomes, strict=True))
        return [by_id[sid] for sid in ids]

    async def wait_for_run_end(self, run_id: str, *, deadline: float, poll: float = 0.2) -> bool:
        """Poll `GET /v1/runs/{id}` until the run is terminal; False when the deadline passes.

        A terminal status means every write of the run has committed (CONTRACT §2), so the
        purge cannot race the worker.
        """
        while True:
            try:
                run = await self.api.get_run(run_id)
                if run.is_terminal:
                    return True
            except NotFound:
                return True  # the run (and its session) is already gone
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(min(poll, max(0.0, deadline - time.monotonic())))

    async def stop_run_and_delete(
        self, session_id: str, *, run_id: str | None = None, timeout: float = 30.0
    ) -> DeleteOutcome:
        """The explicit "Stop the run, then delete": cancel, observe the end, then delete."""
        deadline = time.monotonic() + timeout
        try:
            if run_id is None:
                run_id = (await self.api.get_session(session_id)).active_run_id
            if run_id is not None:
                await self.api.cancel_run(run_id)
                if not await self.wait_for_run_end(run_id, deadline=deadline):
                    return DeleteOutcome(
                        session_id,
                        DeleteStatus.FAILED,
                        wording.nothing_deleted(
                            f"the run {run_id} did not stop within {timeout:.0f} s."
                        ),
                        active_run_id=run_id,
                    )
        except NotFound:
            pass  # the delete below answers 204 (tombstone) or 404; both remove the row
        except SyncError as exc:
            return DeleteOutcome(
                session_id, DeleteStatus.FAILED, wording.nothing_deleted(exc.message), error=exc
            )
        return await self.delete(session_id)
