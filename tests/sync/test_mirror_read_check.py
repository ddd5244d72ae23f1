"""A large mirror opened only to be read (`converge ls`, `show`, `search`) is checked in
part, its rows table and schema, not page by page (`sync.mirror.check`, decision 0230):
damage a read meets is still named in words, damage it never reads leaves its answer
right, and the next sync still finds it. Real files, damaged as a disk fault would; the
size above which a mirror counts as large is lowered to make a small file one."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import pytest

import sync.mirror.check as check
from sync.cli import main as cli
from sync.errors import MirrorDamaged
from sync.mirror.store import Mirror
from sync.repair import salvage_marks
from tests.sync.mirror_damage import (
    btree_page,
    dropped_table,
    event_row_astray,
    index_entry_astray,
    not_sqlite,
    schema_name_not_utf8,
    text_not_utf8,
    truncated,
)
from tests.sync.test_cli_offline_cost import one_conversation


def search(capsys: pytest.CaptureFixture[str], profile: Path) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli.main(["search", "budget", "--profile", str(profile)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def large(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(check, "WHOLE_CHECK_BYTES", 0)


@pytest.mark.usefixtures("large")
def test_damage_the_search_never_reads_leaves_its_answer_and_the_sync_finds_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = one_conversation(tmp_path)
    btree_page(path, "artifacts")  # the index of cached files: a search never reads it
    code, out, err = search(capsys, tmp_path)
    assert (code, err) == (0, "")
    assert out.startswith("ses_1  t  Budget\n") and "the budget meeting" in out
    with pytest.raises(MirrorDamaged):  # what a sync or the window opens with
        Mirror.open(path, create=False)


DAMAGE_MET: dict[str, Callable[[Path], None]] = {
    "sessions_page": btree_page,
    "events_page": functools.partial(btree_page, table="events"),
    "dropped_table": dropped_table,
    "event_row_astray": event_row_astray,
    "index_entry_astray": index_entry_astray,
    "truncated": truncated,
    "not_sqlite": not_sqlite,
    "schema_name_not_utf8": schema_name_not_utf8,
    "text_not_utf8": text_not_utf8,
}


@pytest.mark.usefixtures("large")
@pytest.mark.parametrize("kind", sorted(DAMAGE_MET))
def test_damage_a_search_meets_is_named_in_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    path = one_conversation(tmp_path)
    DAMAGE_MET[kind](path)
    code, out, err = search(capsys, tmp_path)
    assert code == cli.EXIT_DAMAGED and out == ""
    assert "is damaged" in err and str(path) in err and "converge repair" in err
    assert "Traceback" not in err


def test_a_small_mirror_is_still_checked_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = one_conversation(tmp_path)
    btree_page(path, "artifacts")
    code, _out, err = search(capsys, tmp_path)
    assert code == cli.EXIT_DAMAGED and "converge repair" in err


@pytest.mark.parametrize("large", [False, True])
def test_a_schema_whose_damage_sqlite_reports_in_bytes_that_are_not_utf8_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, large: bool
) -> None:
    """SQLite's message about such a schema cannot be decoded (a UnicodeDecodeError, not a
    database error): the check names the damage instead of failing with it, so the window,
    a sync and `converge repair` see a damaged file, not an unexpected error; the repair
    reads no delete marks from it rather than fail the same way."""
    if large:
        monkeypatch.setattr(check, "WHOLE_CHECK_BYTES", 0)
    path = one_conversation(tmp_path)
    schema_name_not_utf8(path)
    assert check.find_damage(path) is not None
    with pytest.raises(MirrorDamaged):
        Mirror.open(path, create=False)
    assert salvage_marks(path) == ([], False)
