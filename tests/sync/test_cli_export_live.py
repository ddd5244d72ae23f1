"""`converge export ID --out PATH [--format markdown|json]` (CONTRACT §11) as a user runs it:
a subprocess against a REAL stub server, with a conversation whose content names a file
`../../.config/autostart/x.desktop` and two files called `notes.txt`."""

from __future__ import annotations

import base64
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.sync.helpers import Server, run
from tests.sync.test_cli_live import conn, converge

HOSTILE = "../../.config/autostart/x.desktop"


def files_and_folders(root: Path) -> tuple[list[Path], list[Path]]:
    files: list[Path] = []
    folders: list[Path] = []
    for top, dirs, names in os.walk(root):
        folders += [Path(top) / d for d in dirs]
        files += [Path(top) / n for n in names]
    return files, folders


@pytest.fixture
def hostile_conversation(live_server: Any) -> str:
    async def setup() -> str:
        async with Server(live_server.url) as server:
            sid = (await server.create("Trip")).id
            for text in (
                f"/artifact {HOSTILE} [Desktop Entry]",
                "/artifact notes.txt one",
                "/artifact notes.txt two",
            ):
                await server.wait_run(await server.start(sid, text))
            return sid

    return run(setup())


def test_export_writes_every_file_under_the_chosen_folder_0600_whatever_the_umask(
    live_server: Any, hostile_conversation: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    autostart = home / ".config" / "autostart"
    autostart.mkdir(parents=True)
    out = home / "exports" / "trip.md"  # `exports` does not exist yet: created 0700
    profile = tmp_path / "profile"
    old = os.umask(0o000)  # the child inherits it
    try:
        result = converge(
            "export", hostile_conversation, "--out", str(out), *conn(live_server.url, profile)
        )
    finally:
        os.umask(old)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"exported {hostile_conversation} to {out}\n"
    written, folders = files_and_folders(home)
    assert sorted(str(p.relative_to(home)) for p in written) == [
        "exports/trip files/_.._.config_autostart_x.desktop",
        "exports/trip files/notes (2).txt",
        "exports/trip files/notes.txt",
        "exports/trip.md",
    ]
    assert list(autostart.iterdir()) == []
    files_dir = home / "exports" / "trip files"
    assert (files_dir / "notes.txt").read_text() == "one"
    assert (files_dir / "notes (2).txt").read_text() == "two"
    markdown = out.read_text(encoding="utf-8")
    assert "📎 [notes.txt](trip%20files/notes%20%282%29.txt)" in markdown
    assert f"📎 [{HOSTILE}](trip%20files/_.._.config_autostart_x.desktop)" in markdown
    # Everything the client made, in the export and in its profile (mirror, cache): private.
    profile_files, profile_folders = files_and_folders(profile)
    assert {stat.S_IMODE(p.stat().st_mode) for p in written + profile_files} == {0o600}
    made = [p for p in folders if p not in (home / ".config", autostart)]
    made += [profile, *profile_folders]
    assert {stat.S_IMODE(p.stat().st_mode) for p in made} == {0o700}


def test_export_json_carries_every_file_and_its_bytes(
    live_server: Any, hostile_conversation: str, tmp_path: Path
) -> None:
    out = tmp_path / "trip.json"
    result = converge(
        "export",
        "--format",
        "json",
        hostile_conversation,
        *conn(live_server.url, tmp_path / "profile"),
        "--out",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["session"]["id"] == hostile_conversation
    names = [(a["name"], base64.b64decode(a["content_base64"])) for a in document["artifacts"]]
    assert names == [(HOSTILE, b"[Desktop Entry]"), ("notes.txt", b"one"), ("notes.txt", b"two")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["profile", "trip.json"]


def test_export_of_an_unknown_conversation_says_so_and_exits_one(
    live_server: Any, tmp_path: Path
) -> None:
    out = tmp_path / "x.md"
    result = converge(
        "export", "ses_missing", "--out", str(out), *conn(live_server.url, tmp_path / "p")
    )
    assert result.returncode == 1
    assert result.stderr.startswith("converge: ") and "Traceback" not in result.stderr
    assert not out.exists()


def test_export_refuses_a_symlink_planted_as_its_files_folder(
    live_server: Any, hostile_conversation: str, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    chosen = tmp_path / "chosen"
    chosen.mkdir()
    (chosen / "trip files").symlink_to(elsewhere, target_is_directory=True)
    result = converge(
        "export",
        hostile_conversation,
        "--out",
        str(chosen / "trip.md"),
        *conn(live_server.url, tmp_path / "p"),
    )
    assert result.returncode == 1
    assert "would not be inside the folder" in result.stderr, result.stderr
    assert list(elsewhere.iterdir()) == [] and not (chosen / "trip.md").exists()


def test_export_offline_writes_this_devices_copy_and_marks_the_files_it_does_not_hold(
    live_server: Any, hostile_conversation: str, tmp_path: Path
) -> None:
    """CONTRACT §11 lists export with the commands that work offline: with the server
    stopped, an export writes what the mirror holds, the same document an online export
    wrote, and a file whose bytes were never fetched is marked rather than lost silently."""

    async def other() -> str:
        async with Server(live_server.url) as server:
            sid = (await server.create("Plans")).id
            await server.wait_run(await server.start(sid, "/artifact plan.txt draft"))
            return sid

    plans = run(other())
    profile = tmp_path / "profile"
    args = conn(live_server.url, profile)
    assert converge("sync", *args).returncode == 0
    online, offline = tmp_path / "online", tmp_path / "offline"
    for fmt, name in (("markdown", "trip.md"), ("json", "trip.json")):
        done = converge(
            "export", hostile_conversation, "--format", fmt, "--out", str(online / name), *args
        )
        assert done.returncode == 0, done.stderr
    live_server.stop()

    for fmt, name in (("markdown", "trip.md"), ("json", "trip.json")):
        done = converge(
            "export", hostile_conversation, "--format", fmt, "--out", str(offline / name), *args
        )
        assert done.returncode == 0, done.stderr
        assert "this device's copy" in done.stdout and "Traceback" not in done.stderr
    assert (offline / "trip.md").read_bytes() == (online / "trip.md").read_bytes()
    for name in ("notes.txt", "notes (2).txt", "_.._.config_autostart_x.desktop"):
        assert (offline / "trip files" / name).read_bytes() == (
            online / "trip files" / name
        ).read_bytes()
    was, now = (
        json.loads((d / "trip.json").read_text(encoding="utf-8")) for d in (online, offline)
    )
    assert now["session"] == was["session"] and now["events"] == was["events"]
    assert [(a["id"], a["name"], a["content_base64"]) for a in now["artifacts"]] == [
        (a["id"], a["name"], a["content_base64"]) for a in was["artifacts"]
    ]

    partial = converge("export", plans, "--out", str(offline / "plans.md"), *args)
    assert partial.returncode == 0, partial.stderr
    assert "1 file was not on this device" in partial.stdout
    assert "📎 plan.txt (not available)" in (offline / "plans.md").read_text(encoding="utf-8")
    assert not (offline / "plans files").exists()

    before = sorted(p.name for p in offline.iterdir())
    unknown = converge("export", "ses_nowhere", "--out", str(offline / "x.md"), *args)
    assert unknown.returncode == 1 and "ses_nowhere" in unknown.stderr
    assert "Traceback" not in unknown.stderr
    assert sorted(p.name for p in offline.iterdir()) == before


@pytest.mark.parametrize("trailing", ["", "/"], ids=["folder", "folder-slash"])
def test_export_to_a_folder_is_refused_before_anything_is_written(
    live_server: Any, hostile_conversation: str, tmp_path: Path, trailing: str
) -> None:
    """`--out DIR` wrote the files folder `DIR files` beside it, then failed on the
    document; `--out new/` wrote a document named `new`. Both are refused up front."""
    chosen = tmp_path / "chosen"
    chosen.mkdir()
    for out in (str(chosen) + trailing, str(chosen / "new") + "/"):
        result = converge(
            "export", hostile_conversation, "--out", out, *conn(live_server.url, tmp_path / "p")
        )
        assert result.returncode == 1, out
        assert "name the file to write" in result.stderr and "Traceback" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "p") == ["chosen"]
    assert list(chosen.iterdir()) == []  # no `new`, no `chosen files`, no document
