"""`read_mirror_rows`: `Mirror.rows` read with the standard library alone, read-only; None
(never an exception, never a new or changed file) for anything but a current mirror."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sync import read_mirror_rows
from sync.mirror import sqlite_driver
from sync.mirror.schema import MIGRATIONS, SCHEMA_VERSION, run_step
from sync.mirror.store import Mirror
from sync.wire.models import SessionView

TITLES = ["Trip to Lisbon", "STRASSE", "Straße", "café", "CAFÉ", "e\u0301te\u0301", None]
TITLES += ["100% sure", "snake_case", "back\\slash", "ǅemal", "ﬁle", ""]
ALPHABET = "aAsSßeÉé\u0301%_\\ǅﬁ0"


def view(sid: str, updated: str, title: str | None = "t") -> SessionView:
    return SessionView(sid, title, "2026-01-01T00:00:00.000000Z", updated, None, None)


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[Mirror]:
    m = Mirror.open(tmp_path / "m.sqlite3")
    stamps = [f"2026-01-0{day}T00:00:00.000000Z" for day in (1, 2, 3)]
    m.apply([view(f"ses_{i:03d}_Aß%_", stamps[i % 3], t) for i, t in enumerate(TITLES * 3)])
    try:
        yield m
    finally:
        m.close()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    needle=st.sampled_from(["", " ", "ses_00"])
    | st.text(alphabet="aAsSßeÉé\u0301%_\\ǅﬁ0", max_size=3),
    limit=st.none() | st.integers(min_value=0, max_value=50),
)
def test_the_rows_are_the_mirrors_in_its_order_and_filter(
    mirror: Mirror, needle: str, limit: int | None
) -> None:
    expected = mirror.rows(needle)
    got = read_mirror_rows(mirror.path, needle, limit)
    assert got == (expected if limit is None else expected[:limit])


def test_a_missing_mirror_gives_none_and_no_file(tmp_path: Path) -> None:
    assert read_mirror_rows(tmp_path / "m.sqlite3") is None
    assert list(tmp_path.iterdir()) == []


def test_an_empty_current_mirror_gives_no_rows(tmp_path: Path) -> None:
    Mirror.open(tmp_path / "m.sqlite3").close()
    assert read_mirror_rows(tmp_path / "m.sqlite3") == []


@pytest.mark.parametrize("version", [1, SCHEMA_VERSION + 1], ids=["older", "newer"])
def test_a_mirror_of_another_schema_gives_none_and_is_left_as_it_was(
    tmp_path: Path, version: int
) -> None:
    path = tmp_path / "m.sqlite3"
    conn = sqlite_driver.connect(path)
    for part in MIGRATIONS[0]:
        run_step(conn, part)
    conn.execute("INSERT INTO sessions (id, created_at, updated_at) VALUES ('ses_a', 'x', 'y')")
    conn.execute(f"PRAGMA user_version={version}")
    conn.commit()
    conn.close()
    before = digest(path)
    assert read_mirror_rows(path) is None
    assert digest(path) == before


def test_a_damaged_file_gives_none(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    path.write_bytes(b"not a database" * 100)
    assert read_mirror_rows(path) is None
    assert path.read_bytes() == b"not a database" * 100


def test_a_locked_mirror_gives_none_at_once_rather_than_waiting(mirror: Mirror) -> None:
    mirror.close()
    holder = sqlite_driver.connect(mirror.path)
    try:
        holder.execute("PRAGMA locking_mode=EXCLUSIVE")
        holder.execute("UPDATE sessions SET title = 'held' WHERE id = 'ses_000_Aß%_'")
        holder.commit()  # the exclusive lock stays with the connection
        assert read_mirror_rows(mirror.path) is None
    finally:
        holder.close()
    assert read_mirror_rows(mirror.path) is not None


def test_reading_never_writes_the_mirror(mirror: Mirror) -> None:
    mirror.close()
    before = digest(mirror.path)
    assert read_mirror_rows(mirror.path, "caf", 5)
    assert digest(mirror.path) == before
