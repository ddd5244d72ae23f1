"""Run ownership by lease, so several server processes can share one PostgreSQL.

A run is executed by the process that accepted it. That process writes a lease with the run
(`claim`, same transaction), renews the leases of everything it executes every heartbeat
(`renew`), and the run's terminal write removes it (`history.finish_run`). A run is orphaned
when its lease expired (its process stopped heart-beating: dead, hung or cut off), when its
owner is known dead (`owner_alive` answers False: on PostgreSQL, the owner no longer holds
its liveness advisory lock, server_stub.bus), or when it has no lease at all (written by a
version without leases). `fail_orphans` fails those runs, `run.failed` committed with the
status as `finish_run` always does, so their sessions become deletable again; it re-checks
each run under its session's row lock, so two processes reaping at once fail it once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from datetime import timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from server_stub import timestamps
from server_stub.db.engine import Database
from server_stub.db.models import ApprovalRow, RunLeaseRow, RunRow
from server_stub.history import ACTIVE_STATUSES, finish_run, lock_session

log = logging.getLogger(__name__)

INTERRUPTED = "interrupted: the server process running it stopped"


def expiry(seconds: float) -> str:
    """The contract timestamp `seconds` from now."""
    return timestamps.fmt(timestamps.utcnow() + timedelta(seconds=seconds))


def claim(s: Session, run_id: str, owner: str, seconds: float) -> None:
    """Lease `run_id` to `owner` for `seconds` (in the transaction that creates the run)."""
    insert = postgresql.insert if s.get_bind().dialect.name == "postgresql" else sqlite.insert
    stmt = insert(RunLeaseRow).values(run_id=run_id, owner=owner, expires_at=expiry(seconds))
    s.execute(
        stmt.on_conflict_do_update(
            index_elements=["run_id"],
            set_={"owner": stmt.excluded.owner, "expires_at": stmt.excluded.expires_at},
        )
    )


def release(s: Session, run_id: str) -> None:
    """Drop the run's lease (with its terminal write)."""
    s.execute(delete(RunLeaseRow).where(RunLeaseRow.run_id == run_id))


def renew(db: Database, owner: str, seconds: float) -> int:
    """Extend every lease `owner` holds; returns how many."""
    with db.write() as s:
        result = s.execute(
            update(RunLeaseRow).where(RunLeaseRow.owner == owner).values(expires_at=expiry(seconds))
        )
        return int(getattr(result, "rowcount", 0) or 0)


def _orphaned(lease: RunLeaseRow | None, now: str, me: str, alive: Callable[[str], bool]) -> bool:
    if lease is None:
        return True
    if lease.owner == me:
        return False  # executing here (a late heartbeat of our own is no death)
    return lease.expires_at < now or not alive(lease.owner)


def fail_orphans(db: Database, me: str, owner_alive: Callable[[str], bool]) -> list[str]:
    """Fail every active run whose process is gone (never one that `me` executes);
    returns their ids."""
    now = timestamps.now()
    with db.read() as s:
        rows = s.execute(
            select(RunRow.id, RunLeaseRow)
            .outerjoin(RunLeaseRow, RunLeaseRow.run_id == RunRow.id)
            .where(RunRow.status.in_(sorted(ACTIVE_STATUSES)))
        ).all()
    checked: dict[str, bool] = {}

    def alive(owner: str) -> bool:
        if owner not in checked:
            checked[owner] = owner_alive(owner)
        return checked[owner]

    candidates = [run_id for run_id, lease in rows if _orphaned(lease, now, me, alive)]
    failed = [run_id for run_id in candidates if _fail(db, run_id, now, me, alive)]
    if failed:
        log.warning("failed %d runs whose server process stopped", len(failed))
    return failed


def _fail(db: Database, run_id: str, now: str, me: str, alive: Callable[[str], bool]) -> bool:
    with db.write() as s:
        run = s.get(RunRow, run_id)
        if run is None:
            return False
        session = lock_session(s, run.session_id)
        s.refresh(run)
        lease = s.get(RunLeaseRow, run_id, populate_existing=True)
        if (
            session is None
            or run.status not in ACTIVE_STATUSES
            or not _orphaned(lease, now, me, alive)
        ):
            return False
        for approval in s.scalars(
            select(ApprovalRow).where(ApprovalRow.run_id == run_id, ApprovalRow.status == "pending")
        ):
            approval.status = "cancelled"
            approval.decided_at = timestamps.now()
        finish_run(s, session, run, "failed", {"error": INTERRUPTED})
        return True


async def keep_leases(
    db: Database,
    owner: str,
    owner_alive: Callable[[str], bool],
    on_failed: Callable[[str], None],
    executing: Callable[[], bool],
    *,
    lease: float,
    heartbeat: float,
    reap: float,
) -> None:
    """Until cancelled: renew this process's leases every `heartbeat` seconds (while it
    `executing()` runs: an idle process takes no write lock), and fail the runs of dead
    processes every `reap` seconds (`on_failed(run_id)` after each commit)."""
    next_renew = next_reap = time.monotonic()
    while True:
        now = time.monotonic()
        try:
            if now >= next_renew:
                next_renew = now + heartbeat
                if executing():
                    await asyncio.to_thread(renew, db, owner, lease)
            if now >= next_reap:
                next_reap = now + reap
                for run_id in await asyncio.to_thread(fail_orphans, db, owner, owner_alive):
                    on_failed(run_id)
        except Exception:
            log.exception("lease upkeep failed; retrying")
        await asyncio.sleep(max(0.0, min(next_renew, next_reap) - time.monotonic()))
