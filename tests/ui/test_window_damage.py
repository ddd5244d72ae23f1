"""A damaged mirror in the window: the banner names it and offers Rebuild,
never "Loading conversations…" for ever; pressed, the mirror is rebuilt from the server and
the list fills. The real application object against a real stub server."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from app.desktop import Desktop, DesktopOptions
from app.loop import ConvergeEventLoop
from sync import EngineState, EngineStatus
from tests.sync.helpers import Server
from tests.sync.helpers import run as run_sync
from tests.sync.mirror_damage import btree_page
from tests.sync.test_cli_live import conn, converge
from tests.ui.conftest import run, until
from ui.window.damage_banner import FAILED
from ui.window.main_window import LOADING

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


@pytest.fixture(autouse=True)
def _no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CONVERGE_SERVER", "CONVERGE_TOKEN", "CONVERGE_SYNC_INTERVAL"):
        monkeypatch.delenv(name, raising=False)


def test_a_damaged_mirror_shows_the_banner_and_rebuild_fills_the_list(
    loop: ConvergeEventLoop, live_server: Any, tmp_path: Path
) -> None:
    async def setup() -> set[str]:
        async with Server(live_server.url) as server:
            for i in range(3):
                await server.create(f"chat {i}")
            return set(await server.index())

    on_server = run_sync(setup())
    profile = tmp_path / "profile"
    assert converge("sync", *conn(live_server.url, profile)).returncode == 0
    (mirror,) = (profile / "accounts").glob("*/mirror.sqlite3")
    btree_page(mirror)
    desktop = Desktop(DesktopOptions(profile, live_server.url, "dev-alice", 0.0))

    async def scenario() -> int:
        main = asyncio.ensure_future(desktop.main())
        window = desktop.window
        banner = window.damage_banner
        await until(banner.isVisible, what="the damage banner")
        assert banner.rebuild.isEnabled() and banner.rebuild.text() == "Rebuild"
        assert "damaged" in banner.text.text()
        assert window.sidebar_empty.text() != LOADING
        assert str(mirror) in banner.toolTip()
        if os.environ.get("CONVERGE_SHOTS"):
            window.resize(900, 420)
            await asyncio.sleep(0)
            window.grab().save(str(SHOTS / "damaged-mirror-banner.png"))
        QTest.mouseClick(banner.rebuild, Qt.MouseButton.LeftButton)

        def rebuilt() -> bool:
            # A failed rebuild says so at once, with its reason, rather than as a timeout.
            assert banner.text.text() != FAILED, banner.toolTip()
            return {s.id for s in window.model.sessions()} == on_server

        await until(rebuilt, timeout=30, what="the server's rows")
        assert not banner.isVisible()
        window.close()
        return await main

    assert run(loop, scenario()) == 0


def test_damage_met_by_a_pass_shows_the_banner(loop: ConvergeEventLoop) -> None:
    from ui.window.controller import WindowController
    from ui.window.main_window import DAMAGED_STATUS, MainWindow

    window = MainWindow()
    controller = WindowController(window)
    message = "The saved copy of your conversations (/x/mirror.sqlite3) is damaged (…)."
    try:
        controller.presenter.show(EngineStatus(EngineState.DAMAGED, message))
        assert not window.damage_banner.isHidden()
        assert "press Rebuild" in window.status.text()
        assert window.sidebar_empty.text() == DAMAGED_STATUS
        # The engine's next timer pass neither flips the line to "Syncing…" nor the
        # sidebar back to "No conversations yet".
        controller.presenter.show(EngineStatus(EngineState.SYNCING))
        assert window.status.text() == DAMAGED_STATUS
        controller.presenter.show(EngineStatus(EngineState.DAMAGED, message))
        assert window.sidebar_empty.text() == DAMAGED_STATUS
    finally:
        run(loop, controller.shutdown())
        window.close()


def test_a_rebuild_that_fails_with_an_os_error_offers_rebuild_again(
    loop: ConvergeEventLoop,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Replacing the file can fail outside `SyncError` (a full disk, a folder made
    read-only): the banner leaves "Rebuilding…", Rebuild is offered again, the status says
    so in words and the log keeps the traceback."""
    from app import mirror_rebuild
    from sync import Profile
    from ui.window.main_window import MainWindow

    async def replace_fails(profile: Profile, *, force: bool) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(mirror_rebuild, "load_repair", lambda: replace_fails)
    window = MainWindow()
    window.show_damage("/x/mirror.sqlite3: database disk image is malformed")
    profile = Profile(tmp_path, server="http://127.0.0.1:9", token="dev-alice")
    try:
        assert run(loop, mirror_rebuild.rebuild(window, profile)) is False
        banner = window.damage_banner
        assert banner.text.text() == FAILED and banner.rebuild.isEnabled()
        assert not banner.isHidden()
        assert window.status.text() == FAILED and "Traceback" not in window.status.text()
        assert any(r.exc_info and isinstance(r.exc_info[1], OSError) for r in caplog.records)
    finally:
        window.close()


def _damaged_profile(live_server: Any, tmp_path: Path) -> Path:
    """A profile whose dev-alice mirror (synced by the real CLI) has a broken b-tree page."""
    profile = tmp_path / "profile"
    assert converge("sync", *conn(live_server.url, profile)).returncode == 0
    (mirror,) = (profile / "accounts").glob("*/mirror.sqlite3")
    btree_page(mirror)
    return profile


def test_switching_to_another_account_clears_the_damage_of_the_one_before(
    loop: ConvergeEventLoop, live_server: Any, tmp_path: Path
) -> None:
    """Alice's mirror is damaged; Settings switches to Bob, whose mirror is sound: the
    banner goes, and a Rebuild pressed after that rebuilds nothing."""
    from ui.dialogs.settings import ConnectionSettings

    desktop = Desktop(
        DesktopOptions(_damaged_profile(live_server, tmp_path), live_server.url, "dev-alice", 0.0)
    )

    async def scenario() -> int:
        main = asyncio.ensure_future(desktop.main())
        banner = desktop.window.damage_banner
        await until(banner.isVisible, what="the damage banner")
        await desktop.reconnect(ConnectionSettings(live_server.url, "dev-bob"))
        engine = desktop.engine
        assert engine is not None and banner.isHidden()
        await desktop.rebuild()
        assert desktop.engine is engine
        desktop.window.close()
        return await main

    assert run(loop, scenario()) == 0


def test_a_rebuild_pressed_while_switching_accounts_waits_and_leaves_the_new_one(
    loop: ConvergeEventLoop, live_server: Any, tmp_path: Path
) -> None:
    """Rebuild and a reconnect one after the other, not interleaved: the account the
    window ends on is the one Settings chose, with its engine attached."""
    from ui.dialogs.settings import ConnectionSettings

    desktop = Desktop(
        DesktopOptions(_damaged_profile(live_server, tmp_path), live_server.url, "dev-alice", 0.0)
    )

    async def scenario() -> int:
        main = asyncio.ensure_future(desktop.main())
        banner = desktop.window.damage_banner
        await until(banner.isVisible, what="the damage banner")
        await asyncio.gather(
            desktop.reconnect(ConnectionSettings(live_server.url, "dev-bob")), desktop.rebuild()
        )
        profile = desktop._engine_profile
        assert profile is not None and profile.token == "dev-bob"
        assert desktop.engine is not None and banner.isHidden()
        desktop.window.close()
        return await main

    assert run(loop, scenario()) == 0
