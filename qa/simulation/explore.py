"""Many schedules: a sweep of seeds over worker processes, and the shrinking of a failure.

A sweep runs seeds in order and stops at the first failure, which it shrinks: steps are
taken out one at a time, each removal kept while the schedule still fails, until no single
step can go (each step draws from its own random stream, so the others stay what they
were). What is left is the shortest schedule found that fails, with its replay command.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import multiprocessing
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from qa.simulation.schedule import Failure, run_schedule

#: Where the mirrors of a sweep live: memory when the machine has it (no disk in the loop).
SCRATCH = Path("/dev/shm") if Path("/dev/shm").is_dir() else None


@dataclass
class Sweep:
    """What a sweep ran and met."""

    schedules: int = 0
    requests: int = 0
    seconds: float = 0.0
    counts: collections.Counter[str] = field(default_factory=collections.Counter)
    failure: Failure | None = None

    @property
    def per_second(self) -> float:
        return self.schedules / self.seconds if self.seconds else 0.0


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """The engine's warnings are the schedule's faults: not logged while schedules run (and
    logged again after, in a process that goes on, such as a test run's)."""
    before = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(before)


def _batch(seeds: Sequence[int], steps: int) -> tuple[Sweep, tuple[int, str] | None]:
    """Run `seeds` in this process; stop at the first failure (its seed and words)."""
    done = Sweep()
    with _quiet():
        for seed in seeds:
            try:
                outcome = run_schedule(seed, steps, folder=SCRATCH)
            except Failure as failure:
                return done, (seed, failure.what)
            done.schedules += 1
            done.requests += outcome.requests
            done.counts.update(outcome.counts)
    return done, None


def sweep(seeds: Iterable[int], steps: int, *, workers: int = 1, batch: int = 50) -> Sweep:
    """Run a schedule of `steps` steps for each seed; `failure` is the first one met,
    shrunk. Workers are fresh processes (spawned: the caller may hold Qt or threads); 0
    runs the seeds in this process, stopping at the first failure."""
    started = time.perf_counter()
    total = Sweep()
    chunks = _chunks(list(seeds), batch)
    found: list[tuple[int, str]] = []
    if workers == 0:  # in this process (a test that changed the engine in it)
        results = [_batch(chunk, steps) for chunk in chunks]
        for done, failed in results:
            _add(total, done, failed, found)
            if failed is not None:
                break
    else:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            for done, failed in pool.map(_batch, chunks, [steps] * len(chunks)):
                _add(total, done, failed, found)
    total.seconds = time.perf_counter() - started
    if found:
        seed, what = min(found)
        total.failure = shrink(seed, range(steps)) or Failure(seed, range(steps), what)
    return total


def _add(
    total: Sweep, done: Sweep, failed: tuple[int, str] | None, found: list[tuple[int, str]]
) -> None:
    total.schedules += done.schedules
    total.requests += done.requests
    total.counts.update(done.counts)
    if failed is not None:
        found.append(failed)


def shrink(seed: int, steps: Sequence[int]) -> Failure | None:
    """The shortest schedule found, by taking steps out, that still fails; None when
    `steps` does not fail here (another process's string hashing can order a set
    differently: replay with its `PYTHONHASHSEED`)."""
    kept = list(steps)
    with _quiet():
        failure = _fails(seed, kept)
        if failure is None:
            return None
        index = len(kept) - 1
        while index >= 0:
            fewer = kept[:index] + kept[index + 1 :]
            smaller = _fails(seed, fewer)
            if smaller is not None:
                kept, failure = fewer, smaller
            index -= 1
    return failure


def _fails(seed: int, steps: Sequence[int]) -> Failure | None:
    try:
        run_schedule(seed, steps, folder=SCRATCH)
    except Failure as failure:
        return failure
    return None


def _chunks(seeds: list[int], size: int) -> list[list[int]]:
    return [seeds[i : i + size] for i in range(0, len(seeds), size)]
