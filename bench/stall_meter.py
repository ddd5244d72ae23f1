"""The window's stalls, measured from inside its loop: gaps between the ticks of a 5 ms Qt
timer (wall clock and UI-thread CPU time), the longest step of each coroutine, and what the
worst gap was made of. Shared by `bench ui` and `bench ui_without`."""

from __future__ import annotations

import asyncio
import time
from typing import Any

TICK_MS = 5


def _owner(handle: asyncio.Handle) -> str:
    """The coroutine a loop callback steps (its qualified name), or the callback's name."""
    callback = getattr(handle, "_callback", None)
    task = getattr(callback, "__self__", None)
    if isinstance(task, asyncio.Task):
        return str(getattr(task.get_coro(), "__qualname__", "task"))
    return str(getattr(callback, "__qualname__", type(callback).__name__))


class StallMeter:
    """Gaps between the ticks of a 5 ms Qt timer: wall clock and UI-thread CPU time; and
    the longest single loop callback per coroutine, to say whose work a stall was."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.wall: list[float] = []
        self.cpu: list[float] = []
        self._timer = QTimer()
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._last = (time.perf_counter(), time.thread_time())
        self._since_tick: list[tuple[str, float]] = []
        self.worst: tuple[float, list[tuple[str, float]]] = (0.0, [])

    def start(self) -> None:
        self.wall.clear()
        self.cpu.clear()
        self.longest: dict[str, float] = {}
        self.total: dict[str, float] = {}
        self._since_tick = []
        self.worst = (0.0, [])
        original = asyncio.Handle._run
        self._original = original
        longest = self.longest
        total = self.total
        since_tick = self._since_tick

        def timed(handle: asyncio.Handle) -> None:
            started = time.perf_counter()
            original(handle)
            elapsed = time.perf_counter() - started
            name = _owner(handle)
            since_tick.append((name, elapsed))
            total[name] = total.get(name, 0.0) + elapsed
            if elapsed > longest.get(name, 0.0):
                longest[name] = elapsed

        asyncio.Handle._run = timed  # type: ignore[method-assign,assignment]
        self._last = (time.perf_counter(), time.thread_time())
        self._timer.start()

    def stop(self) -> dict[str, Any]:
        self._timer.stop()
        asyncio.Handle._run = self._original  # type: ignore[method-assign]
        self._tick()
        wall = sorted(self.wall)
        top = sorted(self.longest.items(), key=lambda kv: -kv[1])[:4]
        return {
            "longest_callbacks_ms": {name: round(t * 1000, 1) for name, t in top},
            "max_wall_gap_ms": round(max(wall) * 1000, 1),
            "p99_wall_gap_ms": round(wall[int(len(wall) * 0.99) - 1] * 1000, 1),
            "max_ui_cpu_gap_ms": round(max(self.cpu) * 1000, 1),
            "worst_gap": self._worst_gap(),
            "ticks": len(wall),
        }

    def _worst_gap(self) -> dict[str, Any]:
        """What the UI thread did in the gap with the most CPU: the loop callbacks that ran in
        it (the three longest, and their sum), and the rest, which is Qt's own work (paint,
        layout, events) outside asyncio."""
        cpu, callbacks = self.worst
        in_loop = sum(t for _, t in callbacks)
        top = sorted(callbacks, key=lambda c: -c[1])[:3]
        return {
            "cpu_ms": round(cpu * 1000, 1),
            "callbacks": len(callbacks),
            "in_callbacks_ms": round(in_loop * 1000, 1),
            "outside_loop_ms": round(max(0.0, cpu - in_loop) * 1000, 1),
            "longest": [[name, round(t * 1000, 1)] for name, t in top],
        }

    def _tick(self) -> None:
        wall, cpu = time.perf_counter(), time.thread_time()
        self.wall.append(wall - self._last[0])
        self.cpu.append(cpu - self._last[1])
        if cpu - self._last[1] > self.worst[0]:
            self.worst = (cpu - self._last[1], list(self._since_tick))
        self._since_tick.clear()
        self._last = (wall, cpu)
