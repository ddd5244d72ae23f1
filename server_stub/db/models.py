"""Typed SQLAlchemy models of the whole conversation graph of ADR-0050 §5.

Timestamps and ids are stored as text in the contract's forms; on PostgreSQL they use
`COLLATE "C"` so that comparisons are bytewise, as on SQLite. Some tables carry a
denormalised `session_id` (e.g. a recall-trace item records the source session of the memory
it points at) so that the purge and the residue audit can find every row that refers to a
session, directly or through its runs, artifacts and memories, with an index seek.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    DDL,
    JSON,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    event,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeEngine


def _bytewise(length: int) -> TypeEngine[str]:
    """A string column compared bytewise on every backend."""
    return String(length).with_variant(String(length, collation="C"), "postgresql")


MAX_WORD = 64  # longer words are indexed by their first MAX_WORD characters
Id = _bytewise(64)
Ts = _bytewise(32)
#: Tenants, principals, artifact and skill names: stored whole, so never longer (decision 0193).
MAX_NAME = 200
Name = _bytewise(MAX_NAME)
#: `mapped_column(..., info=CONTENT)`: the column holds conversation content (`content_columns`).
CONTENT: dict[str, Any] = {"content": True}


class Base(DeclarativeBase):
    """Declarative base of every table of the stub."""


class ServerMeta(Base):
    """Per-database constants (cursor key, ETag epoch), created on first start."""

    __tablename__ = "server_meta"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(200))


class PrincipalVersion(Base):
    """Per-principal index version: bumped by every change to that principal's session index."""

    __tablename__ = "principal_versions"
    tenant: Mapped[str] = mapped_column(Name, primary_key=True)
    principal: Mapped[str] = mapped_column(Name, primary_key=True)
    version: Mapped[int] = mapped_column(Integer, default=0)


class SessionRow(Base):
    """A conversation. `title_state`: pending (no run yet), stored, or legacy (derive)."""

    __tablename__ = "sessions"
    id: Mapped[str] = mapped_column(Id, primary_key=True)
    tenant: Mapped[str] = mapped_column(Name)
    principal: Mapped[str] = mapped_column(Name)
    title: Mapped[str | None] = mapped_column(Text, nullable=True, info=CONTENT)
    title_state: Mapped[str] = mapped_column(String(16), default="pending")
    created_at: Mapped[str] = mapped_column(Ts)
    updated_at: Mapped[str] = mapped_column(Ts)
    last_event_at: Mapped[str | None] = mapped_column(Ts, nullable=True)
    last_sequence: Mapped[int] = mapped_column(Integer, default=0)
    active_run_id: Mapped[str | None] = mapped_column(Id, nullable=True)
    last_run_id: Mapped[str | None] = mapped_column(Id, nullable=True)
    last_run_started_at: Mapped[str | None] = mapped_column(Ts, nullable=True)

    __table_args__ = (
        Index(
            "ix_sessions_index_order",
            "tenant",
            "principal",
            updated_at.desc(),
            id.desc(),
        ),
    )


