"""The asyncio event loop that runs on Qt's event loop, with async-generator hooks.

qasync 0.28 does not install `sys.set_asyncgen_hooks` the way
`asyncio.BaseEventLoop.run_forever` does. Without them, an `async for` over an httpx
stream (a run's SSE events) that is left early hands its generators to the garbage collector outside
the loop ("async generator ignored GeneratorExit") and the HTTP connection is never closed,
so the server never sees the disconnect (PITFALLS §2). This subclass installs the hooks
for the duration of `run_forever` and restores the previous ones afterwards. Use it in the
application and in the tests.
"""

from __future__ import annotations

import asyncio
import gc
import sys
from typing import Any

import qasync
import shiboken6


class _WhileRunning:
    """What qasync's Qt timer runs for one asyncio handle: the handle, or, when Qt fires the
    timer while the loop is not running, the same handle again at the loop's next turn.

    Qt fires timers whenever anyone processes events: pytest-qt's `processEvents()` after
    each test's setup, call and teardown, or a nested `processEvents()` in the app. A task
    stepped there has no running loop: `asyncio.to_thread`, `wait_for` or anyio inside
    httpx raise, the task dies ("coroutine ... was never awaited"), and an index watch
    that died so kept saying WATCHING while nothing was held (tests/ui/test_window_watch).
    """

    __slots__ = ("_handle", "_loop")

    def __init__(self, loop: ConvergeEventLoop, handle: asyncio.Handle) -> None:
        self._loop = loop
        self._handle = handle

    @property
    def _cancelled(self) -> bool:
        return self._handle.cancelled()

    def _run(self) -> None:
        if self._loop.is_running():
            self._handle._run()
        elif not self._loop.is_closed():
            self._loop._add_callback(self._handle, 0)  # deferred, not dropped

    def __repr__(self) -> str:
        return repr(self._handle)


class ConvergeEventLoop(qasync.QEventLoop):  # type: ignore[misc]
    """`qasync.QEventLoop` that finalises async generators on the loop and runs callbacks
    only while it runs."""

    def _add_callback(self, handle: asyncio.Handle, delay: float = 0) -> asyncio.Handle:
        if self.is_closed():
            # A thread's `call_soon_threadsafe` is a queued Qt signal: one posted before the
            # close (an executor job `close()` waited for) arrives after `close()` deleted
            # the timer. Nothing can run it on a closed loop.
            handle.cancel()
            return handle
        self._timer.add_callback(_WhileRunning(self, handle), delay)
        return handle

    def run_forever(self) -> Any:
        old_hooks = sys.get_asyncgen_hooks()
        sys.set_asyncgen_hooks(
            firstiter=self._asyncgen_firstiter_hook,
            finalizer=self._asyncgen_finalizer_hook,
        )
        try:
            return super().run_forever()
        finally:
            sys.set_asyncgen_hooks(*old_hooks)

    def shut_down(self, timeout: float = 5.0) -> None:
        """Finish what is left on the loop, then close it (the app's end and each UI test's).

        An async generator dropped on the loop's last turn (the SSE stream of a run whose
        task was cancelled at the window's stop) is finalised by a task that `aclose()`s it,
        created from a queued callback and needing several turns (httpx closes its
        connection there). `shutdown_asyncgens()` alone finishes in one turn and the loop
        would then close under that task ("Task was destroyed but it is pending", an unclosed
        transport): here the loop turns until no other task is left, cancelling what is
        still running after `timeout`; collects garbage and turns again, so a generator that
        is garbage only now is finalised on the loop rather than in `close()`; then finalises
        the generators it still tracks and turns once more for the tasks that made.
        """

        deadline = self.time() + timeout

        async def quiet() -> None:
            me = asyncio.current_task()
            while True:
                await asyncio.sleep(0)  # queued finalisers create their aclose() tasks
                pending = {t for t in asyncio.all_tasks(self) if t is not me}
                if not pending:
                    break
                left = deadline - self.time()
                if left <= 0:
                    for task in pending:
                        task.cancel()
                    await asyncio.wait(pending, timeout=timeout)
                    break
                await asyncio.wait(pending, timeout=left)

        async def settle() -> None:
            await quiet()
            # A generator that is garbage only now (its task just ended) would otherwise be
            # collected after the close, its queued aclose() dropped with qasync's timers
            # ("coroutine method 'aclose' ... was never awaited", then an unclosed transport).
            gc.collect()
            await quiet()
            await self.shutdown_asyncgens()
            await quiet()

        try:
            self.run_until_complete(settle())
        finally:
            self.close()

    def close(self) -> None:
        """Close, then kill qasync's pending Qt timers and delete its timer object now.

        qasync's `close()` only flags its timer object as stopped; the Qt timers stay
        registered until they fire. If the Python garbage collector later destroys that
        QObject on another thread (a server or executor thread that happens to run a
        collection), Qt keeps a dangling timer and the next tick crashes the process (seen
        as a segfault in `QTimerInfoList::activateTimers` when tests create many loops).
        """
        timer = getattr(self, "_timer", None)
        super().close()
        if timer is not None and shiboken6.isValid(timer):
            callbacks = getattr(timer, "_SimpleTimer__callbacks", {})
            for timer_id in list(callbacks):
                timer.killTimer(timer_id)
            callbacks.clear()
            shiboken6.delete(timer)

    def run_until_complete(self, future: Any) -> Any:
        """Run until `future` is done, without qasync's extra pass of Qt events afterwards.

        qasync 0.28 ends `run_until_complete` with `processEvents()` after the loop has
        stopped, so queued asyncio callbacks then run with no running loop: a task stepping
        into httpx there fails inside anyio ("NoEventLoopError") and can leave a connection
        pool half-closed. Every callback here runs while the loop is running.
        """
        if self.is_running():
            raise RuntimeError("Event loop already running")
        task = asyncio.ensure_future(future, loop=self)

        def stop(_: Any) -> None:
            self.stop()

        task.add_done_callback(stop)
        try:
            self.run_forever()
        finally:
            task.remove_done_callback(stop)
        if not task.done():
            raise RuntimeError("Event loop stopped before Future completed.")
        return task.result()


def install(loop: ConvergeEventLoop) -> None:
    """Make `loop` the current thread's event loop."""
    asyncio.set_event_loop(loop)
