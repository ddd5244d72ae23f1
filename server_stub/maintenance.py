"""Maintenance: retry queued byte deletes until they succeed, and consolidate memories.

At start-up only, `sweep_orphan_objects` removes byte objects that no artifact row and no
outbox row names: the agent stores an artifact's bytes before it commits the artifact's row
(so metadata never points at missing bytes), and a process killed between the two leaves
bytes nobody refers to, which no purge would ever find. It must not run while agents run (a
put in flight has no row yet), hence start-up, before any run starts.

Consolidation writes one record per (principal, source session) for memories not yet
consolidated, so every record cites exactly one source session and leaves with it.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict

from sqlalchemy import select

from server_stub import ids, timestamps
from server_stub.db.engine import Database
from server_stub.db.models import ArtifactRow, ConsolidationRecordRow, DeletionOutboxRow, MemoryRow
from server_stub.objectstore import ObjectStore, ObjectStoreUnavailable
from server_stub.purge import flush_outbox

log = logging.getLogger(__name__)


def consolidate(db: Database) -> int:
    """Consolidate pending memories; returns how many records were written."""
    with db.write() as s:
        pending = list(s.scalars(select(MemoryRow).where(MemoryRow.consolidated_at.is_(None))))
        groups: dict[tuple[str, str, str], list[MemoryRow]] = defaultdict(list)
        for memory in pending:
            groups[(memory.tenant, memory.principal, memory.source_session_id)].append(memory)
        now = timestamps.now()
        for (tenant, principal, session_id), memories in groups.items():
            s.add(
                ConsolidationRecordRow(
                    id=ids.new_id("cns"),
                    tenant=tenant,
                    principal=principal,
                    source_session_id=session_id,
                    memory_count=len(memories),
                    created_at=now,
                )
            )
            for memory in memories:
                memory.consolidated_at = now
        return len(groups)


def sweep_orphan_objects(db: Database, store: ObjectStore) -> int:
    """Remove objects no artifact row or outbox row names (start-up only); returns how many."""
    found = store.locators()
    if not found:
        return 0
    with db.read() as s:
        known = set(s.scalars(select(ArtifactRow.locator)))
        known.update(s.scalars(select(DeletionOutboxRow.locator)))
    removed = 0
    for locator in found:
        if locator in known:
            continue
        try:
            store.delete(locator)
            removed += 1
        except (ObjectStoreUnavailable, ValueError) as exc:
            log.warning("could not remove orphan object %s: %s", locator, exc)
    return removed


def run_pass(db: Database, store: ObjectStore) -> int:
    """One maintenance pass; returns the outbox rows still queued after it."""
    pending = flush_outbox(db, store)
    consolidate(db)
    return pending


async def maintenance_loop(db: Database, store: ObjectStore, interval: float) -> None:
    """Run a pass every `interval` seconds until cancelled; a failing pass is logged."""
    while True:
        await asyncio.sleep(interval)
        try:
            pending = await asyncio.to_thread(run_pass, db, store)
            if pending:
                log.info("maintenance: %d byte deletes still queued", pending)
        except Exception:
            log.exception("maintenance pass failed")
