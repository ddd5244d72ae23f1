"""A damaged mirror is named, and `converge repair` rebuilds it from the server: real
SQLite files damaged the ways the fault campaign found, a real stub server, the
command line as a user runs it (a subprocess per command)."""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sync.errors import MirrorDamaged
from sync.mirror import sqlite_driver
from sync.mirror.check import find_damage
from sync.mirror.reader import read_mirror_rows
from sync.mirror.store import Mirror
from sync.repair import MAX_ID_LENGTH, MAX_MARKS, salvage_marks
from tests.sync.helpers import Server, run
from tests.sync.mirror_damage import (
    DAMAGE,
    btree_page,
    dropped_table,
    index_entry_astray,
    text_not_utf8,
)
from tests.sync.test_cli_live import conn, converge, ls_json

EXIT_DAMAGED = 6


def mirror_file(profile: Path) -> Path:
    (path,) = (profile / "accounts").glob("*/mirror.sqlite3")
    return path


def synced_profile(live_server: Any, tmp_path: Path, titles: list[str]) -> tuple[Path, list[str]]:
    async def setup() -> list[str]:
        async with Server(live_server.url) as server:
            return [(await server.create(t)).id for t in titles]

    ids = run(setup())
    profile = tmp_path / "p"
    first = converge("sync", *conn(live_server.url, profile))
    assert first.returncode == 0, first.stderr
    return profile, ids


def server_ids(url: str) -> set[str]:
    async def read() -> set[str]:
        async with Server(url) as server:
            return set(await server.index())

    return run(read())


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_sync_over_a_damaged_mirror_fails_and_names_the_repair(
    live_server: Any, tmp_path: Path, kind: str
) -> None:
    profile, _ids = synced_profile(live_server, tmp_path, ["one", "two", "three"])
    path = mirror_file(profile)
    DAMAGE[kind](path)
    # The index is unchanged since the last sync: the 304 shortcut must not hide the damage.
    result = converge("sync", *conn(live_server.url, profile))
    assert result.returncode == EXIT_DAMAGED, (result.stdout, result.stderr)
    assert "is damaged" in result.stderr and str(path) in result.stderr
    assert "converge repair" in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""
    listed = converge("ls", "--profile", str(profile))
    assert listed.returncode == EXIT_DAMAGED and "converge repair" in listed.stderr


@pytest.mark.parametrize("kind", ["btree_page", "not_sqlite", "truncated"])
def test_repair_rebuilds_exactly_the_servers_rows(
    live_server: Any, tmp_path: Path, kind: str
) -> None:
    profile, _ids = synced_profile(live_server, tmp_path, ["one", "two", "three"])
    path = mirror_file(profile)
    cache = path.parent / "cache"
    (cache / "art_orphan").write_bytes(b"bytes of an artifact the old index named")
    DAMAGE[kind](path)

    async def change() -> None:  # the server moves on meanwhile: the rebuild follows it
        async with Server(live_server.url) as server:
            await server.create("four")

    run(change())
    result = converge("repair", *conn(live_server.url, profile))
    assert result.returncode == 0, result.stderr
    assert "Rebuilt" in result.stdout and "4 conversation(s)" in result.stdout
    assert find_damage(path) is None
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not list(path.parent.glob("*.rebuild*")) and not list(path.parent.glob("*damaged*"))
    assert not (cache / "art_orphan").exists()  # its index went with the old file
    assert {row["id"] for row in ls_json(profile)} == server_ids(live_server.url)
    again = converge("sync", *conn(live_server.url, profile))
    assert again.returncode == 0, again.stderr
    assert "index unchanged" in again.stdout


