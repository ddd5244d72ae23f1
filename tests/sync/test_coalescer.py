"""Triggers coalesce: one pass at a time, triggers during a pass make exactly one more."""

from __future__ import annotations

import asyncio

from sync.events import TriggerReason
from sync.reconcile.reconciler import Coalescer, ReconcileReport


class GatedPasses:
    """A fake pass that waits on a gate, so a test controls when each pass ends."""

    def __init__(self) -> None:
        self.started: list[TriggerReason] = []
        self.gates: list[asyncio.Event] = []
        self.running = 0
        self.max_running = 0

    async def __call__(self, reason: TriggerReason) -> ReconcileReport:
        self.started.append(reason)
        gate = asyncio.Event()
        self.gates.append(gate)
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            await gate.wait()
        finally:
            self.running -= 1
        return ReconcileReport(reason=reason, complete=True)

    async def wait_started(self, n: int) -> None:
        async with asyncio.timeout(5):
            while len(self.started) < n:
                await asyncio.sleep(0)


def test_triggers_during_a_pass_cause_exactly_one_more_pass() -> None:
    async def go() -> None:
        passes = GatedPasses()
        coalescer = Coalescer(passes)
        first = coalescer.request(TriggerReason.CONNECT)
        await passes.wait_started(1)
        followers = [coalescer.request(r) for r in [TriggerReason.TIMER] * 5]
        followers.append(coalescer.request(TriggerReason.FOREGROUND))
        assert len({id(f) for f in followers}) == 1  # they all share the next pass
        passes.gates[0].set()
        assert (await first).reason is TriggerReason.CONNECT
        await passes.wait_started(2)
        passes.gates[1].set()
        await followers[0]
        assert len(passes.started) == 2
        assert passes.max_running == 1
        # quiet now: a new trigger starts a fresh pass
        again = coalescer.request(TriggerReason.MANUAL)
        await passes.wait_started(3)
        passes.gates[2].set()
        await again
        assert len(passes.started) == 3
        assert coalescer.passes_started == 3

    asyncio.run(go())


def test_a_single_trigger_runs_a_single_pass() -> None:
    async def go() -> None:
        passes = GatedPasses()
        coalescer = Coalescer(passes)
        fut = coalescer.request(TriggerReason.MANUAL)
        await passes.wait_started(1)
        passes.gates[0].set()
        await fut
        for _ in range(10):
            await asyncio.sleep(0)
        assert len(passes.started) == 1
        assert not coalescer.busy

    asyncio.run(go())


def test_closing_cancels_the_running_pass_and_the_queued_one() -> None:
    async def go() -> None:
        passes = GatedPasses()
        coalescer = Coalescer(passes)
        first = coalescer.request(TriggerReason.MANUAL)
        await passes.wait_started(1)
        queued = coalescer.request(TriggerReason.TIMER)
        await coalescer.aclose()
        assert first.cancelled() and queued.cancelled()
        assert not coalescer.busy

    asyncio.run(go())


def test_joining_the_running_pass_adds_no_pass_and_starts_one_when_idle() -> None:
    """The index watch's first ETag: join the connect pass if it runs, else start one."""

    async def go() -> None:
        passes = GatedPasses()
        coalescer = Coalescer(passes)
        connect = coalescer.request(TriggerReason.CONNECT)
        await passes.wait_started(1)
        joined = coalescer.running_or_request(TriggerReason.WATCH)
        assert joined is connect  # the running pass, not a follow-up
        passes.gates[0].set()
        assert (await joined).reason is TriggerReason.CONNECT
        for _ in range(10):
            await asyncio.sleep(0)
        assert len(passes.started) == 1
        fresh = coalescer.running_or_request(TriggerReason.WATCH)
        await passes.wait_started(2)
        passes.gates[1].set()
        assert (await fresh).reason is TriggerReason.WATCH

    asyncio.run(go())
