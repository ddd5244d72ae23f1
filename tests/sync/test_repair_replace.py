"""The rebuilt mirror takes the damaged one's place with every row it was given, even when
its last checkpoint did not finish (a reader held older frames when the engine closed)."""

from __future__ import annotations

import shutil
from pathlib import Path

from sync.mirror import sqlite_driver
from sync.repair import REBUILD_SUFFIX, _replace


def test_the_rows_a_rebuild_left_in_its_wal_reach_the_replaced_mirror(tmp_path: Path) -> None:
    path = tmp_path / "mirror.sqlite3"
    path.write_bytes(b"not a database at all")
    built = tmp_path / "built.sqlite3"
    writer = sqlite_driver.connect(built)
    try:
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("PRAGMA wal_autocheckpoint=0")  # every row stays in the WAL
        writer.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY)")
        writer.executemany("INSERT INTO sessions VALUES (?)", [("one",), ("two",)])
        writer.commit()
        fresh = path.with_name(path.name + REBUILD_SUFFIX)
        # the pair as the closed engine left it: the main file, and a WAL not yet copied back
        shutil.copyfile(built, fresh)
        shutil.copyfile(built.with_name(built.name + "-wal"), fresh.with_name(fresh.name + "-wal"))
    finally:
        writer.close()

    _replace(fresh, path)

    reader = sqlite_driver.connect(path)
    try:
        assert reader.execute("SELECT id FROM sessions ORDER BY id").fetchall() == [
            ("one",),
            ("two",),
        ]
    finally:
        reader.close()
    assert not fresh.with_name(fresh.name + "-wal").exists()
