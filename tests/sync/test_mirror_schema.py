"""The mirror's typed models and its migration steps describe one schema."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import create_engine, inspect

from sync.mirror.migrations import SCHEMA_VERSION
from sync.mirror.schema import SEARCH_TABLES, Base
from sync.mirror.store import Mirror


def test_the_migrations_build_exactly_the_tables_the_models_describe(tmp_path: Path) -> None:
    Mirror.open(tmp_path / "m.sqlite3").close()  # built by the migration steps
    engine = create_engine(f"sqlite:///{tmp_path / 'm.sqlite3'}")
    try:
        found = inspect(engine)
        assert set(found.get_table_names()) == set(Base.metadata.tables) | SEARCH_TABLES
        for table in Base.metadata.sorted_tables:
            columns = {c["name"]: c for c in found.get_columns(table.name)}
            assert set(columns) == {c.name for c in table.columns}, table.name
            for column in table.columns:
                assert columns[column.name]["nullable"] == (
                    column.nullable and not column.primary_key
                ), f"{table.name}.{column.name}"
            assert set(found.get_pk_constraint(table.name)["constrained_columns"]) == {
                c.name for c in table.primary_key.columns
            }
            assert {i["name"] for i in found.get_indexes(table.name)} == {
                i.name for i in table.indexes
            }, table.name
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA user_version").scalar_one() == SCHEMA_VERSION
    finally:
        engine.dispose()
