"""Versioned schema migrations of the server's database (Alembic), run at every start.

The revisions live in `server_stub/db/migrations/versions/`, one per schema change since the
first release (commit f22d25c, revision 0001). `upgrade_schema` brings any database this
build can serve to the head revision, in one transaction:

- a database with none of our tables is created from the models and stamped head (Alembic's
  documented practice for new databases; the models == head test keeps the two equal);
- a database made before Alembic (our tables, no `alembic_version`) is stamped 0001 (every
  release has that schema) and upgraded: the later revisions skip what its builds had
  already added at start (missing tables and nullable columns, never indexes);
- a database at a revision this build does not know (made by a newer build) is refused with
  a sentence (`SchemaError`), and nothing is written.

A fleet (CONTRACT §9.4) starts several processes on one PostgreSQL at once: the whole check
and upgrade runs under a transaction-level advisory lock, so one process upgrades and the
others, let in after its commit, find the head and do nothing. On SQLite the transaction is
`BEGIN IMMEDIATE` (the engine's), which serialises the same way. PostgreSQL DDL is
transactional: an upgrade that fails leaves the database at the revision it had.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, inspect, text

from server_stub.db.models import Base, content_columns

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

#: Where the migration scripts ship (package data: env.py, script.py.mako, versions/).
MIGRATIONS_DIR = Path(__file__).with_name("migrations")
#: The head revision, kept here so that a start on a database already at head reads one row
#: and never imports Alembic (a slow import for every server process, the desktop's bundled
#: one included). A new revision changes it too (a test compares it with the scripts' head).
HEAD_REVISION = "0008_session_index_items"
#: The revision of the first released schema: what a pre-Alembic database is stamped.
FIRST_REVISION = "0001_first_release"
#: The tables of the first release (revision 0001): a pre-Alembic database has all of them.
FIRST_RELEASE_TABLES = frozenset(
    {
        "approvals",
        "artifacts",
        "checkpoints",
        "consolidation_records",
        "deletion_outbox",
        "deletion_tombstones",
        "events",
        "knowledge_documents",
        "memories",
        "memory_rejections",
        "principal_versions",
        "projections",
        "recall_trace_items",
        "recall_traces",
        "runs",
        "server_meta",
        "sessions",
        "skill_revisions",
        "skills",
        "tool_invocations",
    }
)
#: Advisory-lock key pair of the schema upgrade ("SCHM", 1): a namespace apart from the
#: fleet's owner liveness locks (`server_stub.domain.bus`, "CONV").
LOCK_SPACE = 0x5343484D
LOCK_KEY = 1


class SchemaError(RuntimeError):
    """A database this build cannot serve; the message is a sentence for the operator."""


def alembic_config(connection: Connection | None = None) -> Config:
    """Alembic's configuration, built in code (no `alembic.ini`): the packaged scripts, and
    the connection `env.py` runs on."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("file_template", "%%(rev)s")  # ids are NNNN_slug already
    config.attributes["connection"] = connection
    return config


