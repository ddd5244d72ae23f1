"""PostgreSQL's planner statistics never hold conversation content (CONTRACT §9.2).

`ANALYZE` (run by autovacuum whenever a table has changed enough) copies sampled column
values into `pg_statistic`: the most common values and the histogram bounds of each
column. For a title or a message that is a copy of the content in a catalog the purge
cannot reach, and it outlives the delete until the next analyze, its dead tuple until
`pg_statistic` itself is vacuumed. The content columns are marked in the models and get
`SET STATISTICS 0`, so `ANALYZE` samples nothing of them.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from server_stub.db.models import content_columns
from tests.conftest import ServerFactory
from tests.server.conftest import new_session, run_to_end, start_run

MARKER = "Zqstatmarker"


@pytest.mark.postgres
def test_analyze_samples_no_conversation_content(
    postgres_cluster: Any, server_factory: ServerFactory
) -> None:
    url = postgres_cluster.new_database()
    server = server_factory(backend="postgres", database_url=url)
    alice = server.client("dev-alice")
    for n in range(4):  # a few distinct values: ANALYZE keeps them all as histogram bounds
        for text in (
            f"{MARKER} plain {n}",
            f"/remember {MARKER} note {n}",
            f"/artifact {MARKER}{n}.txt body {n}",
            f"/approve {MARKER}tool{n}",
        ):
            session_id = new_session(alice)
            if text.startswith("/approve"):
                start_run(alice, session_id, text)
            else:
                run_to_end(alice, session_id, text)
    with psycopg.connect(url.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute("ANALYZE")
        rows = conn.execute(
            "SELECT tablename, attname, most_common_vals::text, histogram_bounds::text"
            " FROM pg_stats WHERE schemaname = 'public'"
        ).fetchall()
    holding = sorted(
        f"{table}.{column}"
        for table, column, common, bounds in rows
        if MARKER in (common or "") or MARKER in (bounds or "")
    )
    assert holding == []


def test_every_content_column_is_marked() -> None:
    """The columns that hold what a user wrote or a run produced (titles, messages, model
    output, tool input and output, artifact names, memory and knowledge text)."""
    assert set(content_columns()) >= {
        ("sessions", "title"),
        ("runs", "input"),
        ("events", "data"),
        ("checkpoints", "state"),
        ("projections", "summary"),
        ("approvals", "tool"),
        ("tool_invocations", "tool"),
        ("tool_invocations", "output"),
        ("artifacts", "name"),
        ("memories", "text"),
        ("memory_words", "word"),
        ("memory_rejections", "reason"),
        ("knowledge_documents", "title"),
    }
