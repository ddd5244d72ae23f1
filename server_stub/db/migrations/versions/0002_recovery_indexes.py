"""Indexes for start-up recovery (runs by status) and consolidation scans (commit c764b66).

Every step is skipped when its object already exists: a database made before
Alembic is stamped 0001 and brought up from there, and the builds it ran under
created missing tables and nullable columns at start (never indexes on existing
tables), so it may hold part of this revision already.

Down from 0001_first_release.
Never edit a released revision: add a new one (docs/server.md, "Schema migrations").
"""

from __future__ import annotations

from alembic import op

revision = "0002_recovery_indexes"
down_revision = "0001_first_release"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_memories_consolidated",
        "memories",
        ["consolidated_at"],
        unique=False,
        if_not_exists=True,
    )
    op.create_index("ix_runs_status", "runs", ["status"], unique=False, if_not_exists=True)
