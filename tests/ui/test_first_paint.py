"""Start-up paints the mirror's first rows before the engine and httpx are loaded, then all
rows, then attaches the engine; a missing, empty, older or damaged mirror still starts (the
normal path takes over). No timing here: the figures are `python -m bench ui`'s."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtGui import QGuiApplication

from app.desktop import Desktop, DesktopOptions
from app.first_paint import FIRST_ROWS, MirrorRows
from app.loop import ConvergeEventLoop
from bench.first_paint_child import TOKEN, UNREACHABLE
from sync import IndexChanged
from sync.mirror import sqlite_driver
from sync.mirror.schema import MIGRATIONS, SCHEMA_VERSION, read_schema_version, run_step
from sync.mirror.store import Mirror
from sync.profile.profile import Profile
from sync.wire.models import SessionView
from tests.sync.mirror_damage import schema_name_not_utf8
from tests.ui.conftest import run, until
from ui.window.controller import WindowController
from ui.window.main_window import MainWindow


@pytest.fixture(autouse=True)
def _no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CONVERGE_SERVER", "CONVERGE_TOKEN", "CONVERGE_SYNC_INTERVAL"):
        monkeypatch.delenv(name, raising=False)


def mirror_path(profile: Path) -> Path:
    return Profile(profile, server=UNREACHABLE, token=TOKEN).mirror_path


def fill(path: Path, n: int) -> list[str]:
    """n sessions, newest first in the returned ids (the sidebar's order)."""
    base = datetime(2026, 11, 1, tzinfo=UTC)
    views = []
    for i in range(n):
        at = (base + timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        views.append(SessionView(f"ses_{i:05d}", f"Conversation {i}", at, at, None, None))
    path.parent.mkdir(parents=True, exist_ok=True)
    mirror = Mirror.open(path)
    try:
        mirror.apply(views)
    finally:
        mirror.close()
    return [v.id for v in reversed(views)]


def test_the_first_rows_are_painted_before_the_engine_or_markdown_libraries_load(
    tmp_path: Path,
) -> None:
    """`converge` itself in a fresh process (the benchmark's child, which watches the real
    start-up path from outside), started twice, the second time with the window's saved
    state (as every start after the first): at the first paint with rows none of
    `HEAVY` is imported (SQLAlchemy, httpx, markdown-it, Pygments, `regex`, the conversation
    pane, the dialogs, the controller, the engine's events, the mirror's writer); then all
    rows arrive and the engine is attached; no code lexer is loaded while no conversation
    has been opened."""
    profile = tmp_path / "profile"
    rows = FIRST_ROWS + 200
    fill(mirror_path(profile), rows)
    for start in ("first", "with the saved window state"):
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "bench.first_paint_child",
                str(profile),
                str(time.time()),
                str(rows),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode == 0, result.stderr[-2000:]
        figures = json.loads(result.stdout.strip().splitlines()[-1])
        assert figures["heavy_at_paint"] == [], start
        assert figures["rows"] == rows
        assert figures["lexer_modules_at_idle"] == 0
    assert (profile / "window.json").is_file()


def test_rows_selected_in_the_first_page_stay_selected_when_all_rows_arrive(
    loop: ConvergeEventLoop, tmp_path: Path
) -> None:
    path = tmp_path / "m.sqlite3"
    ids = fill(path, FIRST_ROWS + 150)
    window = MainWindow()
    controller = WindowController(window, sync_interval=0)
    source = MirrorRows(path)

    async def scenario() -> None:
        controller.set_row_source(source.first_rows)
        await controller.refresh_now()
        assert [r.id for r in window.model.sessions()] == ids[:FIRST_ROWS]
        assert window.select_session(ids[FIRST_ROWS - 1])
        controller.set_row_source(source.rows)
        await controller.refresh_now()
        assert [r.id for r in window.model.sessions()] == ids
        assert window.current_id() == ids[FIRST_ROWS - 1]
        await controller.shutdown()
        await source.close()

    try:
        run(loop, scenario())
    finally:
        window.close()


async def _start_until_offline(desktop: Desktop) -> int:
    main = asyncio.ensure_future(desktop.main())
    window = desktop.window
    await until(lambda: "showing saved history" in window.status.text(), what="the offline status")
    assert window.isVisible()
    window.close()
    return await main


@pytest.mark.parametrize("state", ["missing", "empty"])
def test_start_up_without_rows_to_paint_takes_the_normal_path(
    loop: ConvergeEventLoop, tmp_path: Path, state: str
) -> None:
    profile = tmp_path / "profile"
    path = mirror_path(profile)
    if state == "empty":
        fill(path, 0)
    desktop = Desktop(DesktopOptions(profile, UNREACHABLE, TOKEN, 0.0))
    assert run(loop, _start_until_offline(desktop)) == 0
    assert desktop.window.model.rowCount() == 0
    assert read_schema_version(path) == SCHEMA_VERSION  # created by the normal path


def test_an_older_mirror_is_migrated_and_shown_by_the_normal_path(
    loop: ConvergeEventLoop, tmp_path: Path
) -> None:
    profile = tmp_path / "profile"
    path = mirror_path(profile)
    path.parent.mkdir(parents=True)
    conn = sqlite_driver.connect(path)
    for part in MIGRATIONS[0]:
        run_step(conn, part)
    stamp = "2026-11-29T10:00:00.000000Z"
    conn.execute(
        "INSERT INTO sessions (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
        ("ses_old", "Kept from an older version", stamp, stamp),
    )
    conn.execute("PRAGMA user_version=1")
    conn.commit()
    conn.close()
    desktop = Desktop(DesktopOptions(profile, UNREACHABLE, TOKEN, 0.0))
    assert run(loop, _start_until_offline(desktop)) == 0
    assert [r.id for r in desktop.window.model.sessions()] == ["ses_old"]
    assert read_schema_version(path) == SCHEMA_VERSION


def test_a_damaged_mirror_still_opens_the_window_and_says_so_in_words(
    loop: ConvergeEventLoop, tmp_path: Path
) -> None:
    profile = tmp_path / "profile"
    path = mirror_path(profile)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a database" * 100)
    desktop = Desktop(DesktopOptions(profile, UNREACHABLE, TOKEN, 0.0))

    async def scenario() -> int:
        main = asyncio.ensure_future(desktop.main())
        window = desktop.window
        await until(lambda: window.status.property("error") is True, what="an error status")
        assert window.isVisible()
        # Named as damage, with its way forward: not "Couldn't start."
        assert window.status.text() == "The saved conversations are damaged: press Rebuild."
        assert window.damage_banner.isVisible() and window.damage_banner.rebuild.isEnabled()
        assert "not a database" in desktop.window.status_line.details[1]
        assert "Traceback" not in desktop.window.status_line.details[1]
        window.close()
        return await main

    assert run(loop, scenario()) == 0


def test_a_schema_damaged_into_bytes_that_are_not_utf8_still_opens_the_window_as_damaged(
    loop: ConvergeEventLoop, tmp_path: Path
) -> None:
    """SQLite's message about such a schema cannot be decoded (a UnicodeDecodeError, not a
    database error): the first paint's reader leaves the file to the normal path, as for
    any other damage, which names it and offers the rebuild."""
    profile = tmp_path / "profile"
    path = mirror_path(profile)
    fill(path, 5)
    schema_name_not_utf8(path)
    desktop = Desktop(DesktopOptions(profile, UNREACHABLE, TOKEN, 0.0))

    async def scenario() -> int:
        main = asyncio.ensure_future(desktop.main())
        window = desktop.window
        await until(lambda: window.status.property("error") is True, what="an error status")
        assert window.status.text() == "The saved conversations are damaged: press Rebuild."
        assert window.damage_banner.isVisible() and window.damage_banner.rebuild.isEnabled()
        window.close()
        return await main

    assert run(loop, scenario()) == 0


def test_the_engine_goes_on_from_the_painted_rows_without_reading_them_again(
    loop: ConvergeEventLoop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attached to the mirror the first paint read, the engine is asked only what changed
    since the rows shown (a whole read would hold every row twice for a moment), and a row
    another process wrote in between still arrives."""
    import app.desktop
    from sync.engine import SyncEngine

    profile = tmp_path / "profile"
    path = mirror_path(profile)
    ids = fill(path, FIRST_ROWS + 50)
    asked: list[int | None] = []
    changes_since = SyncEngine.changes_since

    async def recording(
        self: SyncEngine, since: int | None, filter_text: str = "", limit: int | None = None
    ) -> object:
        asked.append(since)
        return await changes_since(self, since, filter_text, limit)

    monkeypatch.setattr(SyncEngine, "changes_since", recording)
    load_engine_class = app.desktop.load_engine_class
    at = "2026-12-01T00:00:00.000000Z"
    written: list[int] = []

    def written_meanwhile() -> type[SyncEngine]:
        mirror = Mirror.open(path)
        try:
            mirror.apply([SessionView("ses_meanwhile", "Written meanwhile", at, at, None, None)])
            written.append(mirror.changes_since(None).seq)
        finally:
            mirror.close()
        return load_engine_class()

    monkeypatch.setattr(app.desktop, "load_engine_class", written_meanwhile)
    desktop = Desktop(DesktopOptions(profile, UNREACHABLE, TOKEN, 0.0))

    async def scenario() -> int:
        main = asyncio.ensure_future(desktop.main())
        window = desktop.window
        await until(lambda: desktop.engine is not None, what="the engine attached")
        # What the engine says after a write: changed up to the mirror's last number.
        desktop.controller.sidebar.index_changed(IndexChanged(seq=written[0]))
        await until(
            lambda: [r.id for r in window.model.sessions()] == ["ses_meanwhile", *ids],
            what="the row written meanwhile",
        )
        window.close()
        return await main

    assert run(loop, scenario()) == 0
    assert asked and None not in asked


def test_what_is_typed_in_the_search_box_before_the_pane_is_built_still_filters(
    loop: ConvergeEventLoop, tmp_path: Path
) -> None:
    """The controller is built after the first paint: a search typed before it was there to
    hear it is still applied, to every row, once it is."""
    profile = tmp_path / "profile"
    fill(mirror_path(profile), FIRST_ROWS + 50)
    desktop = Desktop(DesktopOptions(profile, UNREACHABLE, TOKEN, 0.0))
    assert not desktop.window.has_pane
    desktop.window.filter.setText("Conversation 34")  # 34, 340..349
    run(loop, asyncio.sleep(0.4))  # the box's pause ends with no one to hear it

    async def scenario() -> int:
        main = asyncio.ensure_future(desktop.main())
        window = desktop.window
        await until(lambda: desktop.engine is not None, what="the engine attached")
        await until(lambda: len(window.model.sessions()) == 11, what="the search's rows")
        assert window.pane.isVisible() and window.pane.composer.isVisible()
        assert window.splitter.sizes()[1] > 0
        window.close()
        return await main

    assert run(loop, scenario()) == 0


def test_a_request_made_before_the_controller_is_built_reaches_it(
    loop: ConvergeEventLoop, tmp_path: Path
) -> None:
    """A shortcut, a row's menu or a toolbar button used while only the sidebar is shown
    builds the controller and is carried out, not dropped."""
    profile = tmp_path / "profile"
    ids = fill(mirror_path(profile), 5)
    desktop = Desktop(DesktopOptions(profile, UNREACHABLE, TOKEN, 0.0))
    assert not desktop.window.has_pane
    desktop.window.copy_id_requested.emit(ids[2])  # the row menu's "Copy id"
    clipboard = QGuiApplication.clipboard()
    assert clipboard is not None and clipboard.text() == ids[2]
    assert desktop.window.has_pane
    desktop.window.close()
    run(loop, desktop.stop())
