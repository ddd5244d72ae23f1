"""Index memories.source_run_id: deleting a run looks memories up by it (commit 989c521).

Every step is skipped when its object already exists: a database made before
Alembic is stamped 0001 and brought up from there, and the builds it ran under
created missing tables and nullable columns at start (never indexes on existing
tables), so it may hold part of this revision already.

Down from 0002_recovery_indexes.
Never edit a released revision: add a new one (docs/server.md, "Schema migrations").
"""

from __future__ import annotations

from alembic import op

revision = "0003_memories_source_run_index"
down_revision = "0002_recovery_indexes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        op.f("ix_memories_source_run_id"),
        "memories",
        ["source_run_id"],
        unique=False,
        if_not_exists=True,
    )
