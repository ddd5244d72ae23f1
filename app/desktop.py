"""`converge` with no subcommand: the desktop window.

Start-up order, so that the window is never blank or frozen:

1. the window is shown at once: the sidebar, the toolbar and the status line;
2. the mirror's first rows are painted (`app.first_paint`), before the conversation pane,
   the controller, the dialogs and the engine are even imported; then the pane and the
   controller are built, and the sidebar gets all rows;
3. the server: the configured one, or else the bundled stub started on a worker thread;
4. the engine is loaded on a worker thread (httpx) and attached: one reconcile on connect,
   then on foreground and every 30 s.

So this module imports, at its top, only what the first paint needs; `sync` defers the
names the first paint does not use (`SyncEngine`, the mirror's writer, the exporter …) to
first use. `tests/ui/test_first_paint.py` names the modules not loaded at the first paint.

The application quits when the main window closes (not when the last window closes: a
dialog can be the only visible window for a moment, PITFALLS §4). On the way out the engine
is closed and the bundled server stopped.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, SignalInstance
from PySide6.QtWidgets import QApplication

import app.qt_import  # noqa: F401  (first of ours: PySide6 then scans none of them)
from app import exception_hooks, heap, identity, mirror_rebuild, translations, window_state
from app.bundled import DEMO_PRINCIPAL, SERVER_DIR, TOKEN_FILE, BundledServer, ensure_token
from app.first_paint import MirrorRows, paint_first_rows, show_all_rows
from app.loop import ConvergeEventLoop
from app.main import HEADLESS_COMMANDS
from sync import (
    ENV_PROFILE,
    ENV_TOKEN,
    InertFormatter,
    MirrorDamaged,
    PrivateRotatingFileHandler,
    Profile,
    SyncError,
    add_token_arguments,
    default_profile_dir,
    plain_http_warning,
    private_dir,
    server_url_problem,
    token_from_arguments,
)
from ui.window.main_window import MainWindow

if TYPE_CHECKING:
    from sync import SyncEngine
    from ui.dialogs.settings import ConnectionSettings
    from ui.window.controller import WindowController

log = logging.getLogger(__name__)

ENV_SYNC_INTERVAL = "CONVERGE_SYNC_INTERVAL"
DEFAULT_SYNC_INTERVAL = 30.0
#: How long the pane and the controller wait for the first rows to be painted: a profile
#: whose token waits on the keychain has no rows to paint until it answers.
FIRST_PAINT_WAIT = 1.0


@dataclass(frozen=True)
class DesktopOptions:
    profile: Path
    server: str | None
    token: str | None
    sync_interval: float
    demo_port: int = 0
    ca_bundle: str | None = None


def token_override(given: str | None, environ: Mapping[str, str]) -> str:
    """What gave the token in use instead of the one Settings saves ("": the saved one):
    the command line, then `CONVERGE_TOKEN` (the precedence of `Profile.load`)."""
    if given:
        return "--token"
    return ENV_TOKEN if environ.get(ENV_TOKEN) else ""


def parse_args(argv: list[str], environ: dict[str, str] | None = None) -> DesktopOptions:
    env = os.environ if environ is None else environ
    parser = argparse.ArgumentParser(
        prog="converge",
        description="Converge: your conversation history, the same on every device.",
        # Raw: the list of commands stays on one line, whatever the terminal's width.
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Subcommands for scripts (see --help of each):\n  converge "
        + " | ".join(sorted(HEADLESS_COMMANDS)),
    )
    parser.add_argument(
        "--profile",
        type=Path,
        help=f"profile folder (settings, mirror, cache); default ${ENV_PROFILE} or "
        f"{default_profile_dir()}. Two profiles act as two devices.",
    )
    parser.add_argument("--server", help="server URL (default: saved settings, else the demo)")
    add_token_arguments(parser)
    parser.add_argument(
        "--ca-bundle",
        metavar="FILE",
        help="PEM file of CA certificates to trust besides the system's (default: saved settings)",
    )
    parser.add_argument(
        "--sync-interval",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"seconds between periodic reconciles (default ${ENV_SYNC_INTERVAL} or 30; 0: never)",
    )
    parser.add_argument(
        "--demo-port",
        type=int,
        default=0,
        metavar="PORT",
        help="port of the built-in demo server when no server is configured (default: any "
        "free port). A second window can then join it as another device: converge "
        "--profile OTHER --server http://127.0.0.1:PORT --token-file PROFILE/bundled-server/token",
    )
    ns = parser.parse_args(argv)
    interval = ns.sync_interval
    if interval is None:
        try:
            interval = float(env.get(ENV_SYNC_INTERVAL, DEFAULT_SYNC_INTERVAL))
        except ValueError:
            parser.error(f"{ENV_SYNC_INTERVAL} must be a number of seconds")
    if interval < 0:
        parser.error("--sync-interval must not be negative")
    profile = ns.profile.expanduser() if ns.profile else default_profile_dir()
    try:
        token = token_from_arguments(ns)
    except SyncError as exc:
        parser.error(exc.message)
    return DesktopOptions(
        profile, ns.server, token, float(interval), ns.demo_port, ca_bundle=ns.ca_bundle
    )


def configure_logging(profile: Path) -> Path | None:
    """Warnings to stderr; everything from INFO to a rotating file in the profile folder."""
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    console = logging.StreamHandler()
    console.setLevel(logging.WARNING)
    # Inert: a warning may quote the server, and a terminal obeys escapes (CONTRACT §10.1).
    console.setFormatter(InertFormatter("converge: %(levelname)s %(name)s: %(message)s"))
    root.addHandler(console)
    path = profile / "converge.log"
    try:
        private_dir(profile)
        # 0600 and never through a symlink at its name (CONTRACT §10.1).
        handler = PrivateRotatingFileHandler(
            path, maxBytes=1_000_000, backupCount=2, encoding="utf-8"
        )
    except OSError:
        return None
    # The file too: `tail -f converge.log` in a terminal is how it gets read.
    handler.setFormatter(InertFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    return path


class Desktop:
    """The running application: window, controller, mirror, server, engine."""

    def __init__(self, options: DesktopOptions, *, log_path: Path | None = None) -> None:
        self.options = options
        self.log_path = log_path
        # What the first paint shows; the pane and the controller come after it (`controller`).
        self.window = MainWindow(pane=False)
        self._controller: WindowController | None = None
        self._state: window_state.WindowState | None = None  # read at `main`
        self.engine: SyncEngine | None = None
        self._engine_profile: Profile | None = None  # what the engine opens (and a rebuild)
        self._switching = asyncio.Lock()  # rebuild, reconnect: each reopens the engine
        self.window.damage_banner.rebuild_requested.connect(
            lambda: self.controller.spawn(self.rebuild(), "rebuild the saved conversations")
        )
        # A request made before the controller is there to hear it (a shortcut, a row's
        # menu, a toolbar button) builds it and is made again, to it.
        window = self.window
        for request in (
            window.new_requested,
            window.refresh_requested,
            window.delete_requested,
            window.settings_requested,
            window.export_requested,
            window.copy_id_requested,
        ):
            request.connect(lambda *args, request=request: self._early_request(request, args))
        self.bundled: BundledServer | None = None
        self._paint_rows: MirrorRows | None = None
        self._closed: asyncio.Future[None] | None = None
        self.window.closed.connect(self._on_closed)
        self.ready = asyncio.Event()
        # See app.heap: its start-up collection waits until the first rows are painted.
        self._heap = heap.HeapPolicy(freeze=False)

    @property
    def controller(self) -> WindowController:
        """The window's behaviour, built with the conversation pane after the first paint
        (or here, when asked for earlier)."""
        if self._controller is None:
            self._controller = self._build_controller()
        return self._controller

    def _early_request(self, request: SignalInstance, args: tuple[object, ...]) -> None:
        """Build the controller for a request it was not there to hear, and make the request
        again: a slot connected while a signal is emitted is not called by that emission."""
        if self._controller is None:
            self._controller = self._build_controller()
            request.emit(*args)

    def _build_controller(self) -> WindowController:
        from ui.window.controller import WindowController

        pane = self.window.add_pane()
        if self._state is not None:
            pane.set_enter_sends(self._state.enter_sends)
        controller = WindowController(self.window, sync_interval=self.options.sync_interval)
        controller.preferences_changed.connect(
            lambda: window_state.write_state(
                self.options.profile, window_state.capture(self.window)
            )
        )
        controller.language = translations.read_choice(self.options.profile)
        controller.language_chosen.connect(
            lambda code: translations.write_choice(self.options.profile, code)
        )
        controller.settings_saved.connect(
            lambda settings: controller.spawn(self.reconnect(settings), "reconnect")
        )
        # What the user did in the sidebar before the controller was there to hear it.
        if text := self.window.filter.text():
            self.window.filter_changed.emit(text)
        if (current := self.window.current_id()) is not None:
            self.window.current_changed.emit(current)
        return controller

    def _on_closed(self) -> None:
        if self._controller is not None:  # closed before it: nothing was changed to keep
            window_state.write_state(self.options.profile, window_state.capture(self.window))
        if self._closed is not None and not self._closed.done():
            self._closed.set_result(None)

    async def main(self) -> int:
        """Show the window, start up in the background, run until the window closes."""
        self._closed = asyncio.get_running_loop().create_future()
        self.window.set_status("Opening your history…")
        self._state = window_state.read_state(self.options.profile)
        window_state.restore(self.window, self._state)
        self.window.show()
        # The keyboard focus for the window just launched: most window managers give it,
        # but not all (and none under Xvfb), and a keyboard or screen-reader user's first
        # keys must reach the window (tests/a11y).
        self.window.activateWindow()
        first = asyncio.ensure_future(self._paint_first())
        await asyncio.wait({first}, timeout=FIRST_PAINT_WAIT)
        self.controller.spawn(self.start(first), "start")
        await self._closed
        await self.stop()
        return 0

    async def _paint_first(self) -> tuple[Profile, MirrorRows | None]:
        """The profile, and the first rows of its account painted (None: nothing to paint)."""
        # On a worker thread: reading the token may ask the keychain (D-Bus, an unlock).
        profile = await asyncio.to_thread(self._profile)
        demo_token = None
        if not profile.server:  # the bundled server's token names the account to paint
            demo_token = await asyncio.to_thread(ensure_token, profile.root / SERVER_DIR)
        paint = account_profile(profile, demo_token)
        if paint is None:  # a server without a token: nothing to paint, connect says why
            return profile, None
        await asyncio.to_thread(paint.ensure_dirs)
        # Until an engine is attached, the sidebar (and the filter) read the mirror file; the
        # engine then opens its own connection to it and this source is closed.
        self._paint_rows = await paint_first_rows(self.window, paint.mirror_path)
        return profile, self._paint_rows

    async def start(self, first: Awaitable[tuple[Profile, MirrorRows | None]]) -> None:
        """Once the first rows are painted (`first`, whose failure is this one's): all rows,
        then connect."""
        profile, rows = await first
        self._heap.freeze()
        if rows is not None:
            await show_all_rows(self.controller, rows)
        await self.connect(profile)
        if self.engine is not None:
            await self._close_paint_rows()
        self._heap.settle()

    async def _close_paint_rows(self) -> None:
        rows, self._paint_rows = self._paint_rows, None
        if rows is not None:
            await rows.close()

    def _profile(self) -> Profile:
        return Profile.load(
            self.options.profile,
            server=self.options.server,
            token=self.options.token,
            ca_bundle=self.options.ca_bundle,
        )

    async def connect(self, profile: Profile) -> None:
        """Use the configured server, or start the bundled one; then attach the engine."""
        from ui.dialogs.settings import ConnectionSettings, connection_in_use
        from ui.dialogs.trust_rows import token_storage_words
        from ui.window.status_presenter import SETTINGS_HINT
        from ui.window.where import account_label, server_label

        self._heap.freeze()  # done already when rows were painted
        # What Settings edits is what is in use: a server given with --server is shown
        # (an empty field would mean "the demo server", and Save would switch silently).
        self.controller.settings = ConnectionSettings(
            profile.server or "", profile.token or "", profile.ca_bundle or ""
        )
        location = profile.token_location
        self.controller.token_storage = token_storage_words(location)
        self.controller.token_override = (
            token_override(self.options.token, os.environ) if profile.server else ""
        )
        self.window.set_insecure_warning(plain_http_warning(profile.server))
        self.controller.demo_token = ""
        if profile.server:
            if (problem := server_url_problem(profile.server)) is not None:
                self.window.set_status(
                    f"The server URL {profile.server} is {problem}. Open Settings to correct it.",
                    error=True,
                )
                self.window.set_placeholder(SETTINGS_HINT)  # nothing will load
                return
            if not profile.token:
                self.window.set_status(
                    "No token is configured for this server. Open Settings to add one.",
                    error=True,
                )
                self.window.set_placeholder(SETTINGS_HINT)
                return
            url, token = profile.server, str(profile.token)
        else:
            self.window.set_status("Starting the built-in demo server…")
            self.bundled = BundledServer(profile.root, port=self.options.demo_port)
            url = await self.bundled.start()
            # The server accepts this profile's token only (a token saved in Settings is
            # for a configured server); Settings shows it for a second device.
            token = self.bundled.token
            self.controller.demo_token = token
            # For QA: a second window joins this server as another device (the token stays
            # in its file: a terminal's scrollback is no place for it).
            token_file = self.bundled.folder / TOKEN_FILE
            print(
                f"converge: built-in demo server at {url} (token in {token_file}); another "
                f"device: converge --profile OTHER_DIR --server {url} --token-file {token_file}",
                file=sys.stderr,
                flush=True,
            )
        bundled = self.bundled is not None
        who = DEMO_PRINCIPAL if bundled else account_label(token)
        self.controller.in_use = connection_in_use(
            url, who, str(self.options.profile), bundled=bundled
        )
        self.window.set_where(who, server_label(url, bundled=bundled), str(self.options.profile))
        engine_profile = Profile(
            profile.root,
            server=url,
            token=token,
            server_identity=None if profile.server else BUNDLED_SERVER_IDENTITY,
            ca_bundle=profile.ca_bundle,
        )
        await self._open_engine(engine_profile)

    async def _open_engine(self, profile: Profile) -> None:
        """Open and attach the engine; a damaged mirror gets the banner with Rebuild."""
        self._engine_profile = profile
        engine_class = await asyncio.to_thread(load_engine_class)
        try:
            self.engine = await engine_class.open(
                profile, timer_interval=self.options.sync_interval
            )
        except MirrorDamaged as exc:
            self.window.show_damage(exc.message)
            return
        self.window.damage_banner.hide()  # an earlier account's damage is not this one's
        shown = self._paint_rows
        same = shown is not None and shown.path == profile.mirror_path
        self.controller.attach(self.engine, same_mirror=same)
        self.ready.set()

    async def rebuild(self) -> None:
        """The banner's Rebuild (`app.mirror_rebuild`): the engine holds the file, so it goes."""
        async with self._switching:
            banner, profile = self.window.damage_banner, self._engine_profile
            if profile is None or banner.isHidden() or not banner.rebuild.isEnabled():
                return
            await self._drop_engine()
            await self._close_paint_rows()
            if not await mirror_rebuild.rebuild(self.window, profile):
                return
            await self._open_engine(profile)
            await self.controller.refresh_now()  # its first pass is a 304: it says nothing

    async def _drop_engine(self) -> None:
        self.ready.clear()
        self.controller.detach()
        engine, self.engine = self.engine, None
        if engine is not None:
            await engine.close()

    async def disconnect(self) -> None:
        await self._drop_engine()
        bundled, self.bundled = self.bundled, None
        if bundled is not None:
            await bundled.stop()

    async def reconnect(self, settings: ConnectionSettings) -> None:
        """Save new connection settings in the profile and switch to them now."""
        saved = Profile(
            self.options.profile,
            server=settings.server or None,
            token=settings.token or None,
            ca_bundle=settings.ca_bundle or None,
        )
        async with self._switching:
            await asyncio.to_thread(saved.save)
            # Explicit command-line values would override what was just saved: drop them.
            self.options = replace(self.options, server=None, token=None, ca_bundle=None)
            await self.disconnect()
            self.window.set_status("Connecting…")
            await self.connect(await asyncio.to_thread(self._profile))

    async def stop(self) -> None:
        if self._controller is not None:
            await self._controller.shutdown()
        try:
            await self.disconnect()
            await self._close_paint_rows()
        except Exception:
            log.exception("error while shutting down")
        finally:
            self._heap.uninstall()


#: The account key's name for the bundled demo server: it lives in the profile, so its
#: mirror is the same whichever free port it gets at start-up.
BUNDLED_SERVER_IDENTITY = "converge-bundled-demo-server"


def load_engine_class() -> type[SyncEngine]:
    """`SyncEngine`, on a worker thread: its import loads httpx. The Markdown renderer comes
    along (`ui.text.rich_text` defers it past the first paint), so the first conversation
    opened does not import it on the UI thread."""
    import ui.text.markdown_html  # noqa: F401  (loaded for later, not used here)
    from sync import SyncEngine

    return SyncEngine


def account_profile(profile: Profile, demo_token: str | None = None) -> Profile | None:
    """The account the window shows before any server starts: the configured server and token,
    or the bundled server with the profile's demo token; None without a token."""
    if profile.server:
        return profile if profile.token else None
    if not demo_token:
        return None
    return Profile(
        profile.root,
        server=None,
        token=demo_token,
        server_identity=BUNDLED_SERVER_IDENTITY,
    )


def run(args: list[str]) -> int:
    """Open the window and run until it closes; the process exit code."""
    options = parse_args(args)
    log_path = configure_logging(options.profile)
    app = QApplication.instance() or QApplication([sys.argv[0]])
    assert isinstance(app, QApplication)
    app.setApplicationName("Converge")
    identity.apply(app)  # the window icon and the .desktop file's id (packaging/)
    # No application display name: Qt appends it to every window title on X11, and the
    # window's title already starts with "Converge" (a screen reader would read it twice).
    app.setQuitOnLastWindowClosed(False)
    app.setAttribute(Qt.ApplicationAttribute.AA_DontShowIconsInMenus, True)
    translations.install(app, translations.locale_for(translations.read_choice(options.profile)))
    loop = ConvergeEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        desktop = Desktop(options, log_path=log_path)
        exception_hooks.install(desktop.window, desktop.log_path, loop)
        # Ctrl+C in the terminal, or SIGTERM: close the window, which shuts down cleanly.
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signum, desktop.window.close)
        return int(loop.run_until_complete(desktop.main()))
    finally:
        loop.shut_down()
        asyncio.set_event_loop(None)
