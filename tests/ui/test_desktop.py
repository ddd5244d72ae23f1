"""Start-up of the real application object (`app.desktop.Desktop`): the window paints the
mirror at once, then connects; without a configured server it runs the bundled demo server
and stops it on exit."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from app.desktop import Desktop, DesktopOptions, account_profile, parse_args
from app.loop import ConvergeEventLoop
from sync.mirror.legacy import connection_identity
from sync.mirror.store import Mirror
from sync.profile.profile import Profile
from sync.wire.models import SessionView, text_message
from tests.ui.conftest import run, until
from ui.dialogs.settings import ConnectionSettings


@pytest.fixture(autouse=True)
def _no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CONVERGE_SERVER", "CONVERGE_TOKEN", "CONVERGE_SYNC_INTERVAL"):
        monkeypatch.delenv(name, raising=False)


def test_the_mirror_is_painted_even_when_the_server_is_unreachable(
    loop: ConvergeEventLoop, tmp_path: Path
) -> None:
    profile = tmp_path / "profile"
    profile.mkdir()
    mirror = Mirror.open(profile / "mirror.sqlite3")
    stamp = "2026-11-29T10:00:00.000000Z"
    mirror.apply([SessionView("ses_saved", "Saved earlier", stamp, stamp, None, None)])
    mirror.close()
    desktop = Desktop(DesktopOptions(profile, "http://127.0.0.1:9", "dev-alice", 0.0))

    async def scenario() -> int:
        main = asyncio.ensure_future(desktop.main())
        window = desktop.window
        await until(lambda: len(window.model.sessions()) == 1, what="the saved row")
        # Port 9 refuses: the server can't be reached, this device is not offline. The
        # watch retries, and while a retry runs the sentence gains "· reconnecting…": the
        # wait is for the whole sentence, which every failed retry shows again.
        await until(
            lambda: window.status.text() == "Can't reach 127.0.0.1:9 – showing saved history",
            what="the offline status",
        )
        window.close()
        return await main

    assert run(loop, scenario()) == 0


def test_without_a_server_the_bundled_demo_server_runs_until_the_window_closes(
    loop: ConvergeEventLoop, tmp_path: Path
) -> None:
    desktop = Desktop(DesktopOptions(tmp_path / "profile", None, None, 0.0))

    async def scenario() -> int:
        main = asyncio.ensure_future(desktop.main())
        window = desktop.window
        await until(lambda: window.model.rowCount() > 10, timeout=60, what="the demo history")
        await until(lambda: window.status.text() == "Synced just now", what="a pass")
        assert desktop.bundled is not None and desktop.bundled.url.startswith("http://127.0.0.1:")
        thread = desktop.bundled._thread
        assert thread is not None and thread.thread.is_alive()
        window.close()
        code = await main
        assert not thread.thread.is_alive()
        return code

    assert run(loop, scenario(), timeout=90) == 0
    assert (tmp_path / "profile" / "bundled-server" / "converge-server.sqlite3").exists()


def _legacy_mirror(folder: Path, identity: str | None) -> Path:
    """A pre-account `mirror.sqlite3` at the top of `folder`, recording `identity`."""
    folder.mkdir()
    mirror = Mirror.open(folder / "mirror.sqlite3")
    stamp = "2026-11-29T10:00:00.000000Z"
    mirror.apply([SessionView("ses_old", "From before accounts", stamp, stamp, None, None)])
    if identity is not None:
        mirror.bind_identity(identity)
    mirror.close()
    return folder / "mirror.sqlite3"


def test_the_demo_account_of_an_upgraded_profile_opens_without_a_server_url(
    tmp_path: Path,
) -> None:
    """The default upgrade: no server configured, a pre-account mirror at the top. What the
    window paints (the demo account, named before the bundled server has a URL) adopts an
    unrecorded mirror and leaves a recorded one: the bundled server's URL changes with its
    port, so a recorded demo mirror never names this account (decision 0103)."""
    legacy = _legacy_mirror(tmp_path / "unrecorded", None)
    paint = account_profile(Profile(legacy.parent), "demo-token")
    assert paint is not None and paint.find_mirror() == paint.mirror_path
    assert not legacy.exists()
    legacy = _legacy_mirror(tmp_path / "unrecorded-start", None)
    paint = account_profile(Profile(legacy.parent), "demo-token")
    assert paint is not None
    paint.ensure_dirs()  # what `Desktop.start` does before its first paint
    assert paint.mirror_path.exists() and not legacy.exists()
    old_url = connection_identity("http://127.0.0.1:41234", "demo-token")
    legacy = _legacy_mirror(tmp_path / "recorded", old_url)
    paint = account_profile(Profile(legacy.parent), "demo-token")
    assert paint is not None and paint.find_mirror() is None
    paint.ensure_dirs()
    assert legacy.exists() and not paint.mirror_path.exists()


def test_the_window_paints_an_upgraded_profiles_rows_and_starts_the_demo_server(
    loop: ConvergeEventLoop, tmp_path: Path
) -> None:
    """No server configured and an unrecorded pre-account mirror: the window paints its row
    before the bundled server runs, then connects (the upgrade most users make)."""
    legacy = _legacy_mirror(tmp_path / "profile", None)
    desktop = Desktop(DesktopOptions(legacy.parent, None, None, 0.0))

    async def scenario() -> int:
        main = asyncio.ensure_future(desktop.main())
        window = desktop.window
        painted = lambda: "ses_old" in [r.id for r in window.model.sessions()]  # noqa: E731
        await until(painted, what="the painted row from before accounts")
        await until(desktop.ready.is_set, timeout=60, what="the engine attached")
        window.close()
        return await main

    assert run(loop, scenario(), timeout=90) == 0
    assert not legacy.exists()


def test_the_sync_interval_comes_from_the_flag_or_the_environment() -> None:
    assert parse_args(["--sync-interval", "5"], environ={}).sync_interval == 5.0
    assert parse_args([], environ={"CONVERGE_SYNC_INTERVAL": "2.5"}).sync_interval == 2.5
    assert parse_args([], environ={}).sync_interval == 30.0
    options = parse_args(["--profile", "/tmp/a", "--demo-port", "8799"], environ={})
    assert options.profile == Path("/tmp/a") and options.demo_port == 8799


def test_saving_new_settings_switches_server_and_keeps_them_in_the_profile(
    loop: ConvergeEventLoop, tmp_path: Path, server_factory: Any
) -> None:
    first, second = server_factory(), server_factory()
    made: list[str] = []
    for server, title in ((first, "Kept on the first server"), (second, "On the second")):
        body = {"token": "dev-alice", "messages": [text_message(title)]}
        made.append(server.control().post("/_stub/sessions", json=body).json()["id"])
    profile = tmp_path / "profile"
    desktop = Desktop(DesktopOptions(profile, first.url, "dev-alice", 0.0))

    async def scenario() -> int:
        main = asyncio.ensure_future(desktop.main())
        window = desktop.window
        await until(lambda: [r.id for r in window.model.sessions()] == [made[0]], what="first")
        await desktop.reconnect(ConnectionSettings(second.url, "dev-alice"))
        await until(lambda: [r.id for r in window.model.sessions()] == [made[1]], what="second")
        window.close()
        return await main

    assert run(loop, scenario()) == 0
    saved = json.loads((profile / "settings.json").read_text())
    # The token is kept apart (no keychain in tests: the 0600 file), never in settings.json.
    assert saved == {"server": second.url, "token_stored_in": {"store": "file", "file": "token"}}
    assert (profile / "token").read_text() == "dev-alice\n"


def test_an_uncaught_error_is_logged_and_shown_as_one_sentence(
    loop: ConvergeEventLoop, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import sys

    from app import exception_hooks

    desktop = Desktop(DesktopOptions(tmp_path, "http://127.0.0.1:9", "t", 0.0), log_path=tmp_path)
    saved = sys.excepthook
    try:
        exception_hooks.install(desktop.window, desktop.log_path, loop)
        try:
            raise RuntimeError("boom")
        except RuntimeError as exc:
            sys.excepthook(type(exc), exc, exc.__traceback__)
    finally:
        sys.excepthook = saved
    assert desktop.window.status.text() == f"Something went wrong. Details are in {tmp_path}."
    assert "Traceback" not in desktop.window.status.text()
    assert any(
        r.exc_info and r.exc_info[1] is not None and r.exc_info[1].args == ("boom",)
        for r in caplog.records
    )
    desktop.window.close()
    run(loop, desktop.stop())  # the heap policy goes with the window (app.heap)


def test_a_second_bundled_server_on_one_profile_is_refused_in_words(tmp_path: Path) -> None:
    """SQLite is served by one process (CONTRACT §9.4): a second window on the same profile
    gets a sentence, not an internal error."""
    from app.bundled import BundledServer
    from sync.errors import SyncError

    first = BundledServer(tmp_path, agent_delay=0.0)
    first._start_blocking()
    try:
        with pytest.raises(SyncError, match="already running in another Converge window"):
            BundledServer(tmp_path, agent_delay=0.0)._start_blocking()
    finally:
        assert first._thread is not None
        first._thread.stop()
