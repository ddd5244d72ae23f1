"""The mirror's migrations, from every earlier schema version, on files that version's own
code wrote (`tests/sync/fixtures/mirror_v{N}.sqlite3`, made by `make_old_mirrors.py`).

Iterates over every version below `SCHEMA_VERSION` and requires a fixture for each: adding a
migration step without a fixture of the version it migrates from fails here.
"""

from __future__ import annotations

import shutil
from contextlib import closing
from pathlib import Path

import pytest

from sync.mirror import sqlite_driver
from sync.mirror.schema import SCHEMA_VERSION
from sync.mirror.store import Mirror

FIXTURES = Path(__file__).parent / "fixtures"

Rows = dict[str, tuple[tuple[str, ...], set[tuple[object, ...]]]]
#: Tables a later step builds again from the rows (the title index's segments).
REBUILT = "search_titles_"


def _rows(path: Path, like: Rows | None = None) -> Rows:
    """Every row of every table (only `like`'s tables and columns when given)."""
    with closing(sqlite_driver.connect(path)) as conn:
        tables = (
            list(like)
            if like is not None
            else [
                name
                for (name,) in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table'"
                    " AND name NOT LIKE 'sqlite_%' AND sql NOT LIKE 'CREATE VIRTUAL%'"
                )
            ]
        )
        rows: Rows = {}
        for table in tables:
            if like is not None:
                columns = like[table][0]
            else:
                columns = tuple(r[1] for r in conn.execute(f'PRAGMA table_info("{table}")'))
            listed = ", ".join(f'"{c}"' for c in columns)
            rows[table] = (columns, set(conn.execute(f'SELECT {listed} FROM "{table}"')))
        return rows


def _schema(path: Path) -> dict[str, object]:
    """Every table's and index's shape as SQLite reports it (not their `CREATE` text, which
    an `ALTER TABLE` writes differently from a `CREATE TABLE` with the same columns)."""
    with closing(sqlite_driver.connect(path)) as conn:
        shape: dict[str, object] = {}
        for kind, name, table in conn.execute(
            "SELECT type, name, tbl_name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
        ):
            if kind == "table":
                shape[name] = [tuple(r) for r in conn.execute(f'PRAGMA table_info("{name}")')]
            elif kind == "index":
                columns = [tuple(r) for r in conn.execute(f'PRAGMA index_xinfo("{name}")')]
                shape[name] = (table, columns)
        return shape


@pytest.mark.parametrize("version", range(1, SCHEMA_VERSION))
def test_a_mirror_written_by_an_earlier_version_is_migrated_with_every_row_kept(
    version: int, tmp_path: Path
) -> None:
    fixture = FIXTURES / f"mirror_v{version}.sqlite3"
    assert fixture.exists(), (
        f"no fixture of mirror schema version {version}: a migration step was added without "
        "one (tests/sync/fixtures/make_old_mirrors.py makes it with that version's code)"
    )
    path = tmp_path / "mirror.sqlite3"
    shutil.copyfile(fixture, path)
    with closing(sqlite_driver.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (version,)
    before = _rows(path)
    assert all(rows for _columns, rows in before.values()), "rows in every table"
    # Step 7 builds the title index again (decision 0232): its segments are new.
    before = {table: rows for table, rows in before.items() if not table.startswith(REBUILT)}

    mirror = Mirror.open(path)
    try:
        assert mirror.schema_version() == SCHEMA_VERSION
        assert {row.id for row in mirror.rows()} == {row[0] for row in before["sessions"][1]}
        assert mirror.get_state("sessions_first_page_etag") == '"v1-etag"'
        assert mirror.cached_file("art_fixture0") is not None
    finally:
        mirror.close()
    after = _rows(path, like=before)
    added = {table: rows - before[table][1] for table, (_columns, rows) in after.items()}
    assert {table: rows - after[table][1] for table, (_columns, rows) in before.items()} == {
        table: set() for table in before
    }, "every row kept"
    # Step 4 numbers what was there: the mirror's change sequence starts at 1.
    numbered = {("change_seq", "1")} if version < 4 else set()
    assert added == {table: numbered if table == "sync_state" else set() for table in before}
    mirror = Mirror.open(path)
    try:
        if version >= 4:  # step 5 filled the short index from the events already there
            assert [hit.id for hit in mirror.search("紅葉")] == ["ses_fixture0"]
        # Step 7 filled both title indexes: every row is found by its title and by its id.
        for row in mirror.rows():
            assert row in mirror.rows(row.id), row.id
            if row.title:
                assert row in mirror.rows(row.title), row.title
    finally:
        mirror.close()

    fresh = tmp_path / "fresh.sqlite3"
    Mirror.open(fresh).close()
    assert _schema(path) == _schema(fresh), "a migrated file has the schema of a new one"


def test_a_migrated_mirror_numbers_its_rows_and_goes_on_counting_after_reopen(
    tmp_path: Path,
) -> None:
    path = tmp_path / "mirror.sqlite3"
    shutil.copyfile(FIXTURES / "mirror_v3.sqlite3", path)  # from before step 4 numbered rows
    mirror = Mirror.open(path)
    try:
        numbered = mirror.changes_since(0)
        assert (numbered.seq, numbered.whole) == (1, False)
        assert {row.id for row in numbered.rows} == {row.id for row in mirror.rows()}
        assert numbered.removed == ["ses_removed_fixture"]
        assert mirror.changes_since(1).rows == []
        renamed = mirror.rows()[0]._replace(title="Renamed")
        assert mirror.apply([renamed]).seq == 2
    finally:
        mirror.close()
    reopened = Mirror.open(path)
    try:
        since_one = reopened.changes_since(1)
        assert (since_one.seq, since_one.rows, since_one.removed) == (2, [renamed], [])
        assert reopened.apply((), [renamed.id]).seq == 3
    finally:
        reopened.close()
