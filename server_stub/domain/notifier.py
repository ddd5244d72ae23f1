"""In-process wake-ups per run: "something about this run was committed, re-read the DB".

A waiter takes the current `asyncio.Event` of the run *before* re-reading the database, then
awaits it; `notify` (callable from any thread) sets that event and installs a fresh one. The
database stays the source of truth: the event only says when to look again, and waiters also
look again on a timeout, so a writer in another process (a second server on the same
PostgreSQL) is seen too, only later.
"""

from __future__ import annotations

import asyncio
import contextlib


class RunNotifier:
    """Per-run wake-up events, bound to the app's event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._events: dict[str, asyncio.Event] = {}

    def waiter(self, run_id: str) -> asyncio.Event:
        """The event the next `notify(run_id)` sets; call on the loop before re-reading."""
        event = self._events.get(run_id)
        if event is None:
            event = asyncio.Event()
            self._events[run_id] = event
        return event

    def release(self, run_id: str, event: asyncio.Event) -> None:
        """Forget `event` if nobody set it (a waiter that is done, e.g. a stream of a finished
        run), so that finished runs leave no entry behind. Call on the loop."""
        if self._events.get(run_id) is event and not event.is_set():
            del self._events[run_id]

    def notify(self, run_id: str, *, final: bool = False) -> None:
        """Wake everyone waiting on `run_id`; thread-safe. `final` forgets the run."""
        try:
            on_loop = asyncio.get_running_loop() is self._loop
        except RuntimeError:
            on_loop = False
        if on_loop:
            self._notify(run_id, final)
        else:
            with contextlib.suppress(RuntimeError):  # loop closed during shutdown
                self._loop.call_soon_threadsafe(self._notify, run_id, final)

    def notify_all(self) -> None:
        """Wake every waiter of every run (the fleet bus reconnected: messages may have been
        missed). Call on the loop."""
        events, self._events = self._events, {}
        for event in events.values():
            event.set()

    def _notify(self, run_id: str, final: bool) -> None:
        event = self._events.pop(run_id, None)
        if event is not None:
            event.set()


async def wait_for(event: asyncio.Event, timeout: float) -> bool:
    """Await `event` for at most `timeout` seconds; True when it was set."""
    try:
        await asyncio.wait_for(event.wait(), timeout)
    except TimeoutError:
        return False
    return True