#: PostgreSQL: each session's index item, the JSON `json.dumps` writes for its SessionView
#: (the key order, `null`, the escapes), is a column the database generates from the row, so
#: every write of the row rewrites it in the same statement and a page of the index only reads
#: stored text (`server_stub.routes.sessions`, decision 0239). Not a model
#: column: the ORM never reads or writes it, and SQLite has none (its pages render items as
#: they are read, and Alembic's batch rebuild of a table cannot copy a generated column).
#: Each value is written by `to_json`, members joined with `,` and `:` alone; `to_json` is
#: marked stable (for types whose output depends on settings) and of text depends on nothing,
#: so the function is declared immutable as a generated column requires. PL/pgSQL evaluates
#: a plain expression without the executor that a `SELECT` (or an SQL function) starts at
#: every write. The column holds the title, so no statistics are kept of it
#: (`content_columns`). Revision 0008 adds the same.
INDEX_ITEM_KEYS = ("id", "title", "created_at", "updated_at", "active_run_id", "last_run_id")
_ITEM_MEMBERS = " || ',' || ".join(
    f"'\"{key}\":' || coalesce(to_json({key})::text, 'null')" for key in INDEX_ITEM_KEYS
)
INDEX_ITEM_DDL = (
    "CREATE OR REPLACE FUNCTION converge_index_item(id varchar, title text, created_at varchar,"
    " updated_at varchar, active_run_id varchar, last_run_id varchar) RETURNS text"
    f" LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$ BEGIN RETURN '{{' || {_ITEM_MEMBERS}"
    " || '}'; END $$",
    "ALTER TABLE sessions ADD COLUMN index_item TEXT GENERATED ALWAYS AS"
    f" (converge_index_item({', '.join(INDEX_ITEM_KEYS)})) STORED",
    "ALTER TABLE sessions ALTER COLUMN index_item SET STATISTICS 0",
)
for _statement in INDEX_ITEM_DDL:
    event.listen(
        SessionRow.__table__,
        "after_create",
        DDL(_statement).execute_if(dialect="postgresql"),  # type: ignore[no-untyped-call]
    )


class RunRow(Base):
    """One run of the scripted agent inside a session."""

    __tablename__ = "runs"
    id: Mapped[str] = mapped_column(Id, primary_key=True)
    session_id: Mapped[str] = mapped_column(Id, ForeignKey("sessions.id"), index=True)
    tenant: Mapped[str] = mapped_column(Name)
    principal: Mapped[str] = mapped_column(Name)
    status: Mapped[str] = mapped_column(String(32))
    input: Mapped[dict[str, Any]] = mapped_column(JSON, info=CONTENT)
    created_at: Mapped[str] = mapped_column(Ts)
    updated_at: Mapped[str] = mapped_column(Ts)
    completed_at: Mapped[str | None] = mapped_column(Ts, nullable=True)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)

    # Start-up recovery looks for runs left active.
    __table_args__ = (Index("ix_runs_status", "status"),)


class RunLeaseRow(Base):
    """Which server process executes an active run, until when (server_stub.domain.leases).

    Written with the run, renewed by its process's heartbeat, removed with the run's
    terminal write. A run whose lease expired, or whose owner no longer holds its liveness
    lock, belongs to a dead process: any other process fails it."""

    __tablename__ = "run_leases"
    run_id: Mapped[str] = mapped_column(Id, primary_key=True)
    owner: Mapped[str] = mapped_column(String(32), index=True)
    expires_at: Mapped[str] = mapped_column(Ts)


class EventRow(Base):
    """One persisted event; `sequence` is per session, gap-free, from 1."""

    __tablename__ = "events"
    session_id: Mapped[str] = mapped_column(Id, ForeignKey("sessions.id"), primary_key=True)
    sequence: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[str | None] = mapped_column(Id, ForeignKey("runs.id"), nullable=True)
    type: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[str] = mapped_column(Ts)
    data: Mapped[dict[str, Any]] = mapped_column(JSON, info=CONTENT)

    __table_args__ = (
        Index("ix_events_run", "run_id", "sequence"),
        Index("ix_events_session_type", "session_id", "type", "sequence"),
    )


class CheckpointRow(Base):
    """The agent's resumable state at the end of a run."""

    __tablename__ = "checkpoints"
    id: Mapped[str] = mapped_column(Id, primary_key=True)
    run_id: Mapped[str] = mapped_column(Id, ForeignKey("runs.id"), index=True)
    session_id: Mapped[str] = mapped_column(Id, ForeignKey("sessions.id"), index=True)
    state: Mapped[dict[str, Any]] = mapped_column(JSON, info=CONTENT)
    created_at: Mapped[str] = mapped_column(Ts)


