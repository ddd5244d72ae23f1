"""Maintenance: retry queued byte deletes until they succeed, and consolidate memories.

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
from server_stub.db.models import ConsolidationRecordRow, MemoryRow
from server_stub.objectstore import ObjectStore
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
