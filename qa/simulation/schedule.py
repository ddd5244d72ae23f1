"""One schedule of the simulation: devices, the steps a seed chooses, and the invariants.

Two devices, each a real `SyncEngine` on its own SQLite mirror, share one `ModelServer`.
A seed chooses the server's starting sessions and page size, then each step: the server
changes, a device runs a pass, a content phase, a delete (its own conversation, another
device's, one already gone, one with an active run), watches the index for a while with its
timer running, or is killed and started again; and for every request, through `Faults`,
whether the server changes first and what happens to the request. Every step is bounded in
virtual time. Checked after every step:

- no row leaves a mirror without the server's word for it (a 404 or 204 the device
  received whole);
- a mirror whose stored ETag is the server's current one equals the server's index: no
  "up to date" claim for an index that differs.

Then the faults stop, each device runs until a pass concludes and its content phase has
nothing left, and:

- each mirror equals the server's index: ids, order and every field, titles included;
- nothing of a deleted conversation is left in rows, transcripts or the search index;
- a further pass is one 304, and settling took a bounded number of requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import random
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qa.simulation.clock import Stuck, VirtualClock, VirtualLoop, engine_on
from qa.simulation.server import Faults, Killed, ModelServer, SimTransport
from sync.engine import SyncEngine
from sync.errors import SyncError
from sync.mirror.state import ETAG_KEY
from sync.profile.profile import Profile

DEVICES = 2
#: Virtual seconds one step may take before it counts as a loop without progress.
STEP_SECONDS = 900.0
#: Requests a device may make to settle after the faults stop, beyond its index's pages.
SETTLE_REQUESTS = 400


class Failure(AssertionError):
    """An invariant broken by a schedule; `replay` is the command that runs it again."""

    def __init__(self, seed: int, steps: Sequence[int], what: str) -> None:
        self.seed, self.steps, self.what = seed, tuple(steps), what
        super().__init__(f"{what}\n  replay: {self.replay}")

    @property
    def replay(self) -> str:
        if self.steps == tuple(range(len(self.steps))):
            chosen = f"--steps {len(self.steps)}"
        else:
            chosen = "--only " + ",".join(map(str, self.steps))
        return f"python -m qa.simulation --seed {self.seed} {chosen}"


@dataclass
class Outcome:
    """What a schedule that held did and met (the coverage a long run adds up)."""

    requests: int = 0
    counts: dict[str, int] = field(default_factory=dict)


class _Device:
    def __init__(self, name: str, folder: Path, server: ModelServer, faults: Faults) -> None:
        self.name, self.folder, self.server, self.faults = name, folder, server, faults
        self.engine: SyncEngine | None = None
        self.transport = SimTransport(server, faults, set())
        self.held: set[str] = set()  # ids its mirror held at some point
        self.proofs: set[str] = set()  # ids the server told it, whole, are gone
        self.requests = 0

    async def start(self, page_limit: int) -> None:
        self.transport = SimTransport(self.server, self.faults, self.proofs)
        profile = Profile.load(
            self.folder, server="http://127.0.0.1:9", token="sim-token", environ={}
        )
        self.engine = await SyncEngine.open(
            profile, transport=self.transport, page_limit=page_limit, timer_interval=30.0
        )

    async def stop(self) -> None:
        engine, self.engine = self.engine, None
        if engine is not None:
            self.requests += self.transport.requests
            self.transport.dead = True  # a kill: what it had not written is lost
            with contextlib.suppress(Exception, Killed):
                await engine.close()

    @property
    def live(self) -> SyncEngine:
        assert self.engine is not None
        return self.engine


#: The device whose work runs (the tasks its engine starts inherit it): a mirror call may
#: kill it there, between two transactions.
_running: contextvars.ContextVar[_Device | None] = contextvars.ContextVar("device", default=None)


async def _on(device: _Device, work: Awaitable[Any]) -> Any:
    """`work` of a device, bounded in virtual time; `Killed` when the device dies first
    (in a real kill, whoever waited dies with the process)."""
    async with asyncio.timeout(STEP_SECONDS):
        token = _running.set(device)
        try:
            task = asyncio.ensure_future(work)
        finally:
            _running.reset(token)
        death = asyncio.ensure_future(device.transport.killed.wait())
        try:
            await asyncio.wait({task, death}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            death.cancel()
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        if task.cancelled():
            raise Killed
        return task.result()


class _Run:
    def __init__(self, seed: int, steps: Sequence[int], folder: Path, clock: VirtualClock) -> None:
        self.seed, self.steps = seed, tuple(steps)
        self.rng = random.Random(seed)
        self.clock = clock
        self.server = ModelServer(clock)
        self.faults = Faults(random.Random(seed ^ 0x5EED), self.server)
        self.page = self.rng.choice((1, 2, 3, 5, 200))
        self.devices = [
            _Device(f"d{i}", folder / f"d{i}", self.server, self.faults) for i in range(DEVICES)
        ]
        self.crashes: list[BaseException] = []

    def fail(self, what: str) -> Failure:
        return Failure(self.seed, self.steps, what)

    def _kill_in_mirror_call(self) -> None:
        device = _running.get()
        if device is None or device.transport.dead:
            return
        if self.faults.rng.random() < self.faults.kill_rate:
            self.faults.count("kill in mirror")
            device.transport.dead = True
            device.transport.killed.set()
            raise Killed

    async def run(self) -> Outcome:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(self._background_crash)
        assert isinstance(loop, VirtualLoop)
        loop.inline.before = self._kill_in_mirror_call
        for _ in range(self.rng.randint(0, 12)):
            self.server.create()
        for device in self.devices:
            await device.start(self.page)
        rate = self.rng.choice((0.0, 0.05, 0.2))
        self.faults.rate, self.faults.change_rate = rate, self.rng.choice((0.0, 0.1, 0.3))
        self.faults.kill_rate = self.rng.choice((0.0, 0.01))
        for number in self.steps:
            await self._step(number)
        return await self._settle()

    def _background_crash(self, _loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if isinstance(exc, BaseExceptionGroup):
            exc = exc.split((Killed, asyncio.CancelledError))[1]
        if exc is None and "exception" in context:
            return  # the device was killed: its tasks die with it
        if not isinstance(exc, Killed | asyncio.CancelledError):
            where = context.get("task") or context.get("future") or context.get("message")
            self.crashes.append(RuntimeError(f"{exc!r} in {where!r}"))
            self.crashes[-1].__cause__ = exc

    async def _step(self, number: int) -> None:
        # Each step draws from its own stream, so a schedule without some of its steps
        # still has the others (`qa.simulation.explore.shrink`).
        rng = self.rng = random.Random(self.seed * 1_000_003 + number)
        device = rng.choice(self.devices)
        kind = rng.choice(
            ("server", "server", "pass", "pass", "delete", "send", "content", "watch", "kill")
        )
        self.faults.count(f"step {kind}")
        try:
            if kind == "server":
                for _ in range(rng.randint(1, 3)):
                    self.faults.change_server()
            elif kind == "pass":
                await _on(device, device.live.reconcile())
            elif kind == "delete":
                await _on(device, device.live.delete(self._victim(device)))
            elif kind == "send":  # the device's own new conversation, or a message in one
                rows = [row.id for row in device.live.mirror.rows()]
                into = rng.choice(rows) if rows and rng.random() < 0.3 else None
                with contextlib.suppress(SyncError):  # the faults' errors, told to the user
                    await _on(device, device.live.send_message(into, "note"))
            elif kind == "content":
                await _on(device, device.live.content.run())
            elif kind == "watch":
                await _on(device, self._watch(device, rng.uniform(1.0, 40.0)))
            else:
                await device.stop()
        except (Killed, BaseExceptionGroup) as exc:  # the device was killed mid-step
            if isinstance(exc, BaseExceptionGroup) and exc.split(Killed)[1] is not None:
                raise
        except TimeoutError:
            raise self.fail(f"step {number} ({kind} on {device.name}) made no progress") from None
        for each in self.devices:
            if each.engine is None or each.transport.dead:
                await each.stop()
                await each.start(self.page)
            self._check_step(each, number)

    def _victim(self, device: _Device) -> str:
        """Its own row, another device's, one already deleted, or one never listed."""
        rows = sorted(row.id for row in device.live.mirror.rows())
        known = sorted(set(self.server.words))
        choices = rows or known or ["ses_none"]
        return self.rng.choice(choices if self.rng.random() < 0.7 else known or choices)

    async def _watch(self, device: _Device, seconds: float) -> None:
        """The window's triggers: the watch and the 30 s timer, while the server changes."""
        engine = device.live
        engine.start_watch(wait=20)
        engine.start_timer()
        try:
            left = seconds
            while left > 0:
                pause = min(left, self.rng.uniform(0.5, 20.0))
                await asyncio.sleep(pause)
                left -= pause
                if self.rng.random() < 0.5:
                    self.faults.change_server()
        finally:
            engine.stop_timer()
            await engine.stop_watch()

    def _check_step(self, device: _Device, number: int) -> None:
        mirror = device.live.mirror
        rows = [row.id for row in mirror.rows()]
        gone = device.held - set(rows) - device.proofs
        if gone:
            raise self.fail(
                f"after step {number}, {device.name} dropped {sorted(gone)} without a 404 or 204"
            )
        device.held.update(rows)
        if mirror.get_state(ETAG_KEY) == self.server.etag:
            truth = [view.id for view in self.server.ordered()]
            if rows != truth:
                raise self.fail(
                    f"after step {number}, {device.name} claims the index is up to date "
                    f"({self.server.etag}) but holds {rows}, the server {truth}"
                )

    async def _settle(self) -> Outcome:
        self.faults.rate = self.faults.change_rate = self.faults.kill_rate = 0.0
        for device in self.devices:
            await device.stop()
            await device.start(self.page)
            before = device.transport.requests
            await self._settle_one(device)
            made = device.transport.requests - before
            budget = SETTLE_REQUESTS + 3 * len(self.server.sessions)
            if made > budget:
                raise self.fail(f"{device.name} took {made} requests to settle (> {budget})")
            self._check_converged(device)
        if self.crashes:
            raise self.fail(f"a background task crashed: {self.crashes[0]!r}")
        requests = sum(d.requests + d.transport.requests for d in self.devices)
        outcome = Outcome(requests, dict(self.faults.counts))
        for device in self.devices:
            await device.stop()
        return outcome

    async def _settle_one(self, device: _Device) -> None:
        engine = device.live
        for _ in range(4):
            report = await _on(device, engine.reconcile())
            if report.ok and not report.walk_again:
                break
        else:
            raise self.fail(f"{device.name} never concluded a pass once quiet: {report!r}")
        for _ in range(4):
            await _on(device, engine.content.wait_idle())
            content = await _on(device, engine.content.run())
            if not content.fetched and content.error is None:
                break
        again = await _on(device, engine.reconcile())
        if not (again.ok and again.not_modified):
            raise self.fail(f"{device.name}'s pass after settling was not a 304: {again!r}")

    def _check_converged(self, device: _Device) -> None:
        mirror = device.live.mirror
        rows = mirror.rows()
        truth = self.server.ordered()
        if rows != truth:
            raise self.fail(
                f"{device.name} did not converge: it holds {[r.id for r in rows]}, "
                f"the server {[v.id for v in truth]} (or a field differs)"
            )
        for sid in sorted(self.server.sessions):
            held = [e.sequence for e in mirror.transcript(sid)]
            want = [e["sequence"] for e in self.server.events[sid]]
            if held != want:
                raise self.fail(f"{device.name}'s transcript of {sid} is {held}, not {want}")
        for sid in sorted(self.server.tombstones):
            word = self.server.words[sid]
            if mirror.transcript(sid) or any(h.id == sid for h in mirror.search(word)):
                raise self.fail(f"{device.name} still holds the deleted {sid}'s messages")


def run_schedule(
    seed: int,
    steps: int | Sequence[int],
    *,
    folder: Path | None = None,
    trace: Callable[[str], None] | None = None,
) -> Outcome:
    """Run one schedule (`steps`: how many, or which of the seed's) on a fresh virtual
    loop; raises `Failure`. `trace` is told of every request and its fate."""
    if isinstance(steps, int):
        steps = range(steps)
    clock = VirtualClock()
    loop = VirtualLoop(clock)
    root = Path(tempfile.mkdtemp(prefix="converge-sim-", dir=folder))
    state = random.getstate()
    random.seed(seed)  # the retry and watch jitter
    run = _Run(seed, steps, root, clock)
    run.faults.trace = trace
    try:
        with engine_on(clock):
            return loop.run_until_complete(run.run())
    except Stuck as exc:
        raise run.fail(f"the devices stopped: {exc}") from None
    finally:
        with contextlib.suppress(Exception, Killed):
            for device in run.devices:
                loop.run_until_complete(device.stop())
        loop.close()
        random.setstate(state)
        shutil.rmtree(root, ignore_errors=True)