class ProjectionRow(Base):
    """A read projection of the conversation after a run (ADR-0003)."""

    __tablename__ = "projections"
    id: Mapped[str] = mapped_column(Id, primary_key=True)
    run_id: Mapped[str] = mapped_column(Id, ForeignKey("runs.id"), index=True)
    session_id: Mapped[str] = mapped_column(Id, ForeignKey("sessions.id"), index=True)
    summary: Mapped[str] = mapped_column(Text, info=CONTENT)
    created_at: Mapped[str] = mapped_column(Ts)


class ApprovalRow(Base):
    """A tool approval requested by a run: pending, approved, denied or cancelled."""

    __tablename__ = "approvals"
    id: Mapped[str] = mapped_column(Id, primary_key=True)
    run_id: Mapped[str] = mapped_column(Id, ForeignKey("runs.id"), index=True)
    session_id: Mapped[str] = mapped_column(Id, ForeignKey("sessions.id"), index=True)
    tenant: Mapped[str] = mapped_column(Name)
    principal: Mapped[str] = mapped_column(Name)
    tool: Mapped[str] = mapped_column(Name, info=CONTENT)
    status: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[str] = mapped_column(Ts)
    decided_at: Mapped[str | None] = mapped_column(Ts, nullable=True)


class ToolInvocationRow(Base):
    """A tool the agent ran (after an approval)."""

    __tablename__ = "tool_invocations"
    id: Mapped[str] = mapped_column(Id, primary_key=True)
    run_id: Mapped[str] = mapped_column(Id, ForeignKey("runs.id"), index=True)
    session_id: Mapped[str] = mapped_column(Id, ForeignKey("sessions.id"), index=True)
    approval_id: Mapped[str | None] = mapped_column(
        Id, ForeignKey("approvals.id"), nullable=True, index=True
    )
    tool: Mapped[str] = mapped_column(Name, info=CONTENT)
    status: Mapped[str] = mapped_column(String(16))
    output: Mapped[str] = mapped_column(Text, info=CONTENT)
    created_at: Mapped[str] = mapped_column(Ts)


class ArtifactRow(Base):
    """Artifact metadata; the bytes live in the object store at `locator` (one per artifact)."""

    __tablename__ = "artifacts"
    id: Mapped[str] = mapped_column(Id, primary_key=True)
    session_id: Mapped[str] = mapped_column(Id, ForeignKey("sessions.id"), index=True)
    run_id: Mapped[str | None] = mapped_column(Id, ForeignKey("runs.id"), nullable=True, index=True)
    tenant: Mapped[str] = mapped_column(Name)
    principal: Mapped[str] = mapped_column(Name)
    name: Mapped[str] = mapped_column(Name, info=CONTENT)
    media_type: Mapped[str] = mapped_column(String(100))
    size: Mapped[int] = mapped_column(Integer)
    sha256: Mapped[str] = mapped_column(String(64))
    locator: Mapped[str] = mapped_column(String(300))
    created_at: Mapped[str] = mapped_column(Ts)


class MemoryRow(Base):
    """A memory of a principal; single-source: formed in exactly one session."""

    __tablename__ = "memories"
    id: Mapped[str] = mapped_column(Id, primary_key=True)
    tenant: Mapped[str] = mapped_column(Name)
    principal: Mapped[str] = mapped_column(Name)
    text: Mapped[str] = mapped_column(Text, info=CONTENT)
    source_session_id: Mapped[str] = mapped_column(Id, ForeignKey("sessions.id"), index=True)
    # Indexed because deleting a run makes SQLite look up memories by this foreign key, and
    # unindexed that lookup scans every memory on each DELETE.
    source_run_id: Mapped[str | None] = mapped_column(
        Id, ForeignKey("runs.id"), nullable=True, index=True
    )
    reinforcement_count: Mapped[int] = mapped_column(Integer, default=0)
    consolidated_at: Mapped[str | None] = mapped_column(Ts, nullable=True)
    created_at: Mapped[str] = mapped_column(Ts)

    # The list (and the reinforcement lookup by text, within one principal) seek the first;
    # maintenance finds unconsolidated memories through the second.
    __table_args__ = (
        Index("ix_memories_list", "tenant", "principal", created_at.desc(), id.desc()),
        Index("ix_memories_consolidated", "consolidated_at"),
    )


