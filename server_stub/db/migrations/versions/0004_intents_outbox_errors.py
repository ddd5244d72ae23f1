"""Byte-write intents and the outbox's last error and attempt time (commit 19f4607).

Every step is skipped when its object already exists: a database made before
Alembic is stamped 0001 and brought up from there, and the builds it ran under
created missing tables and nullable columns at start (never indexes on existing
tables), so it may hold part of this revision already.

Down from 0003_memories_source_run_index.
Never edit a released revision: add a new one (docs/server.md, "Schema migrations").
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0004_intents_outbox_errors"
down_revision = "0003_memories_source_run_index"
branch_labels = None
depends_on = None

# The models' byte-wise string types as they were (C collation on PostgreSQL).
_ID = sa.String(64).with_variant(sa.String(64, collation="C"), "postgresql")
_TS = sa.String(32).with_variant(sa.String(32, collation="C"), "postgresql")


def upgrade() -> None:
    op.create_table(
        "object_intents",
        sa.Column("locator", sa.String(length=300), nullable=False),
        sa.Column("session_id", _ID, nullable=False),
        sa.Column("run_id", _ID, nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.PrimaryKeyConstraint("locator"),
        if_not_exists=True,
    )
    op.create_index(
        op.f("ix_object_intents_run_id"),
        "object_intents",
        ["run_id"],
        unique=False,
        if_not_exists=True,
    )
    op.create_index(
        op.f("ix_object_intents_session_id"),
        "object_intents",
        ["session_id"],
        unique=False,
        if_not_exists=True,
    )
    _add_column_once(
        "deletion_outbox", sa.Column("last_error", sa.String(length=300), nullable=True)
    )
    _add_column_once("deletion_outbox", sa.Column("last_attempt_at", _TS, nullable=True))


def _add_column_once(table: str, column: sa.Column[Any]) -> None:
    """Add a column unless present: pre-Alembic builds added nullable columns at start."""
    present = {c["name"] for c in sa.inspect(op.get_bind()).get_columns(table)}
    if column.name not in present:
        op.add_column(table, column)
