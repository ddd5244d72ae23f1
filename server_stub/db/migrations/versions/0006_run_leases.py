"""Run leases of a fleet on one PostgreSQL (commit 5e8ba92).

Every step is skipped when its object already exists: a database made before
Alembic is stamped 0001 and brought up from there, and the builds it ran under
created missing tables and nullable columns at start (never indexes on existing
tables), so it may hold part of this revision already.

Down from 0005_recall_word_index.
Never edit a released revision: add a new one (docs/server.md, "Schema migrations").
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_run_leases"
down_revision = "0005_recall_word_index"
branch_labels = None
depends_on = None

# The models' byte-wise string types as they were (C collation on PostgreSQL).
_ID = sa.String(64).with_variant(sa.String(64, collation="C"), "postgresql")
_TS = sa.String(32).with_variant(sa.String(32, collation="C"), "postgresql")


def upgrade() -> None:
    op.create_table(
        "run_leases",
        sa.Column("run_id", _ID, nullable=False),
        sa.Column("owner", sa.String(length=32), nullable=False),
        sa.Column("expires_at", _TS, nullable=False),
        sa.PrimaryKeyConstraint("run_id"),
        if_not_exists=True,
    )
    op.create_index(
        op.f("ix_run_leases_owner"), "run_leases", ["owner"], unique=False, if_not_exists=True
    )
