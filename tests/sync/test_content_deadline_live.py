"""`converge sync` is bounded as documented, and its content phase makes progress on a slow
link (CONTRACT §11, docs/sync.md "The content phase" and "Bounds").

The real stub on loopback, with a gate in front of its event route (an ASGI middleware
inside the server): it counts the event-page requests in flight at the server and holds
them, either until the test lets them go (a server whose event route never answers in
time) or until a given number are in flight at once (then every one goes through). Real
SQLite mirrors; nothing here waits on a clock."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from server_stub.config import ServerSettings
from server_stub.runner import ServerThread
from sync.api.bounds import Bounds
from sync.cli import main as cli
from sync.engine import SyncEngine
from sync.reconcile.content import CONCURRENCY
from tests.sync.helpers import Server, device, run
from tests.sync.test_cli_live import conn, mirror_ids

EVENTS = re.compile(r"/v1/sessions/[^/]+/events")


@dataclass
class Gate:
    """Event-page requests seen at the server: how many are in flight, the most at once.
    `hold`: let them through once this many are in flight (for good); None: hold every one
    until `release()`."""

    hold: int | None = None
    in_flight: int = 0
    most: int = 0
    asked: int = 0
    released: bool = False
    _open: asyncio.Event = field(default_factory=asyncio.Event)
    _loop: asyncio.AbstractEventLoop | None = None

    def release(self) -> None:
        """Let every held and later request through (from the test's thread)."""
        self.released = True
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._open.set)


class GateMiddleware:
    def __init__(self, app: Any, gate: Gate) -> None:
        self.app = app
        self.gate = gate

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        gate = self.gate
        if scope["type"] != "http" or not EVENTS.fullmatch(scope["path"]):
            await self.app(scope, receive, send)
            return
        gate._loop = asyncio.get_running_loop()
        gate.asked += 1
        gate.in_flight += 1
        gate.most = max(gate.most, gate.in_flight)
        try:
            if gate.released or (gate.hold is not None and gate.in_flight >= gate.hold):
                gate._open.set()
            await gate._open.wait()
            await self.app(scope, receive, send)
        finally:
            gate.in_flight -= 1


@pytest.fixture
def gated(tmp_path: Path, sqlite_template: Path) -> Iterator[tuple[str, Gate]]:
    """A stub whose event route is behind a `Gate` (holding every page until released;
    a test sets `hold` to let them through at a number in flight)."""
    folder = tmp_path / "server"
    folder.mkdir()
    shutil.copyfile(sqlite_template, folder / "server.sqlite3")
    settings = ServerSettings(
        database_url=f"sqlite:///{folder / 'server.sqlite3'}",
        artifacts_dir=folder / "objects",
        control=True,
        agent_delay=0.0,
        maintenance_interval=3600.0,
    )
    thread = ServerThread(settings)
    gate = Gate()
    thread.app.add_middleware(GateMiddleware, gate=gate)
    thread.start()
    try:
        yield thread.url, gate
    finally:
        gate.release()
        thread.stop()


async def _seed(url: str, count: int) -> list[str]:
    async with Server(url) as server:
        return [(await server.control_session(f"note {i}")).id for i in range(count)]


def test_sync_ends_at_its_deadline_with_the_index_converged_and_says_what_is_left(
    gated: tuple[str, Gate], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    url, gate = gated
    ids = run(_seed(url, 5))
    real_open = SyncEngine.open

    async def open_with_a_short_deadline(profile: Any, **kwargs: Any) -> SyncEngine:
        return await real_open(profile, bounds=Bounds(pass_seconds=2.0), **kwargs)

    monkeypatch.setattr(SyncEngine, "open", open_with_a_short_deadline)
    profile = tmp_path / "p"
    code = cli.main(["sync", *conn(url, profile)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "inserted 5" in out
    assert "5 conversations' messages still to fetch" in err, err
    assert "run `converge sync` again or keep the window open" in err
    assert gate.asked >= 1  # the phase did ask, and the deadline ended it
    assert mirror_ids(profile) == set(ids)  # the index converged all the same

    gate.release()  # the route answers again: the next sync fetches what was left
    code = cli.main(["sync", "--json", *conn(url, profile)])
    out, err = capsys.readouterr()
    assert code == 0, err
    report = json.loads(out)
    assert report["transcripts_fetched"] == 5 and report["transcripts_left"] == 0


def test_transcripts_are_fetched_concurrently_and_bounded(
    gated: tuple[str, Gate], tmp_path: Path
) -> None:
    url, gate = gated
    gate.hold = CONCURRENCY  # no page is answered until that many are asked at once
    ids = run(_seed(url, 3 * CONCURRENCY))

    async def scenario() -> None:
        async with device(url, tmp_path / "a") as (engine, _transport):
            report = await engine.reconcile()
            assert report.ok, report.problem
            await engine.content.wait_idle()
            content = engine.content.last_report
            assert content is not None and content.error is None
            assert sorted(content.fetched) == sorted(ids)
            assert await engine.content.backlog() == 0

    run(scenario(), timeout=30)
    assert gate.most == CONCURRENCY
    assert gate.asked == len(ids)  # each conversation asked once
