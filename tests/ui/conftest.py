"""Fixtures for the window's tests: the fixed qasync loop on pytest-qt's `qapp` (PITFALLS §5).

Tests drive coroutines with `run(loop, coro)`; inside coroutines they wait for Qt signals
through futures (`wait_signal`), never with `qtbot.waitSignal` (a nested event loop).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from PySide6.QtCore import QItemSelectionModel, QLocale, Qt, QTimer, SignalInstance
from PySide6.QtWidgets import QApplication, QDialog, QMessageBox
from pytestqt.qtbot import QtBot

from app import translations
from app.loop import ConvergeEventLoop
from sync.engine import SyncEngine
from sync.errors import SyncError
from sync.profile.profile import Profile
from sync.wire.models import SessionView, text_message
from tests.sync.faults import FaultTransport
from ui.pane.pane import ConversationPane
from ui.window.controller import WindowController
from ui.window.main_window import MainWindow

DEADLINE = 30.0


@pytest.fixture(autouse=True)
def no_window_outlives_its_test(qapp: QApplication) -> Iterator[None]:
    """A test that fails before closing its window leaves it on screen for the tests after
    it, and two visible windows make the Quit shortcut ambiguous: one timeout in CI failed
    `test_ctrl_q_closes_the_window...` too. Hidden, not closed: a close would run the
    window's shutdown after the test's loop has gone."""
    yield
    for widget in QApplication.topLevelWidgets():
        if widget.isVisible():
            widget.hide()


@pytest.fixture(scope="session")
def lexers_loaded() -> None:
    """Every allowed code lexer loaded, as the window leaves them once a conversation has
    opened (until then a block is shown uncoloured: `test_code_lexer_loading.py`)."""
    from ui.text.code_highlight import warm_up

    warm_up()


@pytest.fixture
def pane(qapp: QApplication, qtbot: QtBot) -> Iterator[ConversationPane]:
    """A conversation pane shown on screen (900 x 700), a conversation open in it."""
    widget = ConversationPane()
    widget.resize(900, 700)
    widget.show_session("ses_1", "Trip", "")
    widget.show()
    qtbot.waitExposed(widget)
    try:
        yield widget
    finally:
        widget.close()
        widget.deleteLater()


def caused_by(error: SyncError, os_errno: int) -> SyncError:
    """`error` raised from an `OSError(os_errno)`, as httpx's failures reach the engine."""
    try:
        try:
            raise OSError(os_errno, "from the operating system")
        except OSError as cause:
            raise error from cause
    except SyncError as raised:
        return raised


@pytest.fixture
def loop(qapp: QApplication) -> Iterator[ConvergeEventLoop]:
    """A fresh qasync loop (with the async-generator hooks) on the test's QApplication."""
    qapp.setQuitOnLastWindowClosed(False)
    event_loop = ConvergeEventLoop(qapp)
    asyncio.set_event_loop(event_loop)
    try:
        yield event_loop
    finally:
        try:
            event_loop.shut_down()
        finally:
            asyncio.set_event_loop(None)


def run[T](
    loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T], timeout: float = DEADLINE
) -> T:
    """Run `coro` to completion on `loop`, failing (not hanging) after `timeout` seconds."""
    return loop.run_until_complete(asyncio.wait_for(coro, timeout))


async def wait_signal(signal: SignalInstance, timeout: float = DEADLINE) -> tuple[Any, ...]:
    """The arguments of the next emission of `signal`."""
    future: asyncio.Future[tuple[Any, ...]] = asyncio.get_running_loop().create_future()

    def slot(*args: Any) -> None:
        if not future.done():
            future.set_result(args)

    signal.connect(slot)
    try:
        return await asyncio.wait_for(future, timeout)
    finally:
        signal.disconnect(slot)


