"""The window during a first walk that a slow server stretches over passes: the
status line says how far the walk has come, in the engine's own sentence, neither as
an error nor as offline (the server answers, slowly), and the rows that arrived are listed.

A real stub, a real engine on a real mirror; the slow link is the fault transport of
`tests/sync/test_slow_walk.py`, which holds a cursor page until the pass deadline cuts it.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

from app.loop import ConvergeEventLoop
from sync import EngineEvent, EngineState, IndexChanged, StatusChanged
from tests.sync.faults import FaultTransport
from tests.sync.helpers import Server
from tests.sync.test_slow_walk import LIMIT, _open, _stalled
from tests.ui.conftest import run
from ui.sidebar.refresher import SidebarRefresher
from ui.window.main_window import MainWindow
from ui.window.status_presenter import StatusPresenter

SESSIONS = 12  # three pages of four: the first pass gets two


def test_an_unfinished_walk_shows_its_progress_sentence_not_an_error_nor_offline(
    loop: ConvergeEventLoop, live_server: Any, tmp_path: Path
) -> None:
    window = MainWindow()
    triggers: list[object] = []
    tasks: set[asyncio.Task[object]] = set()

    def spawn(coro: Any, _what: str) -> None:
        task = asyncio.ensure_future(coro)
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    sidebar = SidebarRefresher(window.model, spawn=spawn, on_applied=lambda: None)
    presenter = StatusPresenter(
        window,
        trigger=triggers.append,
        connected=lambda: True,
        filter_text=lambda: "",
        on_reconnected=lambda: None,
    )

    async def scenario() -> None:
        async with Server(live_server.url) as server:
            for _ in range(SESSIONS):
                await server.create()
            transport = FaultTransport()
            engine = await _open(tmp_path / "a", live_server.url, transport)
            shown: list[str] = []

            def on_event(event: EngineEvent) -> None:  # as `ui.window.controller` wires them
                if isinstance(event, StatusChanged):
                    presenter.show(event.status)
                    shown.append(window.status.text())
                elif isinstance(event, IndexChanged):
                    sidebar.index_changed(event)

            sidebar.set_source(engine.rows, engine.changes_since)
            unsubscribe = engine.subscribe(on_event)
            try:
                _stalled(transport).left = 1
                await engine.reconcile()
                status = engine.status
                async with asyncio.timeout(20):  # the list catches up with the mirror
                    while {r.id for r in window.model.sessions()} != {
                        r.id for r in await engine.rows()
                    }:
                        await asyncio.sleep(0.02)
                listed = len(window.model.sessions())
                # The next pass, while it runs, keeps the walk's count on the line.
                presenter.show(dataclasses.replace(status, state=EngineState.SYNCING))
                still = window.status.text()
                presenter.show(status)
            finally:
                unsubscribe()
                await engine.close()
        sentence = (
            f"The server answered slowly: {2 * LIMIT:,} conversations so far; Converge will go on."
        )
        assert status.state not in (EngineState.ERROR, EngineState.OFFLINE), status
        assert window.status.text() == sentence
        assert window.status.property("error") is False
        assert not window.offline and not window.offline_banner.isVisible()
        assert shown[-1] == sentence  # what the engine's own status put on the line
        assert still == sentence
        assert listed == 2 * LIMIT  # the list shows the rows that arrived
        window.resize(900, 600)
        window.show()
        assert window.status.grab().save(str(tmp_path / "status_line.png"))  # to look at

    try:
        run(loop, scenario())
    finally:
        presenter.stop()
        window.close()
