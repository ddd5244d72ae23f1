"""The window and what it trusts (CONTRACT §10.1): a refused certificate is an error, not
offline; a CA bundle set at start or in Settings makes a private CA's server sync; Settings
says where the token is kept; a plain http:// server off this machine carries a banner."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.desktop import Desktop, DesktopOptions
from app.loop import ConvergeEventLoop
from tests.sync.tls_certs import TlsServer, serve_tls
from tests.ui.conftest import run
from ui.dialogs.settings import ConnectionSettings, SettingsDialog

CERT_WORDS = "The server's certificate could not be verified"


@pytest.fixture(autouse=True)
def _no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CONVERGE_SERVER", "CONVERGE_TOKEN", "CONVERGE_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def tls_server(
    tmp_path_factory: pytest.TempPathFactory, sqlite_template: Path
) -> Iterator[TlsServer]:
    with serve_tls(tmp_path_factory.mktemp("tls-server"), sqlite_template) as server:
        yield server


async def until(predicate: object, what: str, timeout: float = 30) -> None:
    assert callable(predicate)
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)


def test_a_refused_certificate_is_an_error_in_the_window_and_settings_fix_it(
    loop: ConvergeEventLoop, tmp_path: Path, tls_server: TlsServer
) -> None:
    made = tls_server.seed("behind a private CA")
    profile = tmp_path / "p"
    desktop = Desktop(DesktopOptions(profile, tls_server.url, "dev-alice", 0.0))
    window = desktop.window

    async def scenario() -> None:
        main = asyncio.ensure_future(desktop.main())
        await until(lambda: CERT_WORDS in window.status.text(), "the certificate error")
        assert not window.offline and not window.offline_banner.isVisible()
        assert "reach" not in window.status.text().lower()
        ca = str(tls_server.certs.ca_file)
        await desktop.reconnect(ConnectionSettings(tls_server.url, "dev-alice", ca))
        await until(lambda: [r.id for r in window.model.sessions()] == [made], "the rows")
        assert desktop.controller.settings.ca_bundle == ca
        window.close()
        await main

    run(loop, scenario())
    saved = json.loads((profile / "settings.json").read_text())
    assert saved["ca_bundle"] == str(tls_server.certs.ca_file)
    assert "dev-alice" not in (profile / "settings.json").read_text()


def test_settings_say_where_the_token_is_kept_and_warn_about_plain_http(
    loop: ConvergeEventLoop, tmp_path: Path, live_server: Any
) -> None:
    """These machines have no keychain (the tests force keyring's fail backend): the token
    file is named. The remote server is a TEST-NET address given without a token, so the
    window never connects to it: the banner is there before any request."""
    profile = tmp_path / "p"
    desktop = Desktop(DesktopOptions(profile, "http://192.0.2.1:9", None, 0.0))
    window = desktop.window

    async def scenario() -> None:
        main = asyncio.ensure_future(desktop.main())
        await until(lambda: "No token" in window.status.text(), "the missing token")
        banner = window.insecure_banner
        assert banner.isVisible() and "192.0.2.1" in banner.text()
        assert "unencrypted" in banner.text()
        await desktop.reconnect(ConnectionSettings(live_server.url, "dev-alice"))
        assert desktop.ready.is_set() and not banner.isVisible()  # loopback: no warning
        controller = desktop.controller
        assert controller.token_storage == (
            f"Stored in a file readable only by you: {profile / 'token'}"
        )
        dialog = SettingsDialog(
            window, controller.settings, controller.in_use, token_storage=controller.token_storage
        )
        trust = dialog.trust
        assert trust.token_storage.text() == controller.token_storage
        assert not trust.insecure.isVisibleTo(dialog)
        dialog.server.setText("http://converge.example.org")
        assert trust.insecure.isVisibleTo(dialog) and "unencrypted" in trust.insecure.text()
        trust.ca_bundle.setText("  /etc/ssl/private-ca.pem ")
        assert dialog.values().ca_bundle == "/etc/ssl/private-ca.pem"
        dialog.deleteLater()
        window.close()
        await main

    run(loop, scenario())
    assert (profile / "token").stat().st_mode & 0o777 == 0o600
    assert "dev-alice" not in (profile / "settings.json").read_text()


def test_the_window_takes_its_token_from_a_file_or_standard_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.desktop import parse_args

    token_file = tmp_path / "token"
    token_file.write_text("dev-alice\n")
    token_file.chmod(0o600)
    options = parse_args(["--token-file", str(token_file), "--ca-bundle", "/x/ca.pem"], {})
    assert (options.token, options.ca_bundle) == ("dev-alice", "/x/ca.pem")
    monkeypatch.setattr("sys.stdin", io.StringIO("dev-bob\n"))
    assert parse_args(["--token-stdin"], {}).token == "dev-bob"
    assert capsys.readouterr().err == ""
    assert parse_args(["--token", "dev-carol"], {}).token == "dev-carol"
    assert "process list" in capsys.readouterr().err
    token_file.chmod(0o644)
    with pytest.raises(SystemExit) as info:
        parse_args(["--token-file", str(token_file)], {})
    assert info.value.code == 2 and "chmod 600" in capsys.readouterr().err
