"""The app's event loop (`app.loop.ConvergeEventLoop`) runs asyncio callbacks only while it
runs, whoever else makes Qt process events."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from PySide6.QtWidgets import QApplication

from app.loop import ConvergeEventLoop
from tests.ui.conftest import run


def test_qt_events_processed_outside_the_loop_do_not_step_its_tasks(
    qapp: QApplication, loop: ConvergeEventLoop
) -> None:
    """pytest-qt calls `processEvents()` after each test's setup: a task stepped there had
    no running loop and died (the two-window watch test's watch, held by nobody)."""
    seen: list[bool] = []

    async def step() -> None:
        seen.append(asyncio.get_running_loop() is loop)

    task = loop.create_task(step())  # between runs, as a thread's answer arrives
    qapp.processEvents()  # as pytest-qt does between a test's phases
    assert seen == [] and not task.done()
    run(loop, asyncio.sleep(0))
    run(loop, asyncio.wait_for(task, 5))
    assert seen == [True]


def test_shutting_down_finishes_a_stream_abandoned_on_the_last_turn(qapp: QApplication) -> None:
    """An SSE stream left when its task is cancelled at the window's stop is finalised by an
    `aclose()` task needing several turns: the loop closed under it ("Task was destroyed but
    it is pending", an unclosed transport failing a later test)."""
    event_loop = ConvergeEventLoop(qapp)
    closed: list[bool] = []

    async def stream() -> AsyncIterator[int]:
        try:
            yield 1
            yield 2
        finally:
            for _ in range(3):  # as httpx's close of its connection
                await asyncio.sleep(0)
            closed.append(True)

    async def abandon() -> None:
        items = stream()
        await anext(items)
        del items  # the finaliser hook queues its aclose()

    event_loop.run_until_complete(abandon())
    event_loop.shut_down()
    assert closed == [True]
    assert event_loop.is_closed()