@functools.cache
def scripts() -> ScriptDirectory:
    """The revision scripts, read once per process (every test server opens a database)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config())


def head_revision() -> str:
    """The newest revision this build knows."""
    head = scripts().get_current_head()
    assert head is not None, "the migrations folder holds no revision"
    return head


def upgrade_schema(engine: Engine) -> str:
    """Bring the database to the head revision (see the module docstring); what was done,
    in words for the log ("created at …", "upgraded from … to …", "at …").

    SQLite: a batch revision rebuilds a table (copy, drop, rename), and dropping a table
    that rows refer to fails while foreign keys are enforced; the pragma cannot change
    inside a transaction, so enforcement is off on the raw connection around it, the
    references are checked once before the commit, and it is back on for the pool."""
    with engine.connect() as conn:
        raw = conn.connection.dbapi_connection if conn.dialect.name == "sqlite" else None
        if raw is not None:
            raw.execute("PRAGMA foreign_keys=OFF")
        try:
            with conn.begin():
                if conn.dialect.name == "postgresql":
                    conn.execute(
                        text("SELECT pg_advisory_xact_lock(:space, :key)"),
                        {"space": LOCK_SPACE, "key": LOCK_KEY},
                    )
                if _stored_revisions(conn) == [HEAD_REVISION]:
                    return f"at revision {HEAD_REVISION}"  # the usual start: no Alembic
                done = _bring_to_head(conn)
                if raw is not None:
                    _check_references(conn)
            return done
        finally:
            if raw is not None:
                raw.execute("PRAGMA foreign_keys=ON")


def schema_refusal(engine: Engine) -> str | None:
    """Why this build cannot serve the database, or None; reads only (the CLI's probe for a
    clean message before uvicorn starts, as for a SQLite file in use)."""
    with engine.connect() as conn:
        try:
            if _stored_revisions(conn) == [HEAD_REVISION]:
                return None
            from alembic.migration import MigrationContext

            _check_servable(conn, MigrationContext.configure(conn).get_current_revision())
        except SchemaError as exc:
            return str(exc)
        finally:
            conn.rollback()
    return None


def _stored_revisions(conn: Connection) -> list[str]:
    """The revisions `alembic_version` holds (none without the table), read without Alembic."""
    if not inspect(conn).has_table("alembic_version"):
        return []
    return list(conn.execute(text("SELECT version_num FROM alembic_version")).scalars())


def _bring_to_head(conn: Connection) -> str:
    from alembic import command
    from alembic.migration import MigrationContext

    context = MigrationContext.configure(conn)
    current = context.get_current_revision()
    head = head_revision()
    fresh = _check_servable(conn, current)
    if fresh:
        Base.metadata.create_all(conn)
        zero_content_statistics(conn)
        context.stamp(scripts(), head)
        return f"created at revision {head}"
    if current == head:
        return f"at revision {head}"
    if current is None:
        context.stamp(scripts(), FIRST_REVISION)  # made before Alembic (module docstring)
    command.upgrade(alembic_config(conn), head)
    return f"upgraded from {current or 'before revisions'} to {head}"


def _check_references(conn: Connection) -> None:
    """SQLite, foreign keys unenforced: raise `SchemaError` (the transaction rolls back) if
    the upgrade left a row referring to one that does not exist."""
    dangling = conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
    if dangling:
        tables = ", ".join(sorted({str(row[0]) for row in dangling}))
        raise SchemaError(
            f"the schema upgrade left {len(dangling)} rows whose foreign key refers to no row "
            f"(in {tables}), so it was not applied: report this to the server's developers"
        )


def _check_servable(conn: Connection, current: str | None) -> bool:
    """Raise `SchemaError` for a database this build cannot serve; True when it is empty
    of our tables (to be created)."""
    if current is not None:
        if _known(current):
            return False
        raise SchemaError(
            f"the database's schema is at revision {_shown(current)}, which this server does not "
            f"know (it knows up to {head_revision()}): it was upgraded by a newer version; "
            "run that version, or point --database at another database"
        )
    ours = set(inspect(conn).get_table_names()) & FIRST_RELEASE_TABLES
    if not ours:
        return True
    if ours != FIRST_RELEASE_TABLES:
        missing = ", ".join(sorted(FIRST_RELEASE_TABLES - ours))
        raise SchemaError(
            "the database holds some of the server's tables but not all of them (missing: "
            f"{missing}), so it was not made by any release: point --database at another "
            "database"
        )
    return False


def _shown(revision: str) -> str:
    """A revision id read from the database, inert for a terminal or a log: at most 64
    characters, quoted, everything outside printable ASCII escaped."""
    return ascii(revision[:64])


def _known(revision: str) -> bool:
    return revision in {script.revision for script in scripts().walk_revisions()}


def zero_content_statistics(conn: Connection) -> None:
    """PostgreSQL: `SET STATISTICS 0` on every content column of the models, so `ANALYZE`
    never samples a title or a message into `pg_statistic`, out of the purge's reach
    (CONTRACT §9.2). For a database created from the models; an upgraded one gets the same
    from its revisions (0007, and whichever adds a content column later)."""
    if conn.dialect.name != "postgresql":
        return
    for table, column in content_columns():
        conn.exec_driver_sql(f'ALTER TABLE "{table}" ALTER COLUMN "{column}" SET STATISTICS 0')
