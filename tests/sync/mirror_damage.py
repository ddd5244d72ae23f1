"""Realistic damage to a real mirror file (the fault campaign's kinds), for the repair tests.

Each function takes a closed mirror file and damages it the way a disk fault, a crash, a bad
copy or a hand edit would. The WAL is checkpointed into the main file first, so the damage
lands on the pages that hold the data.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from pathlib import Path

from sync.mirror import sqlite_driver

PAGE = 4096


def _checkpoint(path: Path) -> int:
    """Fold the WAL into the file; returns the page size."""
    conn = sqlite_driver.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return int(conn.execute("PRAGMA page_size").fetchone()[0])
    finally:
        conn.close()


def _root_page(path: Path, name: str) -> int:
    conn = sqlite_driver.connect(path)
    try:
        return int(
            conn.execute("SELECT rootpage FROM sqlite_master WHERE name=?", (name,)).fetchone()[0]
        )
    finally:
        conn.close()


def _overwrite(path: Path, offset: int, length: int) -> None:
    noise = random.Random(17).randbytes(length)
    with path.open("r+b") as fh:
        fh.seek(offset)
        fh.write(noise)


def btree_page(path: Path, table: str = "sessions") -> None:
    """Random bytes over a table's b-tree root page (the `sessions` table's by default)."""
    size = _checkpoint(path)
    _overwrite(path, (_root_page(path, table) - 1) * size, size)


def middle_bytes(path: Path) -> None:
    """Random bytes over the whole page in the middle of the file (whatever it holds)."""
    size = _checkpoint(path)
    pages = path.stat().st_size // size
    _overwrite(path, (pages // 2) * size, size)


def dropped_table(path: Path) -> None:
    """A table dropped (a hand edit, a tool "cleaning up")."""
    conn = sqlite_driver.connect(path)
    try:
        conn.execute("DROP TABLE sessions")
        conn.commit()
    finally:
        conn.close()


def truncated(path: Path) -> None:
    """The file cut short (a copy interrupted, a full disk during a checkpoint)."""
    size = _checkpoint(path)
    pages = path.stat().st_size // size
    with path.open("r+b") as fh:
        fh.truncate(size * max(2, pages // 2))


def not_sqlite(path: Path) -> None:
    """Something else entirely under the mirror's name."""
    _checkpoint(path)
    path.write_bytes(b"this is a text file, not a database\n" * 200)


def schema_name_not_utf8(path: Path) -> None:
    """A schema entry's name damaged into bytes that are not UTF-8: SQLite's account of the
    malformed schema quotes them, and every statement that reads the schema fails with it."""
    conn = sqlite_driver.connect(path)
    try:
        conn.execute("PRAGMA writable_schema=ON")
        conn.execute(
            "UPDATE sqlite_master SET name = CAST(X'73AA' AS TEXT),"
            " tbl_name = CAST(X'73AA' AS TEXT) WHERE name = 'ix_artifacts_session_id'"
        )
        conn.commit()
    finally:
        conn.close()


def index_entry_astray(path: Path) -> None:
    """The entry of the first stored event (row 1, its sequence 1) in the index of events by
    conversation pointing at row 0, which is not there (one bit of it flipped): every page
    stays well formed, so `quick_check` passes; a read through that entry is malformed."""
    size = _checkpoint(path)
    start = (_root_page(path, "ix_events_session_sequence") - 1) * size
    data = bytearray(path.read_bytes())
    # The entry's record: its header's size (4), a short text's serial type, and 9 twice
    # (the integers 1: the sequence, then the row id).
    found = re.search(rb"\x04[\x0d-\x7f]\x09\x09", bytes(data[start : start + size]))
    assert found is not None, "no index entry of row 1 on the index's root page"
    data[start + found.start() + 3] = 0x08  # the integer 0
    path.write_bytes(bytes(data))


def event_row_astray(path: Path, session_id: bytes = b"ses_1") -> None:
    """An event row's conversation id changed in the table (a byte of it), not in the index
    of events by conversation, which still finds the row under its old id: every page stays
    well formed, so `quick_check` passes."""
    size = _checkpoint(path)
    start = (_root_page(path, "events") - 1) * size
    data = bytearray(path.read_bytes())
    at = data.find(session_id, start, start + size)
    assert at >= 0, f"no event of {session_id!r} on the events table's root page"
    data[at + len(session_id) - 1] ^= 0x08  # "ses_1" becomes "ses_9"
    path.write_bytes(bytes(data))


def text_not_utf8(path: Path, text: bytes = b"Budget") -> None:
    """A byte of the first saved `text` (a title, a message) turned into one no UTF-8 text
    holds: every page stays well formed, and `integrity_check` passes; reading the value
    fails ("Could not decode to UTF-8")."""
    _checkpoint(path)
    data = bytearray(path.read_bytes())
    at = data.find(text)
    assert at >= 0, f"{text!r} is not in the file"
    data[at + 1] = 0xFF
    path.write_bytes(bytes(data))


DAMAGE: dict[str, Callable[[Path], None]] = {
    "btree_page": btree_page,
    "middle_bytes": middle_bytes,
    "dropped_table": dropped_table,
    "truncated": truncated,
    "not_sqlite": not_sqlite,
}
