"""The window says which account and server it uses, Settings shows the server in use, the
demo server keeps its port per profile, and the window keeps its geometry per profile."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from app import window_state
from app.bundled import BundledServer, saved_port
from app.desktop import Desktop, DesktopOptions
from app.loop import ConvergeEventLoop
from tests.ui.conftest import run
from ui.dialogs.settings import SettingsDialog
from ui.text.plain import isolate
from ui.window.main_window import MainWindow
from ui.window.where import account_label, server_label


@pytest.fixture(autouse=True)
def _no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CONVERGE_SERVER", "CONVERGE_TOKEN", "CONVERGE_SYNC_INTERVAL"):
        monkeypatch.delenv(name, raising=False)


def test_account_and_server_words_never_show_a_real_token() -> None:
    assert account_label("dev-alice") == "alice"
    assert account_label("s3cr3t-token-a1b2") == "token …a1b2"
    assert account_label(None) == "no account"
    assert server_label("http://127.0.0.1:8799") == "127.0.0.1:8799"
    assert (
        server_label("http://127.0.0.1:8799", bundled=True)
        == "127.0.0.1:8799 (built-in demo server)"
    )


def test_a_device_started_with_server_shows_that_server_in_settings_and_the_title(
    loop: ConvergeEventLoop, tmp_path: Path, live_server: Any
) -> None:
    desktop = Desktop(DesktopOptions(tmp_path / "p", live_server.url, "dev-alice", 0.0))

    async def scenario() -> None:
        main = asyncio.ensure_future(desktop.main())
        await asyncio.wait_for(desktop.ready.wait(), 30)
        controller = desktop.controller
        # Settings edits what is in use: Save without changes keeps this server.
        assert controller.settings.server == live_server.url
        assert controller.settings.token == "dev-alice"
        dialog = SettingsDialog(desktop.window, controller.settings, controller.in_use)
        assert dialog.server.text() == live_server.url
        assert live_server.url in dialog.in_use.text() and "alice" in dialog.in_use.text()
        dialog.deleteLater()
        host = live_server.url.removeprefix("http://")
        assert desktop.window.windowTitle() == (
            f"Converge — {isolate('alice')} on {isolate(host)} · profile {isolate('p')}"
        )
        assert (
            desktop.window.where.text()
            == f"{isolate('alice')} · {isolate(host)} · profile {isolate('p')}"
        )
        assert str(tmp_path / "p") in desktop.window.where.toolTip()
        assert str(tmp_path / "p") in controller.in_use
        desktop.window.close()
        await main

    run(loop, scenario())


def test_the_demo_server_keeps_its_port_per_profile(
    loop: ConvergeEventLoop, tmp_path: Path
) -> None:
    async def start_stop() -> str:
        server = BundledServer(tmp_path, agent_delay=0)
        url = await server.start()
        await server.stop()
        return url

    first = run(loop, start_stop(), timeout=90)
    second = run(loop, start_stop(), timeout=90)
    assert first == second
    assert saved_port(tmp_path / "bundled-server") == int(first.rsplit(":", 1)[1])


def test_a_taken_demo_port_falls_back_to_a_free_one(
    loop: ConvergeEventLoop, tmp_path: Path
) -> None:
    import socket

    blocker = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    blocker.bind(("127.0.0.1", 0))
    blocker.listen()
    taken = blocker.getsockname()[1]
    folder = tmp_path / "bundled-server"
    folder.mkdir()
    (folder / "port").write_text(f"{taken}\n")
    try:

        async def start_stop() -> str:
            server = BundledServer(tmp_path, agent_delay=0)
            url = await server.start()
            await server.stop()
            return url

        url = run(loop, start_stop(), timeout=90)
    finally:
        blocker.close()
    assert not url.endswith(f":{taken}")
    assert saved_port(folder) == int(url.rsplit(":", 1)[1])


def test_window_geometry_and_splitter_are_remembered_per_profile(
    qapp: object, tmp_path: Path
) -> None:
    first = MainWindow()
    first.resize(712, 533)  # inside the offscreen screen (800 x 600)
    first.show()
    first.splitter.setSizes([300, 412])
    sizes = first.splitter.sizes()
    size = (first.width(), first.height())
    window_state.write_state(tmp_path / "a", window_state.capture(first))
    first.close()

    again = MainWindow()
    assert window_state.restore(again, window_state.read_state(tmp_path / "a"))
    again.show()
    assert (again.width(), again.height()) == size
    assert again.splitter.sizes() == sizes
    again.close()
    assert window_state.read_state(tmp_path / "other") is None  # another profile: defaults
