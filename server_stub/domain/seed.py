"""`--seed demo`: a realistic history for the development principals, on an empty database.

Dozens of sessions per principal with varied titles and activity spread over the last weeks,
multi-turn conversations, a legacy session without a stored title, artifacts (with their
bytes), memories (one reinforced), a skill with revisions, an approved tool call and a failed
run. Everything is inserted directly, in one transaction, so seeding takes well under a
second; a database that already holds sessions or tombstones is left alone.
"""

from __future__ import annotations

import logging
import random
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from server_stub.db.engine import Database
from server_stub.db.models import (
    DeletionTombstoneRow,
    RunRow,
    SessionRow,
)
from server_stub.domain import ids, timestamps
from server_stub.domain.graph import (
    add_approval,
    add_artifact,
    add_memory,
    add_run_state,
    add_skill,
    add_skill_revision,
    add_tool_invocation,
)
from server_stub.domain.history import add_event, bump_version
from server_stub.domain.titles import title_from_message
from server_stub.storage.objectstore import ObjectStore, locator_for

log = logging.getLogger(__name__)

PRINCIPALS = (("acme", "alice", 36), ("acme", "bob", 24), ("globex", "carol", 18))

TOPICS = [
    "Plan a three-day trip to Lisbon in March",
    "Why does my Rust borrow checker complain about this closure?",
    "Summarise the Q3 sales report for the board",
    "Draft a polite reply declining the conference invitation",
    "Compare PostgreSQL and SQLite for a desktop app",
    "Recipe ideas with leftover rice and spinach",
    "Explain keyset pagination like I'm five",
    "Refactor this Python function to be testable",
    "What are good names for a grey kitten?",
    "Help me write a cover letter for a data engineer role",
    "Translate the onboarding email into German",
    "Outline a talk on event sourcing",
    "Budget spreadsheet formulas for monthly expenses",
    "How do I set up WireGuard on a Raspberry Pi?",
    "Review my SQL query for the churn dashboard",
    "Birthday party checklist for a six-year-old",
    "Écrire un résumé du livre « L'Étranger »",
    "Kubernetes liveness vs readiness probes",
    "Write unit tests for the invoice parser",
    "Ideas for a team offsite in autumn",
    "Debug the flaky CI job on macOS runners",
    "日本語でメールの挨拶文を書いて",
    "What's the difference between TCP_NODELAY and Nagle?",
    "Weekly meal prep plan, vegetarian",
    "Explain the CAP theorem with examples",
    "Migrate the settings page to the new design system",
    "Estimate the cost of running the batch jobs on spot instances",
    "Rewrite the README introduction to be friendlier",
    "Garden plan for a small balcony 🌱",
    "Interview questions for a senior frontend engineer",
]
FOLLOW_UPS = [
    "Can you make it shorter?",
    "Add a short summary at the end.",
    "What would you change first?",
    "Thanks! One more question about the second point.",
    "Please give me three alternatives.",
]


