"""Write a new schema revision from a change to the models (a developer's tool).

    .venv/bin/python -m server_stub.db.new_revision "index versions per principal"

Builds a throwaway SQLite database by running every existing revision (not from the models,
which already hold the change), lets Alembic's autogenerate diff it against the models, and
writes `server_stub/db/migrations/versions/NNNN_slug.py` with the next number. Read and edit
what it wrote before committing (docs/server.md, "Schema migrations"): autogenerate sees
tables, columns, types, nullability, indexes and foreign keys, not data moves or
PostgreSQL-only settings such as `SET STATISTICS 0` on a new content column.
"""

from __future__ import annotations

import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from alembic import command
from sqlalchemy import create_engine

from server_stub.db.schema import alembic_config, scripts

#: Alembic's version table holds at most 32 characters per revision id.
MAX_REVISION_ID = 32


def revision_id(message: str, existing: int) -> str:
    """`NNNN_words_of_the_message`, cut to what `alembic_version` can hold."""
    slug = re.sub(r"[^a-z0-9]+", "_", message.lower()).strip("_") or "change"
    return f"{existing + 1:04d}_{slug}"[:MAX_REVISION_ID].rstrip("_")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: one argument, the revision's one-line description."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1 or not args[0].strip():
        print('usage: python -m server_stub.db.new_revision "what changes"', file=sys.stderr)
        return 2
    message = args[0].strip()
    count = sum(1 for _ in scripts().walk_revisions())
    with tempfile.TemporaryDirectory() as folder:
        engine = create_engine(f"sqlite:///{Path(folder) / 'head.sqlite3'}")
        try:
            with engine.begin() as conn:
                config = alembic_config(conn)
                command.upgrade(config, "head")
                script = command.revision(
                    config, message, autogenerate=True, rev_id=revision_id(message, count)
                )
        finally:
            engine.dispose()
    written = script if not isinstance(script, list) else script[0]
    print(f"wrote {written.path if written is not None else '(nothing)'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
