"""Warnings that repeat are logged once per interval, with a count of what was held back.

A fault that repeats (one principal holding more connections than the open-files limit
allows) would otherwise log every failed accept and every refused request, and fill the disk
with logs within minutes. A `RepeatLog` logs the first occurrence of each kind (a fixed key
chosen by the code, never a value from a request, so the table stays small), counts the
repeats of the next `interval` seconds, and reports that count with the next occurrence
after the interval or at `flush()` (which the app's lifespan calls every interval and at
shutdown). Thread-safe: routes, worker threads and the event loop's exception handler all
use it.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_INTERVAL = 60.0
#: The table never grows past this many kinds (error keys include an exception's type name).
MAX_KEYS = 256


@dataclass
class _Entry:
    logged_at: float
    suppressed: int = 0
    level: int = logging.WARNING


class RepeatLog:
    """`warning(key, message, *args)`: logged at most once per `interval` per key."""

    def __init__(
        self,
        logger: logging.Logger,
        interval: float = DEFAULT_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.logger = logger
        self.interval = interval
        self._clock = clock
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()

    def warning(self, key: str, message: str, *args: object) -> None:
        """Log a warning now, or count it as a repeat of `key` within the interval."""
        self.log(logging.WARNING, key, message, *args)

    def error(
        self, key: str, message: str, *args: object, exc_info: BaseException | bool = False
    ) -> None:
        """Like `warning`, at ERROR (with the traceback of the logged occurrence if asked)."""
        self.log(logging.ERROR, key, message, *args, exc_info=exc_info)

    def log(
        self,
        level: int,
        key: str,
        message: str,
        *args: object,
        exc_info: BaseException | bool = False,
    ) -> None:
        now = self._clock()
        with self._lock:
            if key not in self._entries and len(self._entries) >= MAX_KEYS:
                self._entries.clear()  # keys are the code's own: this is a safety net only
            entry = self._entries.get(key)
            if entry is not None and now - entry.logged_at < self.interval:
                entry.suppressed += 1
                return
            held_back = entry.suppressed if entry is not None else 0
            self._entries[key] = _Entry(logged_at=now, level=level)
        if held_back:
            message += " (%d more like this in the last %.0f s were not logged)"
            args = (*args, held_back, self.interval)
        self.logger.log(level, message, *args, exc_info=exc_info)

    def flush(self) -> None:
        """Report the repeats counted and not yet reported (one line per key)."""
        with self._lock:
            pending = [(k, e.suppressed, e.level) for k, e in self._entries.items() if e.suppressed]
            for key, _count, _level in pending:
                self._entries[key].suppressed = 0
        for key, count, level in pending:
            self.logger.log(level, "%s: %d more occurrences were not logged", key, count)

    def suppressed(self, key: str) -> int:
        """Repeats of `key` counted since it was last logged (for tests and metrics)."""
        with self._lock:
            entry = self._entries.get(key)
            return 0 if entry is None else entry.suppressed


async def flush_every(repeat_log: RepeatLog) -> None:
    """Flush `repeat_log` once per its interval, for ever (a background task of the app)."""
    try:
        while True:
            await asyncio.sleep(repeat_log.interval)
            repeat_log.flush()
    finally:
        repeat_log.flush()
