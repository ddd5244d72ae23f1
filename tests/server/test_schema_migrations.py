"""The server's schema migrations (Alembic): old databases upgraded with their data, head ==
models, a fleet upgrading at once, a newer database refused in words.

The old databases are `tests/server/fixtures/first_release.*`, made by the first release's
own code (commit f22d25c, `fixtures/make_old_databases.py`), before there were revisions.
"""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Engine, create_engine, inspect, text

from server_stub.db.engine import Database
from server_stub.db.models import INDEX_ITEM_KEYS, Base, content_columns
from server_stub.db.schema import (
    FIRST_RELEASE_TABLES,
    LOCK_KEY,
    LOCK_SPACE,
    SchemaError,
    head_revision,
)
from server_stub.domain.indexlease import LEASE_KEY
from tests.conftest import PG_BIN, PostgresCluster, ServerFactory
from tests.server.conftest import wait_until

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[2]
Rows = dict[str, tuple[tuple[str, ...], set[tuple[str, ...]]]]


def _load_old(backend: str, tmp_path: Path, cluster: PostgresCluster | None) -> str:
    """A copy of the first release's database (the SQLite file, or the PostgreSQL dump
    loaded into a new database); its URL."""
    if backend == "sqlite":
        path = tmp_path / "old.sqlite3"
        shutil.copyfile(FIXTURES / "first_release.sqlite3", path)
        return f"sqlite:///{path}"
    assert cluster is not None
    url = cluster.new_database()
    subprocess.run(
        [
            str(PG_BIN / "psql"),
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            "127.0.0.1",
            "-p",
            str(cluster.port),
            "-U",
            "postgres",
            "-d",
            url.rsplit("/", 1)[1],
            "-f",
            str(FIXTURES / "first_release.postgres.sql"),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return url


@pytest.fixture
def old_database(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """The first release's database on the parametrized backend."""
    cluster = request.getfixturevalue("postgres_cluster") if backend == "postgres" else None
    return _load_old(backend, tmp_path, cluster)


def _engine(url: str) -> Engine:
    return create_engine(url)


def _all_rows(url: str, like: Rows | None = None) -> Rows:
    """Every row of every first-release table: (column names, rows as tuples). `like`:
    read only the columns it has (an upgraded table has more)."""
    engine = _engine(url)
    try:
        with engine.connect() as conn:
            found = inspect(conn)
            rows: Rows = {}
            for table in sorted(FIRST_RELEASE_TABLES):
                if like is None:
                    columns = tuple(sorted(c["name"] for c in found.get_columns(table)))
                else:
                    columns = like[table][0]
                listed = ", ".join(f'"{c}"' for c in columns)
                result = conn.execute(text(f'SELECT {listed} FROM "{table}"'))
                rows[table] = (columns, {tuple(map(repr, row)) for row in result})
            # The index-cache lease's row (PostgreSQL) is state a running server adds, not
            # data: `server_stub.domain.indexlease`.
            meta_columns, meta_rows = rows["server_meta"]
            lease = repr(LEASE_KEY)
            rows["server_meta"] = (meta_columns, {r for r in meta_rows if lease not in r})
            return rows
    finally:
        engine.dispose()


def _schema_diff(url: str) -> list[Any]:
    engine = _engine(url)
    try:
        with engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    finally:
        engine.dispose()
    # PostgreSQL's generated index item is no model column (`models.INDEX_ITEM_DDL`).
    return [d for d in diff if d[0] != "remove_column" or (d[2], d[3].name) != _INDEX_ITEM]


_INDEX_ITEM = ("sessions", "index_item")


def _revision(url: str) -> str | None:
    engine = _engine(url)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()


def test_a_first_release_database_is_upgraded_keeps_every_row_and_is_served(
    old_database: str, server_factory: ServerFactory, backend: str
) -> None:
    before = _all_rows(old_database)
    assert all(rows for _columns, rows in before.values()), "rows in every table"
    server = server_factory(backend=backend, database_url=old_database)
    assert _revision(old_database) == head_revision()
    assert _all_rows(old_database, like=before) == before
    alice = server.client()
    page = alice.get("/v1/sessions")
    assert page.status_code == 200, page.text
    listed = [item["id"] for item in page.json()["items"]]
    assert len(listed) == 3
    columns, sessions = before["sessions"]
    assert {f"'{sid}'" for sid in listed} <= {row[columns.index("id")] for row in sessions}
    for sid in listed:
        view = alice.get(f"/v1/sessions/{sid}")
        assert view.status_code == 200 and view.json()["id"] == sid
        events = alice.get(f"/v1/sessions/{sid}/events")
        assert events.status_code == 200 and events.json()["items"]
    assert alice.delete(f"/v1/sessions/{listed[0]}").status_code == 204
    assert alice.get(f"/v1/sessions/{listed[0]}").status_code == 404
    assert len(alice.get("/v1/sessions").json()["items"]) == 2


def test_an_upgraded_first_release_database_matches_the_models_exactly(
    old_database: str,
) -> None:
    """Head == models, compared the way autogenerate does (tables, columns, types,
    nullability, indexes, foreign keys). Fails too when someone changes the models without
    adding a revision: the upgraded database then lacks the change (docs/server.md)."""
    db = Database(old_database)
    try:
        assert db.create_schema().startswith("upgraded from before revisions")
    finally:
        db.dispose()
    assert _schema_diff(old_database) == []


def test_a_database_built_by_every_revision_from_empty_matches_the_models(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The revisions alone build the models' schema (new databases are created from the
    models and stamped head instead, which is quicker: docs/server.md)."""
    from alembic import command

    from server_stub.db.schema import alembic_config

    if backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'empty.sqlite3'}"
    else:
        url = request.getfixturevalue("postgres_cluster").new_database()
    db = Database(url)
    try:
        with db.engine.connect() as conn, conn.begin():
            command.upgrade(alembic_config(conn), "head")
        assert db.create_schema() == f"at revision {head_revision()}"
    finally:
        db.dispose()
    assert _schema_diff(url) == []


@pytest.mark.postgres
def test_an_upgraded_postgres_database_keeps_no_statistics_of_any_content_column(
    tmp_path: Path, postgres_cluster: PostgresCluster
) -> None:
    url = _load_old("postgres", tmp_path, postgres_cluster)
    db = Database(url)
    try:
        db.create_schema()
        with db.engine.connect() as conn:
            targets = {
                (table, column): target
                for table, column, target in conn.exec_driver_sql(
                    "SELECT c.relname, a.attname, a.attstattarget FROM pg_attribute a"
                    " JOIN pg_class c ON c.oid = a.attrelid"
                    " JOIN pg_namespace n ON n.oid = c.relnamespace"
                    " WHERE n.nspname = current_schema() AND a.attnum > 0"
                )
            }
    finally:
        db.dispose()
    generated = [*content_columns(), _INDEX_ITEM]
    assert {column: targets[column] for column in generated} == {column: 0 for column in generated}


@pytest.mark.postgres
def test_an_upgraded_postgres_database_stores_every_sessions_index_item(
    tmp_path: Path, postgres_cluster: PostgresCluster
) -> None:
    """Revision 0008 fills `sessions.index_item` for every existing row: the bytes the
    serializer writes for the row's view (`server_stub.db.models.INDEX_ITEM_DDL`)."""
    url = _load_old("postgres", tmp_path, postgres_cluster)
    db = Database(url)
    try:
        db.create_schema()
        with db.engine.connect() as conn:
            rows = conn.exec_driver_sql(
                f"SELECT index_item, {', '.join(INDEX_ITEM_KEYS)} FROM sessions"
            ).all()
    finally:
        db.dispose()
    assert rows
    for stored, *values in rows:
        view = dict(zip(INDEX_ITEM_KEYS, values, strict=True))
        assert stored == json.dumps(view, ensure_ascii=False, separators=(",", ":"))


@pytest.mark.postgres
def test_two_processes_upgrading_one_postgres_database_at_once_both_succeed(
    tmp_path: Path, postgres_cluster: PostgresCluster
) -> None:
    """A fleet starting together (CONTRACT §9.4): the test holds the upgrade's advisory
    lock until both processes wait on it, then lets them race; one upgrades, the other
    finds the head."""
    url = _load_old("postgres", tmp_path, postgres_cluster)
    script = (
        "import sys\nfrom server_stub.db.engine import Database\n"
        "db = Database(sys.argv[1])\nprint(db.create_schema())\ndb.dispose()\n"
    )
    dbname = url.rsplit("/", 1)[1]
    conninfo = f"host=127.0.0.1 port={postgres_cluster.port} user=postgres dbname={dbname}"
    with psycopg.connect(conninfo) as holder:
        holder.execute("SELECT pg_advisory_lock(%s, %s)", (LOCK_SPACE, LOCK_KEY))
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", script, url],
                cwd=REPO,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        try:
            with psycopg.connect(conninfo, autocommit=True) as watcher:

                def both_wait() -> bool:
                    ended = [p.communicate() for p in procs if p.poll() is not None]
                    assert not ended, f"a process did not wait: {ended}"
                    row = watcher.execute(
                        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
                        " AND classid = %s AND objid = %s AND NOT granted",
                        (LOCK_SPACE, LOCK_KEY),
                    ).fetchone()
                    return row is not None and row[0] >= 2

                wait_until(both_wait, timeout=60)
            holder.execute("SELECT pg_advisory_unlock(%s, %s)", (LOCK_SPACE, LOCK_KEY))
            outputs = [p.communicate(timeout=120) for p in procs]
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
    assert [p.returncode for p in procs] == [0, 0], outputs
    said = sorted(out.strip() for out, _err in outputs)
    assert said == [
        f"at revision {head_revision()}",
        f"upgraded from before revisions to {head_revision()}",
    ]
    assert _schema_diff(url) == []


def _stamp_unknown(url: str, revision: str = "9999_from_later") -> None:
    db = Database(url)
    try:
        db.create_schema()
        with db.engine.begin() as conn:
            conn.execute(text("UPDATE alembic_version SET version_num = :v"), {"v": revision})
    finally:
        db.dispose()


def test_a_database_from_a_newer_build_is_refused_with_a_sentence(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'newer.sqlite3'}"
    else:
        url = request.getfixturevalue("postgres_cluster").new_database()
    _stamp_unknown(url)
    db = Database(url)
    try:
        with pytest.raises(SchemaError) as refused:
            db.create_schema()
    finally:
        db.dispose()
    message = str(refused.value)
    assert "9999_from_later" in message and head_revision() in message
    assert "newer version" in message
    assert _revision(url) == "9999_from_later"  # nothing written


def test_the_cli_refuses_a_newer_database_in_words_without_a_traceback(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'newer.sqlite3'}"
    _stamp_unknown(url)
    done = subprocess.run(
        [sys.executable, "-m", "server_stub.cli", "--database", url, "--port", "0"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert "converge-server: the database's schema is at revision '9999_from_later'" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_hostile_revision_id_is_shown_inert_and_bounded(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'hostile.sqlite3'}"
    _stamp_unknown(url, "\x1b]0;owned\x07\u202e" + "x" * 20)
    db = Database(url)
    try:
        with pytest.raises(SchemaError) as refused:
            db.create_schema()
    finally:
        db.dispose()
    message = str(refused.value)
    assert message.isascii() and all(ch.isprintable() for ch in message)
    assert "\\x1b]0;owned\\x07\\u202e" in message


def test_a_first_release_database_that_later_builds_started_is_upgraded_too(
    old_database: str,
) -> None:
    """What the builds before revisions did at start to an older database: create the
    missing tables and add the missing nullable columns (never indexes). The guarded
    revisions 0004-0006 then find part of their work done."""
    engine = _engine(old_database)
    try:
        with engine.begin() as conn:
            Base.metadata.create_all(conn)
            outbox = Base.metadata.tables["deletion_outbox"]
            for name in ("last_error", "last_attempt_at"):
                kind = outbox.c[name].type.compile(dialect=conn.dialect)
                conn.exec_driver_sql(f'ALTER TABLE deletion_outbox ADD COLUMN "{name}" {kind}')
    finally:
        engine.dispose()
    db = Database(old_database)
    try:
        assert db.create_schema().startswith("upgraded from before revisions")
    finally:
        db.dispose()
    assert _schema_diff(old_database) == []


def test_a_database_with_only_some_of_the_servers_tables_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'partial.sqlite3'}"
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE sessions (id TEXT PRIMARY KEY)")
    engine.dispose()
    db = Database(url)
    try:
        with pytest.raises(SchemaError, match="not made by any release"):
            db.create_schema()
    finally:
        db.dispose()


def test_a_new_revision_id_is_numbered_next_and_fits_alembics_version_table() -> None:
    from server_stub.db.new_revision import MAX_REVISION_ID, revision_id

    assert revision_id("Index versions, per user!", 7) == "0008_index_versions_per_user"
    long = revision_id("a very long description of a schema change " * 3, 41)
    assert long.startswith("0042_") and len(long) <= MAX_REVISION_ID
    assert not long.endswith("_")
    assert revision_id("…", 0) == "0001_change"


def _with_throwaway_revision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, upgrade_body: str
) -> str:
    """The packaged migrations plus one revision after head (`upgrade_body` indented in its
    `upgrade()`), in a copy under `tmp_path` that `server_stub.db.schema` uses for the test;
    the new revision's id. Nothing is added to the shipped `versions/`."""
    from server_stub.db import schema

    copy = tmp_path / "migrations"
    shutil.copytree(schema.MIGRATIONS_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    revision = "9000_throwaway_batch"
    (copy / "versions" / f"{revision}.py").write_text(
        f'"""A revision for one test."""\n\nfrom alembic import op\n\n'
        f'revision = "{revision}"\ndown_revision = "{head_revision()}"\n'
        "branch_labels = None\ndepends_on = None\n\n\n"
        f"def upgrade() -> None:\n    {upgrade_body}\n"
    )
    monkeypatch.setattr(schema, "MIGRATIONS_DIR", copy)
    monkeypatch.setattr(schema, "HEAD_REVISION", revision)
    # A cache of its own, so the process's cache of the shipped scripts is left as it was.
    monkeypatch.setattr(schema, "scripts", functools.cache(schema.scripts.__wrapped__))
    return revision


def _sqlite_at_head_with_rows(tmp_path: Path) -> str:
    url = _load_old("sqlite", tmp_path, None)
    db = Database(url)
    try:
        db.create_schema()
    finally:
        db.dispose()
    return url


def test_a_batch_revision_rebuilding_a_referenced_sqlite_table_is_applied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite's batch operations rebuild a table (copy, drop, rename): with foreign keys
    enforced inside the upgrade's transaction, dropping `sessions` while events refer to it
    fails, and every server would refuse to start. The upgrade turns enforcement off around
    its transaction and checks the references once before it commits."""
    url = _sqlite_at_head_with_rows(tmp_path)
    before, at = _all_rows(url), head_revision()
    revision = _with_throwaway_revision(
        tmp_path,
        monkeypatch,
        'with op.batch_alter_table("sessions", recreate="always"):\n        pass',
    )
    db = Database(url)
    try:
        assert db.create_schema() == f"upgraded from {at} to {revision}"
        with db.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    finally:
        db.dispose()
    assert _all_rows(url, like=before) == before


def test_a_sqlite_revision_leaving_a_dangling_reference_is_refused_and_rolled_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = _sqlite_at_head_with_rows(tmp_path)
    at = head_revision()
    _with_throwaway_revision(tmp_path, monkeypatch, 'op.execute("DELETE FROM sessions")')
    db = Database(url)
    try:
        with pytest.raises(SchemaError, match="foreign key"):
            db.create_schema()
    finally:
        db.dispose()
    assert _revision(url) == at
    assert _all_rows(url)["sessions"][1]


def test_the_head_constant_is_the_scripts_head() -> None:
    """`HEAD_REVISION` spares a start at head the import of Alembic; a new revision must
    move it (docs/server.md, "Adding a revision")."""
    from server_stub.db.schema import HEAD_REVISION, scripts

    assert scripts().get_current_head() == HEAD_REVISION


def test_a_start_on_a_database_at_head_never_imports_alembic(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'head.sqlite3'}"
    db = Database(url)
    try:
        db.create_schema()
    finally:
        db.dispose()
    script = (
        "import sys\nfrom server_stub.db.engine import Database\n"
        "from server_stub.db.schema import schema_refusal\n"
        "db = Database(sys.argv[1])\nassert schema_refusal(db.engine) is None\n"
        "print(db.create_schema())\ndb.dispose()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'alembic'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, url],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.splitlines() == [f"at revision {head_revision()}", "[]"]
