"""The window against a server having trouble (CONTRACT §10.2): a persistent 503 is said in
plain words on the status line, neither as offline (no banner: the server answers) nor as
an error, and the rows the device holds stay."""

from __future__ import annotations

import asyncio
import errno
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from app.desktop import Desktop, DesktopOptions
from app.loop import ConvergeEventLoop
from sync import EngineState, EngineStatus
from sync.errors import ConnectionFailed
from tests.sync.hostile_server import hostile_server
from tests.ui.conftest import caused_by, run
from ui.window.main_window import MainWindow
from ui.window.status_presenter import SETTINGS_HINT, StatusPresenter

TROUBLE = "The server is having trouble (its database is unavailable); Converge will try again."


@pytest.fixture(autouse=True)
def _no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CONVERGE_SERVER", "CONVERGE_TOKEN", "CONVERGE_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)


def test_a_server_whose_database_is_down_is_shown_as_having_trouble_not_offline(
    loop: ConvergeEventLoop, tmp_path: Path
) -> None:
    with hostile_server("unavailable") as server:
        desktop = Desktop(DesktopOptions(tmp_path / "p", server.url, "dev-alice", 0.0))
        window = desktop.window

        async def scenario() -> None:
            main = asyncio.ensure_future(desktop.main())
            async with asyncio.timeout(30):
                while window.status.text() != TROUBLE:
                    await asyncio.sleep(0.02)
            assert window.status.property("error") is False
            assert not window.offline and not window.offline_banner.isVisible()
            window.close()
            await main

        run(loop, scenario())


def test_trouble_after_offline_drops_the_banner_and_the_next_sync_reloads_once(
    qapp: QApplication,
) -> None:
    window = MainWindow()
    reloads: list[str] = []
    presenter = StatusPresenter(
        window,
        trigger=lambda reason: None,
        connected=lambda: True,
        filter_text=lambda: "",
        on_reconnected=lambda: reloads.append("reload"),
    )
    try:
        presenter.show(EngineStatus(EngineState.OFFLINE, "Cannot reach the server."))
        assert window.offline
        presenter.show(EngineStatus(EngineState.SYNCING))
        presenter.show(EngineStatus(EngineState.TROUBLE, TROUBLE))
        assert not window.offline  # the server answers: it is not "offline"
        assert window.status.text() == TROUBLE
        presenter.show(EngineStatus(EngineState.SYNCING, "", None))
        assert window.status.text() == TROUBLE  # no flicker while trying again
        presenter.show(EngineStatus(EngineState.IDLE, "", 1.0))
        presenter.show(EngineStatus(EngineState.IDLE, "", 2.0))
        assert reloads == ["reload"]  # what was missed while unreachable, once
    finally:
        presenter.stop()
        window.close()


@pytest.mark.parametrize(
    ("os_errno", "words"),
    [
        (errno.ENETUNREACH, "Offline – showing saved history"),
        (errno.ECONNREFUSED, "Can't reach chat.example.org:8443 – showing saved history"),
    ],
)
def test_the_status_line_says_offline_only_when_this_device_has_no_network(
    qapp: QApplication, os_errno: int, words: str
) -> None:
    window = MainWindow()
    presenter = StatusPresenter(
        window,
        trigger=lambda reason: None,
        connected=lambda: True,
        filter_text=lambda: "",
        on_reconnected=lambda: None,
    )
    presenter.host = lambda: "chat.example.org:8443"
    try:
        problem = caused_by(ConnectionFailed("no connection"), os_errno)
        presenter.show(EngineStatus(EngineState.OFFLINE, "no connection", problem=problem))
        assert window.status.text() == words
        banner = window.offline_banner.text()
        assert banner.startswith("You're offline." if "Offline" in words else "Can't reach chat.")
        presenter.show(EngineStatus(EngineState.SYNCING))
        assert window.status.text() == f"{words} · reconnecting…"
    finally:
        presenter.stop()
        window.close()


def test_a_server_url_that_cannot_name_a_server_is_said_with_how_to_fix_it(
    loop: ConvergeEventLoop, tmp_path: Path
) -> None:
    """A port out of range crashed every pass deep in httpx (an exception group logged as
    "reconcile pass crashed") while the status line said nothing useful; the URL is now
    refused before the engine opens, in words that say where to correct it."""
    desktop = Desktop(DesktopOptions(tmp_path / "p", "http://localhost:99999", "dev-alice", 0.0))
    window = desktop.window

    async def scenario() -> None:
        main = asyncio.ensure_future(desktop.main())
        async with asyncio.timeout(30):
            while "Settings" not in window.status.text():
                await asyncio.sleep(0.02)
        assert window.status.text().startswith("The server URL http://localhost:99999 is not")
        assert window.status.property("error") is True
        assert desktop.engine is None
        # the sidebar said "Loading conversations…" for ever: nothing will load
        assert window.sidebar_empty.text() == SETTINGS_HINT
        window.close()
        await main

    run(loop, scenario())
