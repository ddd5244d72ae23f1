"""`converge qa --workers N`: the devices spread over N worker processes (decision 0214).

With 50 devices in one process, 50 engines, their mirrors and their HTTP clients share one
event loop and one interpreter lock, and the slowest device's pass waits behind the others
(docs/performance.md, "Convergence at scale"). `WorkerFleet` has `qa.fleet.LocalFleet`'s
methods; device `i` lives in worker `i % N` (`python -m qa.worker`, JSON lines over its
stdin and stdout). The coordinator keeps the workload, the seeded schedule, the fault proxy,
the invariants and the report: only the devices live in the workers.

One clock. A change is timed where it happens (a create's request in the worker that sends
it, a delete's 204 likewise), a device's mirror following it in that device's worker, and
latency is the difference, so every process must read the same clock. `time.monotonic()`
is CLOCK_MONOTONIC on Linux, one system-wide clock (since boot) shared by all processes: the
times are compared as they are. Where that is not guaranteed, each worker's offset is
estimated at start from one round trip (its clock read between two of ours) and subtracted
from everything it reports; either way the report gives each worker's measured offset and
the round trip that bounds it (`workers.clock`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from qa.checker import Observation, RowKey
from qa.fleet import (
    Deleted,
    DeviceSpec,
    SendStatus,
    Sent,
    Totals,
    merge_observations,
    observation_from_json,
    rows_from_json,
)
from qa.worker import LINE_LIMIT
from sync.delete.outcome import DeleteStatus

#: Devices per worker process the default aims at (docs/qa.md, "How many workers").
DEVICES_PER_WORKER = 10
CLOCK_PROBES = 5
SHARED_CLOCK = sys.platform == "linux"  # CLOCK_MONOTONIC is system-wide


def default_workers(devices: int, cpus: int | None = None) -> int:
    """0 (the devices on the harness's own loop) up to `DEVICES_PER_WORKER` devices, else one
    process per `DEVICES_PER_WORKER` devices, at most one per core: more workers than cores
    converge no faster and send more requests (docs/qa.md, "How many workers")."""
    cores = cpus if cpus is not None else (os.cpu_count() or 1)
    if devices <= DEVICES_PER_WORKER:
        return 0
    return max(1, min(-(-devices // DEVICES_PER_WORKER), cores))


class WorkerError(RuntimeError):
    """A worker process failed a call or went away."""


class WorkerClient:
    """One worker process and its pipe."""

    def __init__(self, number: int, process: asyncio.subprocess.Process) -> None:
        self.number = number
        self.process = process
        self.offset = 0.0  # its clock minus ours (estimated), subtracted when not shared
        self.round_trip = 0.0
        self._next = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def start(cls, number: int) -> WorkerClient:
        env = dict(os.environ)
        level = logging.getLogger().getEffectiveLevel()
        env.setdefault("CONVERGE_QA_WORKER_LOG", logging.getLevelName(level))
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "qa.worker",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=LINE_LIMIT,
            env=env,
        )
        client = cls(number, process)
        await client.call("hello")  # started (its imports done)
        # Its clock read between two of ours; the shortest of a few round trips bounds it.
        best = (float("inf"), 0.0)
        for _ in range(CLOCK_PROBES):
            before = time.monotonic()
            hello = await client.call("hello")
            after = time.monotonic()
            best = min(best, (after - before, float(hello["now"]) - (before + after) / 2))
        client.round_trip, client.offset = best
        return client

    @property
    def shift(self) -> float:
        """What to subtract from this worker's times to put them on ours."""
        return 0.0 if SHARED_CLOCK else self.offset

    async def _read(self) -> None:
        assert self.process.stdout is not None
        try:
            while line := await self.process.stdout.readline():
                reply = json.loads(line)
                future = self._pending.pop(int(reply["id"]), None)
                if future is None or future.done():
                    continue
                if "error" in reply:
                    future.set_exception(WorkerError(f"worker {self.number}: {reply['error']}"))
                else:
                    future.set_result(reply.get("result"))
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(WorkerError(f"worker {self.number} went away"))
            self._pending.clear()

    async def call(self, name: str, **args: Any) -> Any:
        if self._reader.done():
            raise WorkerError(f"worker {self.number} went away")
        assert self.process.stdin is not None
        self._next += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[self._next] = future
        message = {"id": self._next, "call": name, "args": args}
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()
        return await future

    async def stop(self) -> None:
        """End of input: the worker closes what is still open and exits."""
        if self.process.stdin is not None and not self.process.stdin.is_closing():
            self.process.stdin.close()
            with contextlib.suppress(ConnectionError):
                await self.process.stdin.wait_closed()
        try:
            async with asyncio.timeout(30):
                await self.process.wait()
        except TimeoutError:
            self.process.kill()
            await self.process.wait()
        await self._reader


class WorkerFleet:
    """`LocalFleet`'s methods, over worker processes (device `i` in worker `i % N`)."""

    def __init__(self, workers: int) -> None:
        self.count = workers
        self.workers: list[WorkerClient] = []
        self.indices: list[int] = []

    def _of(self, index: int) -> WorkerClient:
        return self.workers[index % len(self.workers)]

    async def open(self, specs: Sequence[DeviceSpec]) -> None:
        if not self.workers:
            self.workers = list(
                await asyncio.gather(*(WorkerClient.start(n) for n in range(self.count)))
            )
        groups: dict[int, list[dict[str, Any]]] = {}
        for spec in specs:
            groups.setdefault(spec.index % self.count, []).append(dict(vars(spec)))
        await asyncio.gather(
            *(self.workers[n].call("open", specs=group) for n, group in groups.items())
        )
        self.indices.extend(spec.index for spec in specs)  # all open

    async def send(self, index: int, session_id: str | None, text: str) -> Sent:
        worker = self._of(index)
        r = await worker.call("send", index=index, session_id=session_id, text=text)
        return Sent(
            SendStatus(r["status"]), r["session_id"], r["sent_at"] - worker.shift, r["error"]
        )

    async def delete(self, index: int, session_id: str, *, stop_run: bool = False) -> Deleted:
        worker = self._of(index)
        r = await worker.call("delete", index=index, session_id=session_id, stop_run=stop_run)
        return Deleted(
            DeleteStatus(r["status"]),
            bool(r["removed"]),
            bool(r["row_before"]),
            bool(r["row_after"]),
            r["sent_at"] - worker.shift,
            r["done_at"] - worker.shift,
        )

    async def reconcile(self, index: int) -> None:
        await self._of(index).call("reconcile", index=index)

    async def trigger(self, index: int) -> None:
        await self._of(index).call("trigger", index=index)

    async def reopen(self, index: int) -> None:
        await self._of(index).call("reopen", index=index)

    async def sample(self, watched: set[str]) -> dict[int, list[RowKey]]:
        ids = sorted(watched)
        parts = await asyncio.gather(*(w.call("sample", watched=ids) for w in self.workers))
        return {int(i): rows_from_json(rows) for part in parts for i, rows in part.items()}

    async def stop_timers(self) -> None:
        await asyncio.gather(*(w.call("stop_timers") for w in self.workers))

    async def observations(self) -> list[Observation]:
        parts = await asyncio.gather(*(w.call("observations") for w in self.workers))
        return merge_observations(
            [observation_from_json(item, w.shift) for item in part]
            for w, part in zip(self.workers, parts, strict=True)
        )

    async def close(self) -> Totals:
        answers = await asyncio.gather(
            *(w.call("close") for w in self.workers), return_exceptions=True
        )
        for worker in self.workers:
            await worker.stop()
        totals = Totals()
        for worker, answer in zip(self.workers, answers, strict=True):
            if isinstance(answer, BaseException):
                raise answer
            totals.add(Totals.from_json(answer, worker.shift))
        return totals

    def clock(self) -> dict[str, Any]:
        """What the report says about the one clock (see the module docstring)."""
        return {
            "shared_monotonic_clock": SHARED_CLOCK,
            "offsets_ms": [round(w.offset * 1000, 3) for w in self.workers],
            "round_trips_ms": [round(w.round_trip * 1000, 3) for w in self.workers],
        }

    def __len__(self) -> int:
        return len(self.indices)