def _message(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


class _Builder:
    """Writes one principal's history with explicit timestamps."""

    def __init__(self, s: Session, store: ObjectStore, tenant: str, principal: str) -> None:
        self.s = s
        self.store = store
        self.tenant = tenant
        self.principal = principal

    def session(self, created: str, *, legacy: bool = False) -> SessionRow:
        row = SessionRow(
            id=ids.new_id("ses"),
            tenant=self.tenant,
            principal=self.principal,
            title=None,
            title_state="legacy" if legacy else "pending",
            created_at=created,
            updated_at=created,
            last_event_at=None,
            last_sequence=0,
        )
        self.s.add(row)
        self.s.flush()
        return row

    def event(
        self, ses: SessionRow, run_id: str | None, type_: str, data: dict[str, Any], at: str
    ) -> None:
        add_event(self.s, ses, run_id, type_, data, at)

    def run(
        self,
        ses: SessionRow,
        text: str,
        start: datetime,
        *,
        status: str = "completed",
        extra: list[tuple[str, dict[str, Any]]] | None = None,
    ) -> RunRow:
        """A finished run: started, user message, optional extra events, echo, terminal."""
        clock = [start]

        def tick() -> str:
            clock[0] += timedelta(seconds=1, microseconds=137)
            return timestamps.fmt(clock[0])

        begun = timestamps.fmt(start)
        message = _message(text)
        run = RunRow(
            id=ids.new_id("run"),
            session_id=ses.id,
            tenant=self.tenant,
            principal=self.principal,
            status=status,
            input=message,
            created_at=begun,
            updated_at=begun,
            completed_at=None,
            cancel_requested=False,
        )
        self.s.add(run)
        self.s.flush()
        if ses.title_state == "pending":
            ses.title = title_from_message(message)
            ses.title_state = "stored"
        self.event(ses, run.id, "run.started", {}, begun)
        self.event(ses, run.id, "message.user", message, tick())
        for type_, data in extra or []:
            self.event(ses, run.id, type_, data, tick())
        if status == "completed":
            reply = f"Echo: {text}"
            third = max(1, len(reply) // 3)
            for i in range(0, len(reply), third):
                self.event(
                    ses, run.id, "message.assistant.delta", {"text": reply[i : i + third]}, tick()
                )
            self.event(
                ses,
                run.id,
                "message.assistant",
                {"role": "assistant", "content": [{"type": "text", "text": reply}]},
                tick(),
            )
        add_run_state(self.s, run, {"outcome": status}, text[:200], tick())
        end = tick()
        terminal = {"completed": "run.completed", "failed": "run.failed"}[status]
        self.event(
            ses,
            run.id,
            terminal,
            {} if status == "completed" else {"error": "scripted failure"},
            end,
        )
        run.updated_at = run.completed_at = end
        ses.last_run_id = run.id
        ses.last_run_started_at = begun
        return run


def seed_demo(db: Database, store: ObjectStore) -> bool:
    """Fill an empty database with the demo history; False (and no change) otherwise."""
    with db.write() as s:
        existing = s.scalar(select(func.count()).select_from(SessionRow)) or 0
        tombstones = s.scalar(select(func.count()).select_from(DeletionTombstoneRow)) or 0
        if existing or tombstones:
            log.info("seed skipped: the database is not empty")
            return False
        rng = random.Random(50)
        now = timestamps.utcnow()
        for tenant, principal, count in PRINCIPALS:
            _seed_principal(s, store, rng, now, tenant, principal, count)
            bump_version(s, tenant, principal)
    log.info("seeded the demo history")
    return True


def _seed_principal(
    s: Session,
    store: ObjectStore,
    rng: random.Random,
    now: datetime,
    tenant: str,
    principal: str,
    count: int,
) -> None:
    b = _Builder(s, store, tenant, principal)
    topics = rng.sample(TOPICS, k=min(count, len(TOPICS)))
    while len(topics) < count:
        topics.append(f"{rng.choice(TOPICS)} (part {len(topics) - len(TOPICS) + 2})")
    memory_session: SessionRow | None = None
    for index, topic in enumerate(topics):
        # Activity spread over ~6 weeks, denser recently.
        age = timedelta(hours=(index**1.6) * 3 + rng.random() * 2, minutes=rng.randint(0, 59))
        start = now - age - timedelta(minutes=30)
        created = timestamps.fmt(start)
        if index == count - 1:
            # A legacy session: history from before stored titles (no run ids, no title).
            ses = b.session(created, legacy=True)
            b.event(ses, None, "message.user", _message(f"(old) {topic}"), created)
            continue
        ses = b.session(created)
        turns = 1 + rng.randint(0, 3)
        b.run(ses, topic, start)
        for turn in range(1, turns):
            b.run(ses, rng.choice(FOLLOW_UPS), start + timedelta(minutes=3 * turn))
        later = start + timedelta(minutes=20)
        if index == 1:
            _artifact_run(b, s, ses, topic, later)
        if index == 2:
            memory_session = ses
            _memory_run(b, s, ses, later)
        if index == 3:
            _approval(b, s, ses, later)
        if index == 4:
            b.run(ses, "/fail", later, status="failed")
        if index == 5:
            _skill(b, s, ses, later)
    assert memory_session is not None


def _approval(b: _Builder, s: Session, ses: SessionRow, start: datetime) -> None:
    approval_id = ids.new_id("apr")
    run = b.run(
        ses,
        "/approve web_search",
        start,
        extra=[
            ("approval.requested", {"approval_id": approval_id, "tool": "web_search"}),
            ("approval.resolved", {"approval_id": approval_id, "decision": "approved"}),
            (
                "tool.invocation",
                {"tool": "web_search", "status": "succeeded", "output": "web_search ran"},
            ),
        ],
    )
    s.flush()
    at = run.completed_at or run.created_at
    add_approval(s, run, approval_id, "web_search", "approved", run.created_at, decided_at=at)
    add_tool_invocation(s, run, approval_id, "web_search", "web_search ran", at)


def _artifact_run(b: _Builder, s: Session, ses: SessionRow, topic: str, start: datetime) -> None:
    artifact_id = ids.new_id("art")
    run = b.run(
        ses,
        f"/artifact notes.txt Notes about: {topic}",
        start,
        extra=[
            ("artifact.created", {"artifact_id": artifact_id, "name": "notes.txt"}),
        ],
    )
    s.flush()
    data = f"Notes about: {topic}".encode()
    locator = locator_for(ses.id, artifact_id)
    b.store.put(locator, data)
    add_artifact(s, run, artifact_id, "notes.txt", data, locator, run.created_at)


def _memory_run(b: _Builder, s: Session, ses: SessionRow, start: datetime) -> None:
    texts = [f"{b.principal.title()} prefers concise answers", "Works in the Lisbon time zone"]
    memory_ids = [ids.new_id("mem") for _ in texts]
    run = b.run(
        ses,
        f"/remember {texts[0]}",
        start,
        extra=[("memory.formed", {"memory_id": m, "reinforced": False}) for m in memory_ids],
    )
    s.flush()
    for memory_id, text, count in zip(memory_ids, texts, (2, 0), strict=True):
        add_memory(s, run, memory_id, text, count, run.created_at)


def _skill(b: _Builder, s: Session, ses: SessionRow, start: datetime) -> None:
    skill_id = ids.new_id("skl")
    revision_ids = [ids.new_id("rev"), ids.new_id("rev")]
    runs = [
        b.run(
            ses,
            "/skill weekly-report",
            start + timedelta(minutes=i),
            extra=[
                (
                    "skill.published",
                    {"skill_id": skill_id, "revision_id": rid, "name": "weekly-report"},
                ),
            ],
        )
        for i, rid in enumerate(revision_ids)
    ]
    s.flush()
    add_skill(s, runs[0], skill_id, "weekly-report", runs[0].created_at)
    for revision, (rid, run) in enumerate(zip(revision_ids, runs, strict=True), start=1):
        add_skill_revision(s, run, rid, skill_id, revision, run.created_at)