class MemoryWordRow(Base):
    """The recall index: one row per distinct word of a memory's text, so a run matches its
    message against the principal's memories with a seek per message word instead of reading
    every memory's text (a few large memories would make every run's write transaction
    take seconds). `memory_session_id` is the memory's source session: the purge removes a
    session's rows with one index seek, before the memories they point at."""

    __tablename__ = "memory_words"
    tenant: Mapped[str] = mapped_column(Name, primary_key=True)
    principal: Mapped[str] = mapped_column(Name, primary_key=True)
    word: Mapped[str] = mapped_column(_bytewise(MAX_WORD), primary_key=True, info=CONTENT)
    memory_id: Mapped[str] = mapped_column(Id, ForeignKey("memories.id"), primary_key=True)
    memory_session_id: Mapped[str] = mapped_column(Id, index=True)

    __table_args__ = (Index("ix_memory_words_memory", "memory_id"),)


class MemoryRejectionRow(Base):
    """A user's rejection of a memory, optionally recorded in a session."""

    __tablename__ = "memory_rejections"
    id: Mapped[str] = mapped_column(Id, primary_key=True)
    memory_id: Mapped[str] = mapped_column(Id, ForeignKey("memories.id"), index=True)
    memory_session_id: Mapped[str] = mapped_column(Id, index=True)
    session_id: Mapped[str | None] = mapped_column(
        Id, ForeignKey("sessions.id"), nullable=True, index=True
    )
    tenant: Mapped[str] = mapped_column(Name)
    principal: Mapped[str] = mapped_column(Name)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True, info=CONTENT)
    created_at: Mapped[str] = mapped_column(Ts)


class RecallTraceRow(Base):
    """Which of the principal's memories one run recalled."""

    __tablename__ = "recall_traces"
    id: Mapped[str] = mapped_column(Id, primary_key=True)
    run_id: Mapped[str] = mapped_column(Id, ForeignKey("runs.id"), index=True)
    session_id: Mapped[str] = mapped_column(Id, ForeignKey("sessions.id"), index=True)
    created_at: Mapped[str] = mapped_column(Ts)


class RecallTraceItemRow(Base):
    """One recalled memory of a trace; `memory_session_id` is that memory's source session."""

    __tablename__ = "recall_trace_items"
    trace_id: Mapped[str] = mapped_column(Id, ForeignKey("recall_traces.id"), primary_key=True)
    memory_id: Mapped[str] = mapped_column(Id, ForeignKey("memories.id"), primary_key=True)
    memory_session_id: Mapped[str] = mapped_column(Id, index=True)

    __table_args__ = (Index("ix_recall_trace_items_memory", "memory_id"),)


class ConsolidationRecordRow(Base):
    """A maintenance consolidation of memories; cites exactly one source session."""

    __tablename__ = "consolidation_records"
    id: Mapped[str] = mapped_column(Id, primary_key=True)
    tenant: Mapped[str] = mapped_column(Name)
    principal: Mapped[str] = mapped_column(Name)
    source_session_id: Mapped[str] = mapped_column(Id, ForeignKey("sessions.id"), index=True)
    memory_count: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[str] = mapped_column(Ts)


class KnowledgeDocumentRow(Base):
    """A knowledge document sourced from a conversation artifact."""

    __tablename__ = "knowledge_documents"
    id: Mapped[str] = mapped_column(Id, primary_key=True)
    tenant: Mapped[str] = mapped_column(Name)
    principal: Mapped[str] = mapped_column(Name)
    title: Mapped[str] = mapped_column(Text, info=CONTENT)
    source_artifact_id: Mapped[str] = mapped_column(Id, ForeignKey("artifacts.id"), index=True)
    source_session_id: Mapped[str] = mapped_column(Id, ForeignKey("sessions.id"), index=True)
    created_at: Mapped[str] = mapped_column(Ts)

    __table_args__ = (Index("ix_kdocs_list", "tenant", "principal", created_at.desc(), id.desc()),)


