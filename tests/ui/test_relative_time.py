"""The sidebar's relative times."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest

from app.loop import ConvergeEventLoop
from sync.engine_events import EngineState, EngineStatus, StatusChanged
from tests.ui.conftest import run
from ui.relative_time import parse_timestamp, relative_time, server_now, set_server_offset

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
    last_change_seq = 0

    def __init__(self) -> None:
        self.listeners: list[Callable[[object], None]] = []

    async def rows(self, filter_text: str = "") -> list[object]:
        return []

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
    from ui.controller import WindowController
    from ui.main_window import MainWindow

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
        for listener in engine.listeners:
            listener(StatusChanged(EngineStatus(EngineState.IDLE, last_success=real.timestamp())))
        assert relative_time(day_old) == "Yesterday"
        controller.detach()
        assert relative_time(day_old) == "Just now"
        assert abs(server_now() - datetime.now(UTC)) < timedelta(seconds=1)
    finally:
        run(loop, controller.shutdown())
        window.close()
