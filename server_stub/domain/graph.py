"""The rows a run leaves in the conversation graph, each built in one place.

The scripted agent writes these live (timestamps of now) and the demo seed writes them
backdated (timestamps of its history); both call these constructors, so the shape of the
graph a run leaves (which row points at which, what a knowledge document copies from its
artifact) is written once. Each adds its rows to the caller's transaction and commits
nothing; the events that announce them stay with the caller.
"""

from __future__ import annotations

import hashlib
from typing import Any

from sqlalchemy.orm import Session

from server_stub.db.models import (
    ApprovalRow,
    ArtifactRow,
    CheckpointRow,
    KnowledgeDocumentRow,
    MemoryRow,
    ProjectionRow,
    RecallTraceRow,
    RunRow,
    SkillRevisionRow,
    SkillRow,
    ToolInvocationRow,
)
from server_stub.domain import ids
from server_stub.domain.recall import index_memory


def add_artifact(
    s: Session, run: RunRow, artifact_id: str, name: str, data: bytes, locator: str, at: str
) -> ArtifactRow:
    """A text artifact of the run (its bytes already stored at `locator`) and the knowledge
    document derived from it."""
    artifact = ArtifactRow(
        id=artifact_id,
        session_id=run.session_id,
        run_id=run.id,
        tenant=run.tenant,
        principal=run.principal,
        name=name,
        media_type="text/plain",
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        locator=locator,
        created_at=at,
    )
    s.add(artifact)
    s.flush()
    s.add(
        KnowledgeDocumentRow(
            id=ids.new_id("kdoc"),
            tenant=run.tenant,
            principal=run.principal,
            title=name,
            source_artifact_id=artifact_id,
            source_session_id=run.session_id,
            created_at=at,
        )
    )
    return artifact


def add_approval(
    s: Session,
    run: RunRow,
    approval_id: str,
    tool: str,
    status: str,
    at: str,
    decided_at: str | None = None,
) -> ApprovalRow:
    """An approval the run asked for (flushed: a tool invocation may point at it)."""
    approval = ApprovalRow(
        id=approval_id,
        run_id=run.id,
        session_id=run.session_id,
        tenant=run.tenant,
        principal=run.principal,
        tool=tool,
        status=status,
        created_at=at,
        decided_at=decided_at,
    )
    s.add(approval)
    s.flush()
    return approval


def add_tool_invocation(
    s: Session, run: RunRow, approval_id: str, tool: str, output: str, at: str
) -> ToolInvocationRow:
    """The succeeded invocation of an approved tool."""
    invocation = ToolInvocationRow(
        id=ids.new_id("tiv"),
        run_id=run.id,
        session_id=run.session_id,
        approval_id=approval_id,
        tool=tool,
        status="succeeded",
        output=output,
        created_at=at,
    )
    s.add(invocation)
    return invocation


def add_memory(
    s: Session,
    run: RunRow,
    memory_id: str,
    text: str,
    reinforcement_count: int,
    at: str,
    *,
    index: bool = True,
) -> MemoryRow:
    """A memory the run formed, owned by the run's principal; with its recall word rows
    unless `index` is False (the caller indexes it: server_stub.domain.recall)."""
    memory = MemoryRow(
        id=memory_id,
        tenant=run.tenant,
        principal=run.principal,
        text=text,
        source_session_id=run.session_id,
        source_run_id=run.id,
        reinforcement_count=reinforcement_count,
        created_at=at,
    )
    s.add(memory)
    s.flush()  # the word rows point at it
    if index:
        index_memory(s, memory)
    return memory


def add_skill(s: Session, run: RunRow, skill_id: str, name: str, at: str) -> SkillRow:
    """A skill of the run's principal, first published by the run (flushed: its revisions
    point at it)."""
    skill = SkillRow(
        id=skill_id, tenant=run.tenant, principal=run.principal, name=name, created_at=at
    )
    s.add(skill)
    s.flush()
    return skill


def add_skill_revision(
    s: Session, run: RunRow, revision_id: str, skill_id: str, revision: int, at: str
) -> SkillRevisionRow:
    """Revision `revision` of a skill, authored by the run."""
    row = SkillRevisionRow(
        id=revision_id,
        skill_id=skill_id,
        revision=revision,
        authoring_run_id=run.id,
        authoring_session_id=run.session_id,
        published_at=at,
    )
    s.add(row)
    return row


def add_run_state(
    s: Session, run: RunRow, state: dict[str, Any], summary: str, at: str
) -> RecallTraceRow:
    """The checkpoint, projection and (empty) recall trace a run leaves before it ends."""
    s.add(
        CheckpointRow(
            id=ids.new_id("chk"),
            run_id=run.id,
            session_id=run.session_id,
            state=state,
            created_at=at,
        )
    )
    s.add(
        ProjectionRow(
            id=ids.new_id("prj"),
            run_id=run.id,
            session_id=run.session_id,
            summary=summary,
            created_at=at,
        )
    )
    trace = RecallTraceRow(
        id=ids.new_id("rct"), run_id=run.id, session_id=run.session_id, created_at=at
    )
    s.add(trace)
    return trace
