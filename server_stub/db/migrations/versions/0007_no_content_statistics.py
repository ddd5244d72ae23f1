"""PostgreSQL keeps no planner statistics of content columns (commit 1aa5835).

`SET STATISTICS 0` on every column that holds what a user wrote or a run produced, so
`ANALYZE` (autovacuum's too) never samples content into `pg_statistic`, where no purge
reaches (CONTRACT §9.2). The list is frozen here as it was at that commit: a later content
column gets its `SET STATISTICS 0` in the revision that adds it (`tests/server/
test_schema_migrations.py` checks every `content_columns()` entry after an upgrade). SQLite
has no such statistics: nothing to do. Setting a target that is already 0 changes nothing,
so a database whose pre-Alembic build already ran this at start is unaffected.

Down from 0006_run_leases.
Never edit a released revision: add a new one (docs/server.md, "Schema migrations").
"""

from __future__ import annotations

from alembic import op

revision = "0007_no_content_statistics"
down_revision = "0006_run_leases"
branch_labels = None
depends_on = None

CONTENT_COLUMNS = (
    ("sessions", "title"),
    ("runs", "input"),
    ("approvals", "tool"),
    ("artifacts", "name"),
    ("checkpoints", "state"),
    ("events", "data"),
    ("memories", "text"),
    ("projections", "summary"),
    ("knowledge_documents", "title"),
    ("memory_rejections", "reason"),
    ("memory_words", "word"),
    ("tool_invocations", "tool"),
    ("tool_invocations", "output"),
)


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table, column in CONTENT_COLUMNS:
        op.execute(f'ALTER TABLE "{table}" ALTER COLUMN "{column}" SET STATISTICS 0')
