"""The first released schema (commit f22d25c, the stub's sixteen routes), exactly.

Never edit a released revision: add a new one (docs/server.md, "Schema migrations").
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001_first_release"
down_revision = None
branch_labels = None
depends_on = None

# The models' byte-wise string types as they were (C collation on PostgreSQL).
_ID = sa.String(64).with_variant(sa.String(64, collation="C"), "postgresql")
_TS = sa.String(32).with_variant(sa.String(32, collation="C"), "postgresql")
_NAME = sa.String(200).with_variant(sa.String(200, collation="C"), "postgresql")


def upgrade() -> None:
    op.create_table(
        "deletion_outbox",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("session_id", _ID, nullable=False),
        sa.Column("locator", sa.String(length=300), nullable=False),
        sa.Column("enqueued_at", _TS, nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        op.f("ix_deletion_outbox_session_id"), "deletion_outbox", ["session_id"], unique=False
    )
    op.create_table(
        "deletion_tombstones",
        sa.Column("session_id", _ID, nullable=False),
        sa.Column("tenant", _NAME, nullable=False),
        sa.Column("principal", _NAME, nullable=False),
        sa.Column("deleted_at", _TS, nullable=False),
        sa.PrimaryKeyConstraint("session_id"),
    )
    op.create_table(
        "principal_versions",
        sa.Column("tenant", _NAME, nullable=False),
        sa.Column("principal", _NAME, nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("tenant", "principal"),
    )
    op.create_table(
        "server_meta",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("value", sa.String(length=200), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )
    op.create_table(
        "sessions",
        sa.Column("id", _ID, nullable=False),
        sa.Column("tenant", _NAME, nullable=False),
        sa.Column("principal", _NAME, nullable=False),
        sa.Column("title", sa.Text(), nullable=True),
        sa.Column("title_state", sa.String(length=16), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("updated_at", _TS, nullable=False),
        sa.Column("last_event_at", _TS, nullable=True),
        sa.Column("last_sequence", sa.Integer(), nullable=False),
        sa.Column("active_run_id", _ID, nullable=True),
        sa.Column("last_run_id", _ID, nullable=True),
        sa.Column("last_run_started_at", _TS, nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_sessions_index_order",
        "sessions",
        ["tenant", "principal", sa.literal_column("updated_at DESC"), sa.literal_column("id DESC")],
        unique=False,
    )
    op.create_table(
        "skills",
        sa.Column("id", _ID, nullable=False),
        sa.Column("tenant", _NAME, nullable=False),
        sa.Column("principal", _NAME, nullable=False),
        sa.Column("name", _NAME, nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("tenant", "principal", "name"),
    )
    op.create_table(
        "consolidation_records",
        sa.Column("id", _ID, nullable=False),
        sa.Column("tenant", _NAME, nullable=False),
        sa.Column("principal", _NAME, nullable=False),
        sa.Column("source_session_id", _ID, nullable=False),
        sa.Column("memory_count", sa.Integer(), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["source_session_id"],
            ["sessions.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        op.f("ix_consolidation_records_source_session_id"),
        "consolidation_records",
        ["source_session_id"],
        unique=False,
    )
    op.create_table(
        "runs",
        sa.Column("id", _ID, nullable=False),
        sa.Column("session_id", _ID, nullable=False),
        sa.Column("tenant", _NAME, nullable=False),
        sa.Column("principal", _NAME, nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("input", sa.JSON(), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("updated_at", _TS, nullable=False),
        sa.Column("completed_at", _TS, nullable=True),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_runs_session_id"), "runs", ["session_id"], unique=False)
    op.create_table(
        "approvals",
        sa.Column("id", _ID, nullable=False),
        sa.Column("run_id", _ID, nullable=False),
        sa.Column("session_id", _ID, nullable=False),
        sa.Column("tenant", _NAME, nullable=False),
        sa.Column("principal", _NAME, nullable=False),
        sa.Column("tool", _NAME, nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("decided_at", _TS, nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["runs.id"],
        ),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_approvals_run_id"), "approvals", ["run_id"], unique=False)
    op.create_index(op.f("ix_approvals_session_id"), "approvals", ["session_id"], unique=False)
    op.create_table(
        "artifacts",
        sa.Column("id", _ID, nullable=False),
        sa.Column("session_id", _ID, nullable=False),
        sa.Column("run_id", _ID, nullable=True),
        sa.Column("tenant", _NAME, nullable=False),
        sa.Column("principal", _NAME, nullable=False),
        sa.Column("name", _NAME, nullable=False),
        sa.Column("media_type", sa.String(length=100), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("locator", sa.String(length=300), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["runs.id"],
        ),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_artifacts_run_id"), "artifacts", ["run_id"], unique=False)
    op.create_index(op.f("ix_artifacts_session_id"), "artifacts", ["session_id"], unique=False)
    op.create_table(
        "checkpoints",
        sa.Column("id", _ID, nullable=False),
        sa.Column("run_id", _ID, nullable=False),
        sa.Column("session_id", _ID, nullable=False),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["runs.id"],
        ),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_checkpoints_run_id"), "checkpoints", ["run_id"], unique=False)
    op.create_index(op.f("ix_checkpoints_session_id"), "checkpoints", ["session_id"], unique=False)
    op.create_table(
        "events",
        sa.Column("session_id", _ID, nullable=False),
        sa.Column("sequence", sa.Integer(), nullable=False),
        sa.Column("run_id", _ID, nullable=True),
        sa.Column("type", sa.String(length=64), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["runs.id"],
        ),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.id"],
        ),
        sa.PrimaryKeyConstraint("session_id", "sequence"),
    )
    op.create_index("ix_events_run", "events", ["run_id", "sequence"], unique=False)
    op.create_index(
        "ix_events_session_type", "events", ["session_id", "type", "sequence"], unique=False
    )
    op.create_table(
        "memories",
        sa.Column("id", _ID, nullable=False),
        sa.Column("tenant", _NAME, nullable=False),
        sa.Column("principal", _NAME, nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("source_session_id", _ID, nullable=False),
        sa.Column("source_run_id", _ID, nullable=True),
        sa.Column("reinforcement_count", sa.Integer(), nullable=False),
        sa.Column("consolidated_at", _TS, nullable=True),
        sa.Column("created_at", _TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["source_run_id"],
            ["runs.id"],
        ),
        sa.ForeignKeyConstraint(
            ["source_session_id"],
            ["sessions.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_memories_list",
        "memories",
        ["tenant", "principal", sa.literal_column("created_at DESC"), sa.literal_column("id DESC")],
        unique=False,
    )
    op.create_index(
        op.f("ix_memories_source_session_id"), "memories", ["source_session_id"], unique=False
    )
    op.create_table(
        "projections",
        sa.Column("id", _ID, nullable=False),
        sa.Column("run_id", _ID, nullable=False),
        sa.Column("session_id", _ID, nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["runs.id"],
        ),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_projections_run_id"), "projections", ["run_id"], unique=False)
    op.create_index(op.f("ix_projections_session_id"), "projections", ["session_id"], unique=False)
    op.create_table(
        "recall_traces",
        sa.Column("id", _ID, nullable=False),
        sa.Column("run_id", _ID, nullable=False),
        sa.Column("session_id", _ID, nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["runs.id"],
        ),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_recall_traces_run_id"), "recall_traces", ["run_id"], unique=False)
    op.create_index(
        op.f("ix_recall_traces_session_id"), "recall_traces", ["session_id"], unique=False
    )
    op.create_table(
        "skill_revisions",
        sa.Column("id", _ID, nullable=False),
        sa.Column("skill_id", _ID, nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("authoring_run_id", _ID, nullable=True),
        sa.Column("authoring_session_id", _ID, nullable=True),
        sa.Column("published_at", _TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["authoring_run_id"],
            ["runs.id"],
        ),
        sa.ForeignKeyConstraint(
            ["skill_id"],
            ["skills.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("skill_id", "revision"),
    )
    op.create_index(
        op.f("ix_skill_revisions_authoring_run_id"),
        "skill_revisions",
        ["authoring_run_id"],
        unique=False,
    )
    op.create_index(
        op.f("ix_skill_revisions_authoring_session_id"),
        "skill_revisions",
        ["authoring_session_id"],
        unique=False,
    )
    op.create_index(
        op.f("ix_skill_revisions_skill_id"), "skill_revisions", ["skill_id"], unique=False
    )
    op.create_table(
        "knowledge_documents",
        sa.Column("id", _ID, nullable=False),
        sa.Column("tenant", _NAME, nullable=False),
        sa.Column("principal", _NAME, nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("source_artifact_id", _ID, nullable=False),
        sa.Column("source_session_id", _ID, nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["source_artifact_id"],
            ["artifacts.id"],
        ),
        sa.ForeignKeyConstraint(
            ["source_session_id"],
            ["sessions.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_kdocs_list",
        "knowledge_documents",
        ["tenant", "principal", sa.literal_column("created_at DESC"), sa.literal_column("id DESC")],
        unique=False,
    )
    op.create_index(
        op.f("ix_knowledge_documents_source_artifact_id"),
        "knowledge_documents",
        ["source_artifact_id"],
        unique=False,
    )
    op.create_index(
        op.f("ix_knowledge_documents_source_session_id"),
        "knowledge_documents",
        ["source_session_id"],
        unique=False,
    )
    op.create_table(
        "memory_rejections",
        sa.Column("id", _ID, nullable=False),
        sa.Column("memory_id", _ID, nullable=False),
        sa.Column("memory_session_id", _ID, nullable=False),
        sa.Column("session_id", _ID, nullable=True),
        sa.Column("tenant", _NAME, nullable=False),
        sa.Column("principal", _NAME, nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("created_at", _TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["memory_id"],
            ["memories.id"],
        ),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        op.f("ix_memory_rejections_memory_id"), "memory_rejections", ["memory_id"], unique=False
    )
    op.create_index(
        op.f("ix_memory_rejections_memory_session_id"),
        "memory_rejections",
        ["memory_session_id"],
        unique=False,
    )
    op.create_index(
        op.f("ix_memory_rejections_session_id"), "memory_rejections", ["session_id"], unique=False
    )
    op.create_table(
        "recall_trace_items",
        sa.Column("trace_id", _ID, nullable=False),
        sa.Column("memory_id", _ID, nullable=False),
        sa.Column("memory_session_id", _ID, nullable=False),
        sa.ForeignKeyConstraint(
            ["memory_id"],
            ["memories.id"],
        ),
        sa.ForeignKeyConstraint(
            ["trace_id"],
            ["recall_traces.id"],
        ),
        sa.PrimaryKeyConstraint("trace_id", "memory_id"),
    )
    op.create_index(
        "ix_recall_trace_items_memory", "recall_trace_items", ["memory_id"], unique=False
    )
    op.create_index(
        op.f("ix_recall_trace_items_memory_session_id"),
        "recall_trace_items",
        ["memory_session_id"],
        unique=False,
    )
    op.create_table(
        "tool_invocations",
        sa.Column("id", _ID, nullable=False),
        sa.Column("run_id", _ID, nullable=False),
        sa.Column("session_id", _ID, nullable=False),
        sa.Column("approval_id", _ID, nullable=True),
        sa.Column("tool", _NAME, nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("output", sa.Text(), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["approval_id"],
            ["approvals.id"],
        ),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["runs.id"],
        ),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        op.f("ix_tool_invocations_approval_id"), "tool_invocations", ["approval_id"], unique=False
    )
    op.create_index(
        op.f("ix_tool_invocations_run_id"), "tool_invocations", ["run_id"], unique=False
    )
    op.create_index(
        op.f("ix_tool_invocations_session_id"), "tool_invocations", ["session_id"], unique=False
    )
