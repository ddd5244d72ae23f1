"""The app's event loop (`app.loop.ConvergeEventLoop`) runs asyncio callbacks only while it
runs, whoever else makes Qt process events."""

from __future__ import annotations

import asyncio
import threading
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


def test_a_callback_a_thread_posted_before_the_close_is_dropped_after_it(
    qapp: QApplication,
) -> None:
    """An executor thread that finishes while the loop closes (`close()` waits for it) posts
    its `call_soon_threadsafe` as a queued Qt signal, delivered after the loop deleted its
    timer: that delivery must be dropped, not raise inside Qt's event loop."""
    loop = ConvergeEventLoop(qapp)
    ran: list[str] = []
    worker = threading.Thread(target=loop.call_soon_threadsafe, args=(ran.append, "late"))
    worker.start()
    worker.join()
    # the signal is still queued: nothing has processed Qt events since it was posted
    loop.close()
    qapp.processEvents()
    assert ran == []
