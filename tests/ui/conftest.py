"""Fixtures for the window's tests: the fixed qasync loop on pytest-qt's `qapp` (PITFALLS §5).

Tests drive coroutines with `run(loop, coro)`; inside coroutines they wait for Qt signals
through futures (`wait_signal`), never with `qtbot.waitSignal` (a nested event loop).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

import pytest
from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QApplication

from app.loop import ConvergeEventLoop
from sync.mirror import SessionRow

DEADLINE = 30.0


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
            event_loop.run_until_complete(
                asyncio.wait_for(event_loop.shutdown_asyncgens(), timeout=5)
            )
        finally:
            event_loop.close()
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
) -> SessionRow:
    """A sidebar row for model tests."""
    return SessionRow(
        id=session_id,
        title=title,
        created_at="2026-11-01T00:00:00.000000Z",
        updated_at=updated_at,
        active_run_id=active_run_id,
        last_run_id=None,
    )