@pytest.mark.parametrize("damage", ["index_entry_astray", "text_not_utf8"])
def test_damage_quick_check_passes_that_a_read_meets_is_named_and_repaired(
    live_server: Any, tmp_path: Path, damage: str
) -> None:
    """`quick_check` neither compares an index with its table nor decodes a text: a search
    through an index entry pointing at no row, or reading a title whose bytes are not UTF-8,
    failed as "Cannot read the mirror" (exit 1), and `converge repair` called the file sound.
    After such a read, and in a repair, the check is thorough (`integrity_check`, every text
    decoded): the damage is named and the repair rebuilds."""
    titles = ["meeting one", "meeting two", "meeting three"]
    profile, _ids = synced_profile(live_server, tmp_path, titles)
    path = mirror_file(profile)
    if damage == "index_entry_astray":
        index_entry_astray(path)
    else:
        text_not_utf8(path, b"meeting")
    found = converge("search", "meeting", "--profile", str(profile))
    assert found.returncode == EXIT_DAMAGED, (found.stdout, found.stderr)
    assert "is damaged" in found.stderr and "converge repair" in found.stderr
    repaired = converge("repair", *conn(live_server.url, profile))
    assert repaired.returncode == 0 and "Rebuilt" in repaired.stdout, repaired
    again = converge("search", "meeting", "--profile", str(profile))
    assert again.returncode == 0 and again.stdout.count("meeting") == 6, again


def test_repair_retries_a_salvaged_unconfirmed_delete(live_server: Any, tmp_path: Path) -> None:
    profile, ids = synced_profile(live_server, tmp_path, ["keep", "deleted, answer lost"])
    path = mirror_file(profile)
    mirror = Mirror.open(path)
    try:
        mirror.mark_unconfirmed(ids[1])  # as a delete whose answer never came leaves it
    finally:
        mirror.close()
    btree_page(path)  # the sessions' pages are lost; the marks' table is intact
    result = converge("repair", *conn(live_server.url, profile))
    assert result.returncode == 0, result.stderr
    assert "1 earlier delete(s) are now confirmed" in result.stdout
    assert server_ids(live_server.url) == {ids[0]}  # the delete was retried on the server
    assert [row["id"] for row in ls_json(profile)] == [ids[0]]


def test_repair_says_when_the_delete_marks_could_not_be_read(
    live_server: Any, tmp_path: Path
) -> None:
    profile, ids = synced_profile(live_server, tmp_path, ["one", "two"])
    path = mirror_file(profile)
    dropped_table(path)
    db = sqlite_driver.connect(path)
    db.execute("DROP TABLE unconfirmed_deletes")
    db.commit()
    db.close()
    result = converge("repair", *conn(live_server.url, profile))
    assert result.returncode == 0, result.stderr
    assert "could not be read" in result.stdout and "may come back" in result.stdout
    assert "could not be read" in result.stderr
    assert {row["id"] for row in ls_json(profile)} == set(ids)


def test_repair_with_the_server_unreachable_changes_nothing(
    live_server: Any, tmp_path: Path
) -> None:
    profile, _ids = synced_profile(live_server, tmp_path, ["one"])
    path = mirror_file(profile)
    btree_page(path)
    before = path.read_bytes()
    live_server.stop()
    result = converge("repair", *conn(live_server.url, profile))
    assert result.returncode == 1 and "repair failed" in result.stderr
    assert "left as it was" in result.stderr and "Traceback" not in result.stderr
    assert path.read_bytes() == before
    assert not list(path.parent.glob("*.rebuild*"))


def test_repair_of_a_sound_mirror_changes_nothing(live_server: Any, tmp_path: Path) -> None:
    profile, _ids = synced_profile(live_server, tmp_path, ["one"])
    path = mirror_file(profile)
    before = path.read_bytes()
    result = converge("repair", *conn(live_server.url, profile))
    assert result.returncode == 0 and "not damaged" in result.stdout
    assert path.read_bytes() == before