class SkillRow(Base):
    """A skill of a principal: a durable resource that outlives the sessions that shaped it."""

    __tablename__ = "skills"
    id: Mapped[str] = mapped_column(Id, primary_key=True)
    tenant: Mapped[str] = mapped_column(Name)
    principal: Mapped[str] = mapped_column(Name)
    name: Mapped[str] = mapped_column(Name)
    created_at: Mapped[str] = mapped_column(Ts)

    __table_args__ = (UniqueConstraint("tenant", "principal", "name"),)


class SkillRevisionRow(Base):
    """A published revision; the authoring run is detached (null) when its session is purged."""

    __tablename__ = "skill_revisions"
    id: Mapped[str] = mapped_column(Id, primary_key=True)
    skill_id: Mapped[str] = mapped_column(Id, ForeignKey("skills.id"), index=True)
    revision: Mapped[int] = mapped_column(Integer)
    authoring_run_id: Mapped[str | None] = mapped_column(
        Id, ForeignKey("runs.id"), nullable=True, index=True
    )
    authoring_session_id: Mapped[str | None] = mapped_column(Id, nullable=True, index=True)
    published_at: Mapped[str] = mapped_column(Ts)

    __table_args__ = (UniqueConstraint("skill_id", "revision"),)


class DeletionTombstoneRow(Base):
    """Content-free proof of a delete: exactly these four columns (ADR-0050 §6)."""

    __tablename__ = "deletion_tombstones"
    session_id: Mapped[str] = mapped_column(Id, primary_key=True)
    tenant: Mapped[str] = mapped_column(Name)
    principal: Mapped[str] = mapped_column(Name)
    deleted_at: Mapped[str] = mapped_column(Ts)


class DeletionOutboxRow(Base):
    """An artifact locator whose bytes still have to leave the object store (ADR-0050 §7)."""

    __tablename__ = "deletion_outbox"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(Id, index=True)
    locator: Mapped[str] = mapped_column(String(300))
    enqueued_at: Mapped[str] = mapped_column(Ts)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    # Why the last byte delete failed (an OS or store message: paths of ids, never content)
    # and when, so a stuck entry is visible in the control plane and the logs.
    last_error: Mapped[str | None] = mapped_column(String(300), nullable=True)
    last_attempt_at: Mapped[str | None] = mapped_column(Ts, nullable=True)


class ObjectIntentRow(Base):
    """A byte object about to be written, recorded (and committed) before the write.

    Closes the window between storing an artifact's bytes and committing its row: a cancel,
    an exception or a crash in between leaves this row, never anonymous bytes. The artifact
    row replaces it in one transaction; a run that ends without claiming it hands its locator
    to the deletion outbox in its terminal transaction (`history.finish_run`), and the purge
    does the same. Maintenance removes any object that no artifact, intent or outbox row names.
    """

    __tablename__ = "object_intents"
    locator: Mapped[str] = mapped_column(String(300), primary_key=True)
    session_id: Mapped[str] = mapped_column(Id, index=True)
    run_id: Mapped[str] = mapped_column(Id, index=True)
    created_at: Mapped[str] = mapped_column(Ts)


def content_columns() -> list[tuple[str, str]]:
    """(table, column) of every column marked `info={"content": True}`: what a user wrote
    or a run produced. PostgreSQL keeps no planner statistics of them
    (`server_stub.db.schema.zero_content_statistics`, revision 0007), so `ANALYZE` never
    copies content into `pg_statistic`, out of the purge's reach (CONTRACT §9.2)."""
    return [
        (table.name, column.name)
        for table in Base.metadata.sorted_tables
        for column in table.columns
        if column.info.get("content")
    ]
