"""The sidebar's relative times."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest

from app.loop import ConvergeEventLoop
from sync import SessionView
from sync.events import EngineState, EngineStatus, StatusChanged
from sync.mirror.reader import MirrorChanges
from tests.ui.conftest import row, run
from ui.sidebar.relative_time import parse_timestamp, relative_time, server_now, set_server_offset

NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@pytest.mark.parametrize(
    ("ago", "words"),
    [
        (timedelta(seconds=10), "Just now"),
        (timedelta(minutes=2, seconds=5), "2 min ago"),
        (timedelta(minutes=59), "59 min ago"),
    ],
)
def test_recent_activity_reads_in_minutes(ago: timedelta, words: str) -> None:
    assert relative_time(stamp(NOW - ago), NOW) == words


def test_yesterday_and_older_dates() -> None:
    local_now = NOW.astimezone()
    yesterday = (local_now - timedelta(days=1)).replace(hour=12)
    assert relative_time(stamp(yesterday.astimezone(UTC)), NOW) == "Yesterday"
    assert relative_time("2026-03-04T10:00:00.000000Z", NOW) == "4 Mar"
    assert relative_time("2024-03-04T10:00:00.000000Z", NOW) == "4 Mar 2024"


def test_a_malformed_timestamp_reads_as_nothing() -> None:
    assert parse_timestamp("yesterday-ish") is None
    assert relative_time("yesterday-ish", NOW) == ""


class _EngineOnAServerTwoDaysAhead:
    """What the controller reads of an engine, with `server_clock_offset` at two days (the
    machine's clock two days behind the server's): no server, no mirror."""

    server_clock_offset = 2 * 86400.0
    status = EngineStatus(EngineState.IDLE)

    def __init__(self, rows: list[SessionView] | None = None) -> None:
        self.listeners: list[Callable[[object], None]] = []
        self._rows = rows or []

    async def rows(self, filter_text: str = "") -> list[SessionView]:
        return self._rows

    async def changes_since(
        self, since: int | None, filter_text: str = "", limit: int | None = None
    ) -> MirrorChanges:
        return MirrorChanges(0, self._rows, [], whole=True)

    def status_changed(self) -> None:
        """What a pass announces; the controller then reads `server_clock_offset`."""
        for listener in self.listeners:
            listener(StatusChanged(EngineStatus(EngineState.IDLE, last_success=time.time())))

    def subscribe(self, listener: Callable[[object], None]) -> Callable[[], None]:
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener)

    def trigger(self, reason: object) -> None: ...
    def start_timer(self, interval: float) -> None: ...
    def stop_timer(self) -> None: ...
    def start_watch(self) -> None: ...
    def cancel_watch(self) -> None: ...


@pytest.fixture
def _offset_reset() -> Iterator[None]:
    """The offset is the module's: never left to the next test."""
    yield
    set_server_offset(0.0)


@pytest.mark.usefixtures("_offset_reset")
def test_dates_follow_the_attached_engines_server_clock_and_not_after_it_is_detached(
    loop: ConvergeEventLoop,
) -> None:
    """A row a day old on the server's clock is in this machine's future ("Just now") until
    a status change brings the engine's offset: then "Yesterday". Detached (Settings switch
    to another server, whose clock is unknown yet), "now" is this machine's clock again."""
    from ui.window.controller import WindowController
    from ui.window.main_window import MainWindow

    real = datetime.now(UTC)
    server = real + timedelta(days=2)
    # Noon-ish a day before on the server's clock, far from its local midnight.
    day_old = stamp(server - timedelta(hours=26 if server.hour >= 2 else 24))
    window = MainWindow()
    controller = WindowController(window, sync_interval=0, watch=False)
    engine = _EngineOnAServerTwoDaysAhead()
    try:
        controller.attach(cast(Any, engine), connect=False)
        assert relative_time(day_old) == "Just now"
        engine.status_changed()
        assert relative_time(day_old) == "Yesterday"
        controller.detach()
        assert relative_time(day_old) == "Just now"
        assert abs(server_now() - datetime.now(UTC)) < timedelta(seconds=1)
    finally:
        run(loop, controller.shutdown())
        window.close()


@pytest.mark.usefixtures("_offset_reset")
def test_a_row_a_day_old_on_the_servers_clock_is_under_yesterday(loop: ConvergeEventLoop) -> None:
    """Day sections count days on the clock the row dates are worded against: with the
    server two days ahead, its day-old row reads "Yesterday" under "Yesterday", never under
    "Today" (this machine's day)."""
    from ui.sidebar.grouping import is_header
    from ui.window.controller import WindowController
    from ui.window.main_window import MainWindow

    server = datetime.now(UTC) + timedelta(days=2)
    day_old = stamp(server - timedelta(hours=26 if server.hour >= 2 else 24))
    window = MainWindow()
    controller = WindowController(window, sync_interval=0, watch=False)
    engine = _EngineOnAServerTwoDaysAhead([row("ses_day_old", "A day old", updated_at=day_old)])

    async def shown() -> list[str | None]:
        controller.attach(cast(Any, engine), connect=False)
        engine.status_changed()
        await controller.refresh_now()
        return [
            r.title if is_header(r) else relative_time(r.updated_at) for r in window.model.rows()
        ]

    try:
        assert run(loop, shown()) == ["Yesterday", "Yesterday"]
    finally:
        run(loop, controller.shutdown())
        window.close()