async def until(condition: Callable[[], bool], timeout: float = DEADLINE, what: str = "") -> None:
    """Poll `condition` on the loop until it holds; fail with `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}")
        await asyncio.sleep(0.01)


def row(
    session_id: str,
    title: str | None = None,
    updated_at: str = "2026-11-30T05:00:00.000000Z",
    active_run_id: str | None = None,
) -> SessionView:
    """A sidebar row for model tests."""
    return SessionView(
        id=session_id,
        title=title,
        created_at="2026-11-01T00:00:00.000000Z",
        updated_at=updated_at,
        active_run_id=active_run_id,
        last_run_id=None,
    )


# --- a window wired to a real engine on a real stub server ------------------------------


@dataclass
class Harness:
    """The window, its controller and a real engine against `server` (a LiveServer)."""

    loop: ConvergeEventLoop
    server: Any
    window: MainWindow
    controller: WindowController
    engine: SyncEngine
    faults: FaultTransport  # in front of the real server: refuse, fail, lose responses
    dialogs: list[tuple[str, str]] = field(default_factory=list)
    # objectName -> the button to click; a list answers the dialog's showings in turn
    answers: dict[str, str | list[str]] = field(default_factory=dict)

    def create(self, text: str, updated_at: str | None = None, token: str = "dev-alice") -> str:
        """A session with one user message (its title), made through the control plane."""
        body: dict[str, Any] = {"token": token, "messages": [text_message(text)]}
        if updated_at is not None:
            body["updated_at"] = updated_at
        response = self.server.control().post("/_stub/sessions", json=body)
        assert response.status_code == 201, response.text
        return str(response.json()["id"])

    def api(self) -> httpx.Client:
        """Another device of the same principal, speaking HTTP directly."""
        return self.server.client("dev-alice")

    async def sync(self) -> None:
        """One reconcile pass and its content phase, then the sidebar shows the mirror."""
        report = await self.engine.reconcile()
        assert report.error is None, report.error
        await self.engine.content.wait_idle()
        await self.controller.refresh_now()

    def ids(self) -> list[str]:
        return [r.id for r in self.window.model.rows()]

    def select(self, *session_ids: str) -> None:
        """`select_async`, run on the loop (from the test's body)."""
        run(self.loop, self.select_async(*session_ids))

    async def select_async(self, *session_ids: str) -> None:
        """Select rows as a user would (the first becomes current and opens), and wait
        until the controller has finished reacting."""
        model = self.window.model
        selection = self.window.list.selectionModel()
        flag = QItemSelectionModel.SelectionFlag
        for i, session_id in enumerate(session_ids):
            index = model.index_of(session_id)
            if i == 0:
                selection.setCurrentIndex(index, flag.ClearAndSelect)
            else:
                selection.select(index, flag.Select)
        await self.controller.wait_idle()

    def _on_dialog(self, dialog: QDialog) -> None:
        text = dialog.text() if isinstance(dialog, QMessageBox) else dialog.windowTitle()
        self.dialogs.append((dialog.objectName(), text))
        answer = self.answers.get(dialog.objectName())
        if isinstance(answer, list):
            answer = answer.pop(0) if answer else None
        if answer is None:
            QTimer.singleShot(0, dialog.reject)
            return
        assert isinstance(dialog, QMessageBox)
        button = next(b for b in dialog.buttons() if b.text() == answer)
        QTimer.singleShot(0, button.click)


def open_harness(
    loop: ConvergeEventLoop,
    server: Any,
    folder: Path,
    *,
    watch: bool = False,
    token: str = "dev-alice",
) -> Harness:
    """A shown window on a real engine (profile in `folder`) for `server`; no timer, and
    no index watch unless `watch` (so that only the test's own triggers run passes)."""
    window = MainWindow()
    window.show()
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    active = Qt.ApplicationState.ApplicationActive
    run(loop, until(lambda: app.applicationState() == active, what="an active application"))
    # Date headers off: these tests read rows by position (tests/ui/test_grouping.py has
    # the headers).
    controller = WindowController(
        window, sync_interval=0, foreground_debounce_ms=20, group_by_date=False, watch=watch
    )
    profile = Profile(folder, server=server.url, token=token)
    faults = FaultTransport()
    engine = run(loop, SyncEngine.open(profile, retry_attempts=1, transport=faults))
    h = Harness(loop, server, window, controller, engine, faults)
    controller.prompts.shown.connect(h._on_dialog)

    async def attach() -> None:  # on the loop, as the app does: the watch is a task
        controller.attach(engine, connect=False)

    run(loop, attach())
    return h


def close_harness(h: Harness) -> None:
    run(h.loop, h.controller.shutdown(), timeout=10)
    run(h.loop, h.engine.close(), timeout=10)
    h.window.close()
    h.window.deleteLater()


@pytest.fixture
def harness(loop: ConvergeEventLoop, live_server: Any, tmp_path: Path) -> Iterator[Harness]:
    """A window on a real engine and a real stub server; dialogs answered by `answers`."""
    h = open_harness(loop, live_server, tmp_path / "profile")
    try:
        yield h
    finally:
        close_harness(h)


@pytest.fixture
def language(qapp: QApplication, request: pytest.FixtureRequest) -> Iterator[str]:
    """The window's language for a test parametrized indirectly with a locale code."""
    code = str(request.param)
    installed = translations.install(qapp, QLocale(code))
    try:
        yield code
    finally:
        translations.uninstall(qapp, installed)
