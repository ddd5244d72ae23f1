"""The built-in demo server's token (CONTRACT §10.2): random per profile, kept 0600 in the
profile, the only token that server accepts (never `dev-alice`), used by the window's
engine, and shown in Settings (masked, Show, Copy) for a second device to join."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import httpx
import pytest
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLineEdit

from app.bundled import SERVER_DIR, TOKEN_FILE, BundledServer, ensure_token, read_token
from app.desktop import Desktop, DesktopOptions
from app.loop import ConvergeEventLoop
from server_stub.edge.auth import DEV_PRINCIPALS
from tests.ui.conftest import run, until
from ui.dialogs.settings import ConnectionSettings, SettingsDialog

DEV_TOKENS = [entry.token for entry in DEV_PRINCIPALS]


@pytest.fixture(autouse=True)
def _no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CONVERGE_SERVER", "CONVERGE_TOKEN", "CONVERGE_SYNC_INTERVAL"):
        monkeypatch.delenv(name, raising=False)


def _sessions(url: str, token: str) -> httpx.Response:
    return httpx.get(f"{url}/v1/sessions", headers={"Authorization": f"Bearer {token}"})


def test_the_bundled_server_refuses_the_public_tokens_and_serves_alice_with_its_own(
    loop: ConvergeEventLoop, tmp_path: Path
) -> None:
    async def scenario() -> tuple[list[int], httpx.Response, str]:
        server = BundledServer(tmp_path, agent_delay=0)
        url = await server.start()
        try:
            public = [(await asyncio.to_thread(_sessions, url, t)).status_code for t in DEV_TOKENS]
            own = await asyncio.to_thread(_sessions, url, server.token)
        finally:
            await server.stop()
        return public, own, server.token

    public, own, token = run(loop, scenario(), timeout=90)
    assert public == [401] * len(DEV_TOKENS)
    assert own.status_code == 200 and len(own.json()["items"]) > 10  # alice's demo history
    assert token not in DEV_TOKENS and len(token) >= 43


def test_the_demo_token_survives_a_restart_and_each_profile_gets_its_own(
    loop: ConvergeEventLoop, tmp_path: Path
) -> None:
    async def start_stop(root: Path) -> str:
        server = BundledServer(root, agent_delay=0)
        await server.start()
        await server.stop()
        return server.token

    first = run(loop, start_stop(tmp_path / "one"), timeout=90)
    again = run(loop, start_stop(tmp_path / "one"), timeout=90)
    assert first == again
    assert ensure_token(tmp_path / "two" / SERVER_DIR) != first  # another profile
    folder = tmp_path / "one" / SERVER_DIR
    assert (folder / TOKEN_FILE).read_text() == first + "\n"
    assert stat.S_IMODE(os.stat(folder / TOKEN_FILE).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert [p.name for p in folder.iterdir() if p.name.startswith(".token-")] == []


@pytest.mark.parametrize("content", ["", "dev-alice\n", "short\n", "x" * 43 + " y\n"])
def test_a_damaged_token_file_is_replaced_by_a_new_random_token(
    tmp_path: Path, content: str
) -> None:
    (tmp_path / TOKEN_FILE).write_text(content)
    assert read_token(tmp_path) is None
    token = ensure_token(tmp_path)
    assert token not in content and read_token(tmp_path) == token
    assert stat.S_IMODE(os.stat(tmp_path / TOKEN_FILE).st_mode) == 0o600


def test_a_token_another_window_saved_first_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app import bundled

    first = ensure_token(tmp_path)
    real_read = bundled.read_token
    calls = iter([None])  # this window looked before the other one had written its token

    def racing_read(folder: Path) -> str | None:
        return next(calls, real_read(folder))

    monkeypatch.setattr(bundled, "read_token", racing_read)
    assert ensure_token(tmp_path) == first
    assert real_read(tmp_path) == first
    assert [p.name for p in tmp_path.iterdir()] == [TOKEN_FILE]


def test_the_window_syncs_the_demo_history_with_the_profiles_token(
    loop: ConvergeEventLoop, tmp_path: Path
) -> None:
    profile = tmp_path / "profile"
    desktop = Desktop(DesktopOptions(profile, None, None, 0.0))

    async def scenario() -> int:
        main = asyncio.ensure_future(desktop.main())
        window = desktop.window
        await until(lambda: window.model.rowCount() > 10, timeout=60, what="the demo history")
        await until(lambda: window.status.text() == "Synced just now", what="a pass")
        assert desktop.engine is not None
        token = read_token(profile / SERVER_DIR)
        assert token is not None
        assert desktop.engine.profile.token == token
        assert desktop.controller.demo_token == token
        assert "as alice" in desktop.controller.in_use and token not in desktop.controller.in_use
        window.close()
        return await main

    assert run(loop, scenario(), timeout=90) == 0


def test_settings_shows_the_demo_token_masked_with_show_and_copy(
    qapp: object, tmp_path: Path
) -> None:
    token = ensure_token(tmp_path)
    dialog = SettingsDialog(
        None,
        ConnectionSettings("", ""),
        "http://127.0.0.1:8799 as alice (the built-in demo server)",
        demo_token=token,
    )
    field = dialog.demo_token
    assert field is not None
    assert field.field.echoMode() == QLineEdit.EchoMode.Password  # masked at first
    assert field.field.isReadOnly() and field.field.text() == token
    field.show_button.click()
    assert field.field.echoMode() == QLineEdit.EchoMode.Normal
    assert field.show_button.text() == "Hide"
    field.show_button.click()
    assert field.field.echoMode() == QLineEdit.EchoMode.Password
    QGuiApplication.clipboard().clear()
    field.copy_button.click()
    assert QGuiApplication.clipboard().text() == token  # copied whole, though masked
    dialog.show()
    dialog.grab().save(str(tmp_path / "settings_demo_token.png"))
    dialog.close()
    assert SettingsDialog(None, ConnectionSettings("http://x", "t"), "x").demo_token is None