def folder_listing(folder: Path) -> dict[str, bytes | None]:
    """Every name in `folder` with a file's bytes (None for a folder): what a repair that
    changed nothing leaves exactly as it was."""
    return {p.name: (p.read_bytes() if p.is_file() else None) for p in sorted(folder.iterdir())}


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """`folder` read-only for this process: its mode for a user, a read-only bind mount for
    root (whom modes do not stop); skips where such a mount is not permitted."""
    if os.geteuid() != 0:
        folder.chmod(0o500)
        try:
            yield
        finally:
            folder.chmod(0o700)
        return
    mounts = [["mount", "--bind", str(folder), str(folder)]]
    mounts.append(["mount", "-o", "remount,bind,ro", str(folder)])
    for i, command in enumerate(mounts):
        done = subprocess.run(command, capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            if i:
                subprocess.run(["umount", str(folder)], capture_output=True, timeout=30)
            pytest.skip(f"cannot mount a read-only folder here: {done.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True, timeout=30, check=True)


@pytest.mark.parametrize("force", [False, True])
def test_repair_of_a_folder_in_the_mirrors_place_says_so_and_leaves_nothing(
    live_server: Any, tmp_path: Path, force: bool
) -> None:
    """A folder where the mirror file belongs is neither "not damaged" nor something to
    rebuild over: the user is told what is there, and no half-built file stays beside it."""
    profile, _ids = synced_profile(live_server, tmp_path, ["one"])
    path = mirror_file(profile)
    for name in path.parent.glob(path.name + "*"):
        name.unlink()
    path.mkdir()
    before = folder_listing(path.parent)
    extra = ["--force"] if force else []
    result = converge("repair", *extra, *conn(live_server.url, profile))
    assert result.returncode == 1 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert "is a folder" in line and str(path) in line and "Traceback" not in line
    assert folder_listing(path.parent) == before


@pytest.mark.parametrize("case", ["sound", "sound, forced", "damaged"])
def test_repair_in_a_read_only_folder_says_so_and_leaves_nothing(
    live_server: Any, tmp_path: Path, case: str
) -> None:
    """Neither a rebuild nor the file it replaces can be written there: the user is told the
    folder is read-only, not that the mirror is sound, and the folder stays as it was."""
    profile, _ids = synced_profile(live_server, tmp_path, ["one"])
    path = mirror_file(profile)
    if case == "damaged":
        btree_page(path)
    before = folder_listing(path.parent)
    extra = ["--force"] if case == "sound, forced" else []
    with read_only(path.parent):
        result = converge("repair", *extra, *conn(live_server.url, profile))
        after = folder_listing(path.parent)
    assert result.returncode == 1 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert "read-only" in line and str(path.parent) in line and "Traceback" not in line
    assert after == before


def test_a_rebuild_that_cannot_take_the_mirrors_place_leaves_no_file_behind(
    live_server: Any, tmp_path: Path
) -> None:
    """The last step, the new file renamed over the old, can still fail (here the old one is
    a mount point: EBUSY, which no check beforehand foresees); the rebuilt file is removed
    and the failure is one sentence."""
    if os.geteuid() != 0:
        pytest.skip("mounting a file over the mirror needs root")
    profile, _ids = synced_profile(live_server, tmp_path, ["one"])
    path = mirror_file(profile)
    stand_in = tmp_path / "stand-in.sqlite3"
    stand_in.write_bytes(path.read_bytes())
    done = subprocess.run(
        ["mount", "--bind", str(stand_in), str(path)], capture_output=True, text=True, timeout=30
    )
    if done.returncode != 0:
        pytest.skip(f"cannot bind-mount a file here: {done.stderr.strip()}")
    try:
        result = converge("repair", "--force", *conn(live_server.url, profile))
    finally:
        subprocess.run(["umount", str(path)], capture_output=True, timeout=30, check=True)
    assert result.returncode == 1 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert "repair failed" in line and str(path) in line and "Traceback" not in line
    assert sorted(p.name for p in path.parent.iterdir()) == ["account.json", "cache", path.name]


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_a_damaged_mirror_is_named_in_process_and_the_first_paint_reader_survives(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "mirror.sqlite3"
    mirror = Mirror.open(path)
    try:
        from sync.wire.models import SessionView

        mirror.apply(
            [
                SessionView(
                    f"ses_{i:04d}",
                    f"title {i}",
                    "2026-01-01T00:00:00Z",
                    "2026-01-01T00:00:00Z",
                    None,
                    None,
                )
                for i in range(300)
            ]
        )
    finally:
        mirror.close()
    DAMAGE[kind](path)
    rows = read_mirror_rows(path)  # the window's first paint: no crash, at worst no rows
    assert rows is None or isinstance(rows, list)
    with pytest.raises(MirrorDamaged) as caught:
        Mirror.open(path, create=False)
    assert str(path) in caught.value.message and "converge repair" in caught.value.message


def test_damage_met_after_open_is_named_not_a_raw_database_error(tmp_path: Path) -> None:
    from sync.wire.models import SessionView

    path = tmp_path / "mirror.sqlite3"
    mirror = Mirror.open(path)
    try:
        mirror.apply(
            [SessionView("ses_1", "t", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", None, None)]
        )
        mirror.close()
        mirror = Mirror.open(path)
        dropped_table(path)  # behind the open mirror's back
        with pytest.raises(MirrorDamaged):
            mirror.rows()
        with pytest.raises(MirrorDamaged):  # a complete walk's look for rows it did not see
            mirror.unseen_since(0.0)
        with pytest.raises(MirrorDamaged):
            mirror.apply(
                [
                    SessionView(
                        "ses_2", "t", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", None, None
                    )
                ]
            )
    finally:
        mirror.close()


def test_salvaged_delete_marks_are_bounded_and_only_text_ids(tmp_path: Path) -> None:
    """A damaged file is hostile input: its marks are read as ids, bounded in count and
    length, and anything that is not text is dropped."""
    path = tmp_path / "mirror.sqlite3"
    db = sqlite_driver.connect(path)
    db.execute("CREATE TABLE unconfirmed_deletes (session_id, since)")
    rows: list[tuple[object, float]] = [(f"ses_{i:06d}", 0.0) for i in range(MAX_MARKS + 500)]
    rows += [(7, 0.0), (b"\x00blob", 0.0), ("x" * 10_000, 0.0), ("", 0.0), (None, 0.0)]
    db.executemany("INSERT INTO unconfirmed_deletes VALUES (?, ?)", rows[::-1])
    db.commit()
    db.close()
    ids, readable = salvage_marks(path)
    assert readable
    assert 0 < len(ids) <= MAX_MARKS
    assert all(isinstance(i, str) and 0 < len(i) <= MAX_ID_LENGTH for i in ids)
    assert salvage_marks(tmp_path / "absent.sqlite3") == ([], True)
    (tmp_path / "junk").write_bytes(b"not sqlite" * 100)
    assert salvage_marks(tmp_path / "junk") == ([], False)


def test_a_pass_that_meets_damage_reports_it_and_the_engine_says_damaged(
    live_server: Any, tmp_path: Path
) -> None:
    from sync.engine import SyncEngine
    from sync.events import EngineState
    from sync.profile.profile import Profile

    async def scenario() -> None:
        async with Server(live_server.url) as server:
            await server.create("one")
        profile = Profile(tmp_path / "p", server=live_server.url, token="dev-alice")
        engine = await SyncEngine.open(profile)
        try:
            assert (await engine.reconcile()).error is None
            db = sqlite_driver.connect(profile.mirror_path)  # behind the open engine's back
            db.execute("DROP TABLE sync_state")
            db.commit()
            db.close()
            report = await engine.reconcile()  # an unchanged index: the 304 path
            assert isinstance(report.error, MirrorDamaged)
            assert engine.status.state is EngineState.DAMAGED
            assert "converge repair" in engine.status.message
        finally:
            await engine.close()

    run(scenario())


def test_a_salvaged_delete_the_server_refuses_stays_marked_after_repair(
    live_server: Any, tmp_path: Path
) -> None:
    """The retried delete is refused (a run is active: 409): the conversation stays marked
    "delete not confirmed" in the new mirror, as it was in the damaged one."""

    async def setup() -> tuple[str, str]:
        async with Server(live_server.url) as server:
            view = await server.create()
            return view.id, await server.start(view.id, "/wait 20")

    sid, run_id = run(setup())
    profile = tmp_path / "p"
    assert converge("sync", *conn(live_server.url, profile)).returncode == 0
    path = mirror_file(profile)
    mirror = Mirror.open(path)
    try:
        mirror.mark_unconfirmed(sid)
    finally:
        mirror.close()
    btree_page(path)
    result = converge("repair", *conn(live_server.url, profile))
    assert result.returncode == 0, result.stderr
    assert "1 earlier delete(s) are still not confirmed" in result.stdout
    listed = converge("ls", "--profile", str(profile))
    assert f"{sid}" in listed.stdout and "[delete not confirmed]" in listed.stdout

    async def stop() -> None:
        async with Server(live_server.url) as server:
            await server.api.cancel_run(run_id)

    run(stop())
