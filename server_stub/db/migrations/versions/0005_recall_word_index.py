"""The recall word index, memory_words (commit 3813c58).

Every step is skipped when its object already exists: a database made before
Alembic is stamped 0001 and brought up from there, and the builds it ran under
created missing tables and nullable columns at start (never indexes on existing
tables), so it may hold part of this revision already.

Down from 0004_intents_outbox_errors.
Never edit a released revision: add a new one (docs/server.md, "Schema migrations").
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_recall_word_index"
down_revision = "0004_intents_outbox_errors"
branch_labels = None
depends_on = None

# The models' byte-wise string types as they were (C collation on PostgreSQL).
_ID = sa.String(64).with_variant(sa.String(64, collation="C"), "postgresql")
_NAME = sa.String(200).with_variant(sa.String(200, collation="C"), "postgresql")


def upgrade() -> None:
    op.create_table(
        "memory_words",
        sa.Column("tenant", _NAME, nullable=False),
        sa.Column("principal", _NAME, nullable=False),
        sa.Column("word", _ID, nullable=False),
        sa.Column("memory_id", _ID, nullable=False),
        sa.Column("memory_session_id", _ID, nullable=False),
        sa.ForeignKeyConstraint(
            ["memory_id"],
            ["memories.id"],
        ),
        sa.PrimaryKeyConstraint("tenant", "principal", "word", "memory_id"),
        if_not_exists=True,
    )
    op.create_index(
        "ix_memory_words_memory", "memory_words", ["memory_id"], unique=False, if_not_exists=True
    )
    op.create_index(
        op.f("ix_memory_words_memory_session_id"),
        "memory_words",
        ["memory_session_id"],
        unique=False,
        if_not_exists=True,
    )
