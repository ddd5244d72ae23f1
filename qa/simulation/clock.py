"""Virtual time for a simulated schedule: an event loop whose clock only moves when every
task waits, and the `time` functions the engine reads, on the same clock.

Timers, deadlines, `Retry-After` waits and backoff then take no real time, and two runs of
one seed see the same instants. Mirror calls, which the engine sends to a worker thread,
run inline on the loop's thread, so no thread decides an interleaving. The wall clock moves
by a microsecond on every read besides, so that two stamps the engine compares (a walk's
epoch, a row's `synced_at`) are never equal by accident of resolution.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import selectors
import sys
import time
import types
from collections.abc import Callable, Iterator
from typing import Any

#: The simulated wall clock starts here (2026-01-01T00:00:00Z).
WALL_START = 1_767_225_600.0


class Stuck(Exception):
    """Every task waits and no timer is due: nothing can ever happen again."""


class VirtualClock:
    """Seconds since the schedule began; `wall()` adds `WALL_START`."""

    def __init__(self) -> None:
        self.now = 0.0
        self._reads = 0

    def monotonic(self) -> float:
        return self.now

    def wall(self) -> float:
        self._reads += 1
        return WALL_START + self.now + self._reads * 1e-6


class _Selector(selectors.DefaultSelector):
    """Answers what is ready at once; where the loop would block, moves the clock instead."""

    def __init__(self, clock: VirtualClock) -> None:
        super().__init__()
        self.clock = clock

    def select(self, timeout: float | None = None) -> list[Any]:
        ready = super().select(0)
        if ready or timeout == 0:
            return ready
        if timeout is None:
            raise Stuck("every task waits for something that can no longer happen")
        self.clock.now += timeout
        return []


class _Inline(concurrent.futures.ThreadPoolExecutor):
    """Runs what is submitted at once, on the caller's thread (asyncio accepts only a
    `ThreadPoolExecutor` as the default; this one never starts a thread). `before` is called
    first: what raises there (a kill between two mirror transactions) is the call's."""

    before: Callable[[], None] | None = None

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        try:
            if self.before is not None:
                self.before()
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # the awaiting task receives it, as from a thread
            future.set_exception(exc)
        return future


class VirtualLoop(asyncio.SelectorEventLoop):
    def __init__(self, clock: VirtualClock) -> None:
        super().__init__(_Selector(clock))
        self.clock = clock
        self.inline = _Inline()
        self.set_default_executor(self.inline)

    def time(self) -> float:
        return self.clock.now


@contextlib.contextmanager
def engine_on(clock: VirtualClock) -> Iterator[None]:
    """Within the block, every `sync` module that imported `time` reads `clock`."""
    fake = types.SimpleNamespace(
        time=clock.wall,
        monotonic=clock.monotonic,
        perf_counter=clock.monotonic,
        sleep=time.sleep,
        clock_gettime=lambda _which: clock.monotonic(),
        CLOCK_BOOTTIME=getattr(time, "CLOCK_BOOTTIME", 7),
    )
    patched = [
        module
        for name, module in list(sys.modules.items())
        if (name == "sync" or name.startswith("sync.")) and getattr(module, "time", None) is time
    ]
    for module in patched:
        module.time = fake  # type: ignore[attr-defined]
    try:
        yield
    finally:
        for module in patched:
            module.time = time  # type: ignore[attr-defined]
