"""Seeding for the server benchmark: bulk inserts straight through SQLAlchemy Core.

Seeding is not what the benchmark measures, so it skips the API and writes rows with
`executemany` (the rows are passed as execute parameters, never as one giant `.values(...)`:
PITFALLS §8). Ids and timestamps come from a seeded PRNG so that two runs build the same
shape of index. The measured principal's sessions are interleaved in time with other
principals' sessions, so the list query has to filter by owner through its composite index
rather than find the principal's rows alone in the table. Every tenth session shares its
`updated_at` with the previous one, so the `id DESC` tiebreak of the keyset order is
exercised.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Table, insert

from server_stub.db.engine import Database
from server_stub.db.models import (
    ArtifactRow,
    Base,
    CheckpointRow,
    EventRow,
    KnowledgeDocumentRow,
    PrincipalVersion,
    ProjectionRow,
    RunRow,
    SessionRow,
)
from server_stub.domain.timestamps import fmt
from server_stub.storage.objectstore import ObjectStore, locator_for

BASE_TIME = datetime(2026, 1, 1, tzinfo=UTC)
BATCH = 20_000


@dataclass(frozen=True)
class Owner:
    """A (tenant, principal) pair and the dev token that authenticates as it."""

    tenant: str
    principal: str
    token: str


MEASURED = Owner("acme", "alice", "dev-alice")
OTHERS = (Owner("acme", "bob", "dev-bob"), Owner("globex", "carol", "dev-carol"))


class IdMaker:
    """Deterministic prefixed ids of the server's shape (`ses_` + 20 lowercase characters)."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def __call__(self, prefix: str) -> str:
        return f"{prefix}_{self._rng.getrandbits(80):020x}"


def _table(model: type[Base]) -> Table:
    """The Core table of a model, for plain `executemany` inserts."""
    table = model.__table__
    assert isinstance(table, Table)
    return table


def _batches(rows: Iterator[dict[str, Any]], size: int = BATCH) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _session_rows(sessions: int, others: int, new_id: IdMaker) -> Iterator[dict[str, Any]]:
    """`sessions` rows of the measured principal interleaved with `others` rows of others."""
    total = sessions + others
    theirs = 0
    for i in range(total):
        # Bresenham-style spread: exactly `others` rows of other principals, evenly placed.
        is_other = (i + 1) * others // total > i * others // total
        owner = OTHERS[theirs % len(OTHERS)] if is_other else MEASURED
        theirs += is_other
        tick = i - i // 10  # every tenth row repeats the previous timestamp
        updated = BASE_TIME + timedelta(seconds=tick * 7, microseconds=(tick * 7919) % 1_000_000)
        created = updated - timedelta(minutes=5)
        yield {
            "id": new_id("ses"),
            "tenant": owner.tenant,
            "principal": owner.principal,
            "title": f"Conversation {i} about keyset pagination",
            "title_state": "stored",
            "created_at": fmt(created),
            "updated_at": fmt(updated),
            "last_event_at": fmt(updated),
            "last_sequence": 6,
            "active_run_id": None,
            "last_run_id": new_id("run"),
            "last_run_started_at": fmt(created),
        }


def seed_index(db: Database, sessions: int, others: int, seed: int = 50) -> None:
    """Insert the session index: `sessions` for the measured principal, `others` besides."""
    new_id = IdMaker(seed)
    table = _table(SessionRow)
    with db.write() as s:
        for batch in _batches(_session_rows(sessions, others, new_id)):
            s.execute(insert(table), batch)
        versions = [
            {"tenant": o.tenant, "principal": o.principal, "version": 1}
            for o in (MEASURED, *OTHERS)
        ]
        s.execute(insert(_table(PrincipalVersion)), versions)


def seed_big_session(
    db: Database,
    store: ObjectStore,
    new_id: IdMaker,
    events: int = 10_000,
    artifacts: int = 100,
) -> str:
    """One finished session of the measured principal with `events` events, `artifacts`
    artifacts (each with its object-store bytes and a knowledge document), a run, its
    checkpoint and projection. Returns the session id."""
    sid, rid = new_id("ses"), new_id("run")
    now = datetime.now(UTC)
    start = fmt(now - timedelta(hours=1))
    end = fmt(now)
    with db.write() as s:
        s.execute(
            insert(_table(SessionRow)),
            [
                {
                    "id": sid,
                    "tenant": MEASURED.tenant,
                    "principal": MEASURED.principal,
                    "title": "A very long conversation",
                    "title_state": "stored",
                    "created_at": start,
                    "updated_at": end,
                    "last_event_at": end,
                    "last_sequence": events,
                    "active_run_id": None,
                    "last_run_id": rid,
                    "last_run_started_at": start,
                }
            ],
        )
        s.execute(
            insert(_table(RunRow)),
            [
                {
                    "id": rid,
                    "session_id": sid,
                    "tenant": MEASURED.tenant,
                    "principal": MEASURED.principal,
                    "status": "completed",
                    "input": {"role": "user", "content": [{"type": "text", "text": "go on"}]},
                    "created_at": start,
                    "updated_at": end,
                    "completed_at": end,
                    "cancel_requested": False,
                }
            ],
        )
        event_rows = (
            {
                "session_id": sid,
                "sequence": n,
                "run_id": rid,
                "type": "message.assistant.delta",
                "created_at": start,
                "data": {"text": f"part {n} of a long streamed answer, with some words"},
            }
            for n in range(1, events + 1)
        )
        for batch in _batches(event_rows, 5_000):
            s.execute(insert(_table(EventRow)), batch)
        artifact_rows = []
        kdoc_rows = []
        for n in range(artifacts):
            aid = new_id("art")
            body = f"artifact {n} of {sid}\n".encode() * 8
            locator = locator_for(sid, aid)
            store.put(locator, body)
            artifact_rows.append(
                {
                    "id": aid,
                    "session_id": sid,
                    "run_id": rid,
                    "tenant": MEASURED.tenant,
                    "principal": MEASURED.principal,
                    "name": f"notes-{n}.txt",
                    "media_type": "text/plain",
                    "size": len(body),
                    "sha256": hashlib.sha256(body).hexdigest(),
                    "locator": locator,
                    "created_at": start,
                }
            )
            kdoc_rows.append(
                {
                    "id": new_id("kdoc"),
                    "tenant": MEASURED.tenant,
                    "principal": MEASURED.principal,
                    "title": f"notes-{n}.txt",
                    "source_artifact_id": aid,
                    "source_session_id": sid,
                    "created_at": start,
                }
            )
        if artifact_rows:
            s.execute(insert(_table(ArtifactRow)), artifact_rows)
            s.execute(insert(_table(KnowledgeDocumentRow)), kdoc_rows)
        s.execute(
            insert(_table(CheckpointRow)),
            [
                {
                    "id": new_id("chk"),
                    "run_id": rid,
                    "session_id": sid,
                    "state": {},
                    "created_at": end,
                }
            ],
        )
        s.execute(
            insert(_table(ProjectionRow)),
            [
                {
                    "id": new_id("prj"),
                    "run_id": rid,
                    "session_id": sid,
                    "summary": "long",
                    "created_at": end,
                }
            ],
        )
    return sid
