"""Maintenance: retry queued byte deletes, consolidate memories, sweep, scrub.

A pass (every `--maintenance-interval` seconds, or `POST /_stub/maintenance`):
1. retries the outbox's byte deletes (ADR-0050 §7);
2. consolidates memories;
3. removes byte objects that no artifact, intent or outbox row names. The agent commits an
   intent row before it writes an artifact's bytes (`ObjectIntentRow`), so every object in
   the store is named by some row at every instant, and the sweep may run while agents run:
   it lists the store first and reads the rows after, so an object written meanwhile is
   either not listed or already named. What it finds are leftovers of older builds or of
   hands in the folder;
4. asks the object store to compact its files (`ObjectStore.compact`: SeaweedFS keeps a
   deleted object's bytes in its volume files until then; a no-op for the folder);
5. scrubs the database files (`server_stub.domain.scrub`): purged content leaves the WAL (SQLite)
   or the table pages (PostgreSQL VACUUM) even if the delete's own background scrub was
   blocked by a reader.

Consolidation writes one record per (principal, source session) for memories not yet
consolidated, so every record cites exactly one source session and leaves with it.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict

from sqlalchemy import select

from server_stub.db.engine import Database
from server_stub.db.models import (
    ArtifactRow,
    ConsolidationRecordRow,
    DeletionOutboxRow,
    MemoryRow,
    ObjectIntentRow,
)
from server_stub.domain import ids, timestamps
from server_stub.domain.bus import only_one
from server_stub.domain.purge import flush_outbox
from server_stub.domain.scrub import scrub_now
from server_stub.storage.objectstore import TMP_SUFFIX, ObjectStore, ObjectStoreUnavailable

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
    """Remove objects no artifact, intent or outbox row names; returns how many."""
    try:
        found = store.locators()  # first the store, then the rows (see the module docstring)
    except ObjectStoreUnavailable as exc:
        log.warning("could not list the object store for the sweep: %s", exc)
        return 0
    if not found:
        return 0
    with db.read() as s:
        known = set(s.scalars(select(ArtifactRow.locator)))
        known.update(s.scalars(select(DeletionOutboxRow.locator)))
        known.update(s.scalars(select(ObjectIntentRow.locator)))
    removed = 0
    for locator in found:
        # A half-written object (`<locator>.tmp`) belongs to its locator's intent.
        owner = locator.removesuffix(TMP_SUFFIX)
        if owner in known:
            continue
        try:
            store.delete(locator)
            removed += 1
        except (ObjectStoreUnavailable, ValueError) as exc:
            log.warning("could not remove orphan object %s: %s", locator, exc)
    if removed:
        log.info("removed %d byte objects that no row names", removed)
    return removed


def run_pass(db: Database, store: ObjectStore) -> int:
    """One maintenance pass; returns the outbox rows still queued after it."""
    pending = flush_outbox(db, store)
    consolidate(db)
    sweep_orphan_objects(db, store)
    store.compact()
    scrub_now(db)
    return pending


def _fleet_pass(db: Database, store: ObjectStore) -> int:
    """A pass, unless another process of the fleet is running one (then skip this turn)."""
    with only_one(db, "maintenance") as mine:
        return run_pass(db, store) if mine else 0


async def maintenance_loop(db: Database, store: ObjectStore, interval: float) -> None:
    """Run a pass every `interval` seconds until cancelled; a failing pass is logged."""
    while True:
        await asyncio.sleep(interval)
        try:
            pending = await asyncio.to_thread(_fleet_pass, db, store)
            if pending:
                log.info("maintenance: %d byte deletes still queued", pending)
        except Exception:
            log.exception("maintenance pass failed")
