"""`sync.files.private_files`: a write lands inside its folder (checked after resolving every
symlink) and is owner-only whatever the umask; the profile, its accounts, the mirror with its
-wal and -shm, and the artifact cache follow the same rule (CONTRACT §10.1)."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from sync.errors import LocalFileError, UnsafePath
from sync.files.private_files import copy_private, inside, private_dir, write_private
from sync.files.private_log import PrivateRotatingFileHandler
from sync.mirror.store import Mirror
from sync.profile.profile import Profile


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.fixture(params=[0o022, 0o000], ids=["umask022", "umask000"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


@pytest.mark.parametrize(
    "name",
    ["..", "../x", "a/../../x", "/etc/passwd", "", ".", "a\x00b", "sub/../.."],
)
def test_inside_refuses_a_name_that_leaves_the_folder(tmp_path: Path, name: str) -> None:
    with pytest.raises(UnsafePath) as caught:
        inside(tmp_path, name)
    assert str(tmp_path.resolve()) in caught.value.message


def test_inside_follows_symlinks_before_it_decides(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "out").symlink_to(tmp_path)
    (folder / "in").symlink_to(folder / "real")
    for name in ("out", "out/x"):
        with pytest.raises(UnsafePath):
            inside(folder, name)
    assert inside(folder, "in") == (folder / "real").resolve()
    assert inside(folder, "C:\\x") == folder.resolve() / "C:\\x"  # one plain name on POSIX


def test_write_private_replaces_a_planted_symlink_pointing_inside_not_its_target(
    tmp_path: Path,
) -> None:
    (tmp_path / "keep.txt").write_text("kept")
    (tmp_path / "link.txt").symlink_to(tmp_path / "keep.txt")
    with pytest.raises(UnsafePath):
        write_private(tmp_path, "../escape.txt", "x")
    assert not (tmp_path.parent / "escape.txt").exists()
    written = write_private(tmp_path, "new.txt", b"bytes")
    assert written.read_bytes() == b"bytes"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt", "link.txt", "new.txt"]


def test_private_writes_are_0600_in_0700_folders_whatever_the_umask(
    tmp_path: Path, umask: int
) -> None:
    users = tmp_path / "Documents"
    users.mkdir()
    users.chmod(0o755)
    folder = users / "a" / "b"
    written = write_private(folder, "doc.md", "text")
    copied = copy_private(written, folder, "copy.md")
    assert (mode(written), mode(copied)) == (0o600, 0o600)
    assert (mode(users / "a"), mode(folder)) == (0o700, 0o700)
    assert mode(users) == 0o755  # a folder that existed is the user's: left as it is
    assert [p.name for p in folder.iterdir() if p.name.startswith(".")] == []


def test_a_failed_write_leaves_nothing_and_says_so_in_words(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    with pytest.raises(LocalFileError) as caught:
        write_private(tmp_path, "taken", b"x")
    assert "Could not write 'taken'" in caught.value.message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


def test_private_dir_makes_every_missing_level_0700(tmp_path: Path, umask: int) -> None:
    deep = private_dir(tmp_path / "x" / "y" / "z")
    assert [mode(p) for p in (deep.parent.parent, deep.parent, deep)] == [0o700] * 3


def test_the_profile_and_its_account_are_private_whatever_the_umask(
    tmp_path: Path, umask: int
) -> None:
    """Today's code made them 0755 and account.json 0644 under umask 022 (0777/0666 under
    000)."""
    profile = Profile(tmp_path / "profile", server="http://127.0.0.1:1", token="t")
    profile.ensure_dirs()
    account = profile.account_dir
    folders = [profile.root, profile.root / "accounts", account, profile.cache_dir]
    assert [mode(p) for p in folders] == [0o700] * 4
    assert mode(account / "account.json") == 0o600
    profile.save()
    assert mode(profile.settings_path) == 0o600


def test_an_older_profiles_readable_folders_and_files_are_tightened(tmp_path: Path) -> None:
    profile = Profile(tmp_path / "profile", server="http://127.0.0.1:1", token="t")
    profile.ensure_dirs()
    account = profile.account_dir
    for path in (profile.root / "accounts", account, profile.cache_dir):
        path.chmod(0o755)
    (account / "account.json").chmod(0o644)
    profile.ensure_dirs()
    assert [mode(p) for p in (profile.root / "accounts", account, profile.cache_dir)] == [0o700] * 3
    assert mode(account / "account.json") == 0o600


def test_the_mirror_and_its_wal_and_shm_are_0600_whatever_the_umask(
    tmp_path: Path, umask: int
) -> None:
    """SQLite gives -wal and -shm the database file's mode: the file is created 0600 first.
    Today's code let SQLite create it 0644 (umask 022) or 0666 (umask 000)."""
    path = tmp_path / "new" / "mirror.sqlite3"
    mirror = Mirror.open(path)
    try:
        mirror.mark_unconfirmed("ses_1")  # any write: the WAL and its index now exist
        wal, shm = (path.with_name(path.name + s) for s in ("-wal", "-shm"))
        assert wal.exists() and shm.exists()
        assert (mode(path), mode(wal), mode(shm)) == (0o600, 0o600, 0o600)
        assert mode(path.parent) == 0o700
    finally:
        mirror.close()


def test_an_older_mirror_left_readable_is_tightened_before_sqlite_opens_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "mirror.sqlite3"
    Mirror.open(path).close()
    path.chmod(0o644)
    mirror = Mirror.open(path)
    try:
        mirror.mark_unconfirmed("ses_1")
        assert mode(path) == 0o600
        assert mode(path.with_name(path.name + "-wal")) == 0o600
    finally:
        mirror.close()


def test_the_log_file_is_0600_rotates_0600_and_refuses_a_planted_symlink(
    tmp_path: Path, umask: int
) -> None:
    path = tmp_path / "converge.log"
    handler = PrivateRotatingFileHandler(path, maxBytes=200, backupCount=1, encoding="utf-8")
    record = logging.LogRecord("t", logging.INFO, __file__, 1, "x" * 150, None, None)
    try:
        handler.emit(record)
        handler.emit(record)  # over maxBytes: rotated
    finally:
        handler.close()
    assert mode(path) == 0o600 and mode(tmp_path / "converge.log.1") == 0o600
    path.unlink()
    victim = tmp_path / "victim"
    victim.write_text("")
    path.symlink_to(victim)
    with pytest.raises(OSError):
        PrivateRotatingFileHandler(path, encoding="utf-8")
    assert victim.read_text() == ""
