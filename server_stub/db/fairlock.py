"""A first-come, first-served lock for SQLite write transactions within one process.

SQLite's busy handler makes a writer that finds the database locked sleep and retry, with
sleeps growing to 100 ms; a writer that commits and begins again at once (a run writing
many short transactions) usually wins the lock again before the sleeper wakes, so another
tenant's short write can wait behind a whole run. Taking this ticket lock before `BEGIN
IMMEDIATE` hands the write lock over in arrival order instead, and a waiter sleeps on a
condition rather than polling. Re-entrant for the thread that holds it (a nested write in
one thread then fails on SQLite's own lock rather than deadlocking here).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class FairLock:
    """A ticket lock: holders are served in the order they asked."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._next_ticket = 0
        self._serving = 0
        self._owner: int | None = None

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Hold the lock for the block (at once when this thread holds it already)."""
        me = threading.get_ident()
        if self._owner == me:
            yield
            return
        with self._cond:
            ticket = self._next_ticket
            self._next_ticket += 1
            while ticket != self._serving:
                self._cond.wait()
            self._owner = me
        try:
            yield
        finally:
            self._release()

    @contextmanager
    def hold_if_free(self) -> Iterator[bool]:
        """Hold the lock for the block only if nobody holds or waits for it now (True);
        never waits (False: the block runs without it, and should not write)."""
        with self._cond:
            free = self._owner is None and self._next_ticket == self._serving
            if free:
                self._next_ticket += 1
                self._owner = threading.get_ident()
        try:
            yield free
        finally:
            if free:
                self._release()

    def _release(self) -> None:
        with self._cond:
            self._owner = None
            self._serving += 1
            self._cond.notify_all()
