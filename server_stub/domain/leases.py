"""Run ownership by lease, so several server processes can share one PostgreSQL.

A run is executed by the process that accepted it. That process writes a lease with the run
(`claim`, same transaction), renews the leases of the runs its agents execute every
heartbeat (`renew`), and the run's terminal write removes it (`history.finish_run`). Expiry
is written and judged by the database's clock (`server_stub.domain.clock`), so a process whose own
clock is off neither loses its runs nor fails another's. A run is orphaned when its lease
expired (its process stopped heart-beating: dead, hung or cut off; or, for a run of this
very process, no agent executes it any more), when its owner is known dead (`owner_alive`
answers False: on PostgreSQL, the owner no longer holds its liveness advisory lock,
server_stub.domain.bus), or when it has no lease at all (written by a version without leases).
`fail_orphans` fails those runs, `run.failed` committed with the status as `finish_run`
always does, so their sessions become deletable again; it re-checks each run under its
session's row lock, so two processes reaping at once fail it once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Collection

from sqlalchemy import delete, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from server_stub.db.engine import Database
from server_stub.db.models import ApprovalRow, RunLeaseRow, RunRow
from server_stub.db.outage import OutageLog, is_outage
from server_stub.domain import clock, timestamps
from server_stub.domain.history import ACTIVE_STATUSES, finish_run, lock_session

log = logging.getLogger(__name__)

INTERRUPTED = "interrupted: the server process running it stopped"


def claim(s: Session, run_id: str, owner: str, seconds: float) -> None:
    """Lease `run_id` to `owner` for `seconds` (in the transaction that creates the run)."""
    insert = postgresql.insert if s.get_bind().dialect.name == "postgresql" else sqlite.insert
    stmt = insert(RunLeaseRow).values(
        run_id=run_id, owner=owner, expires_at=clock.later(s, seconds)
    )
    s.execute(
        stmt.on_conflict_do_update(
            index_elements=["run_id"],
            set_={"owner": stmt.excluded.owner, "expires_at": stmt.excluded.expires_at},
        )
    )


def release(s: Session, run_id: str) -> None:
    """Drop the run's lease (with its terminal write)."""
    s.execute(delete(RunLeaseRow).where(RunLeaseRow.run_id == run_id))


def renew(db: Database, owner: str, seconds: float, run_ids: Collection[str]) -> int:
    """Extend the leases `owner` holds on `run_ids` (the runs it executes now); returns how
    many. A run of `owner` it no longer executes (its agent ended without the terminal
    write) is not renewed: its lease expires and `fail_orphans` fails it."""
    wanted = sorted(run_ids)
    renewed = 0
    with db.write() as s:
        expires = clock.later(s, seconds)
        for start in range(0, len(wanted), 500):
            result = s.execute(
                update(RunLeaseRow)
                .where(
                    RunLeaseRow.owner == owner,
                    RunLeaseRow.run_id.in_(wanted[start : start + 500]),
                )
                .values(expires_at=expires)
            )
            renewed += int(getattr(result, "rowcount", 0) or 0)
    return renewed


Executing = Callable[[str], bool]


def _orphaned(
    lease: RunLeaseRow | None,
    now: str,
    me: str,
    alive: Callable[[str], bool],
    executing: Executing,
) -> bool:
    if lease is None:
        return True
    if lease.owner == me:
        # Ours: orphaned only when no agent of ours executes it any more and its lease ran
        # out (a run accepted a moment ago is leased before its agent task starts).
        return lease.expires_at < now and not executing(lease.run_id)
    return lease.expires_at < now or not alive(lease.owner)


def fail_orphans(
    db: Database,
    me: str,
    owner_alive: Callable[[str], bool],
    executing: Executing = lambda _run_id: True,
) -> list[str]:
    """Fail every active run whose process is gone, or that `me` leased but no longer
    executes (never one that `me` executes); returns their ids. Expiry is judged by the
    database's clock (`clock.database_now`), so a process whose own clock is off never
    fails another's runs."""
    with db.read() as s:
        now = clock.database_now(s)
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

    candidates = [run_id for run_id, lease in rows if _orphaned(lease, now, me, alive, executing)]
    failed = [run_id for run_id in candidates if _fail(db, run_id, me, alive, executing)]
    if failed:
        log.warning("failed %d runs whose server process stopped", len(failed))
    return failed


def _fail(
    db: Database, run_id: str, me: str, alive: Callable[[str], bool], executing: Executing
) -> bool:
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
            or not _orphaned(lease, clock.database_now(s), me, alive, executing)
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
    executing: Callable[[], frozenset[str]],
    *,
    lease: float,
    heartbeat: float,
    reap: float,
) -> None:
    """Until cancelled: renew the leases of the runs this process `executing()` every
    `heartbeat` seconds (an idle process takes no write lock), and fail orphaned runs every
    `reap` seconds (`on_failed(run_id)` after each commit).

    While the database is out, every process's leases run out; once it is back, reaping
    waits one lease period, so that the other processes renew theirs before anyone judges
    them dead (a run is not failed for an outage that its process survived)."""
    next_renew = next_reap = time.monotonic()
    outages = OutageLog(log)
    down = False
    while True:
        now = time.monotonic()
        try:
            if now >= next_renew:
                next_renew = now + heartbeat
                running = executing()
                if running:
                    await asyncio.to_thread(renew, db, owner, lease, running)
            if down:  # the first success after an outage
                down = False
                next_reap = max(next_reap, time.monotonic() + lease)
            if now >= next_reap:
                next_reap = now + reap
                mine = executing()
                for run_id in await asyncio.to_thread(
                    fail_orphans, db, owner, owner_alive, mine.__contains__
                ):
                    on_failed(run_id)
        except Exception as exc:
            if is_outage(exc):
                down = True
                outages.report("lease upkeep waits for the database", exc)
            else:
                log.exception("lease upkeep failed; retrying")
        await asyncio.sleep(max(0.0, min(next_renew, next_reap) - time.monotonic()))
