"""The deterministic simulation of the engine (`qa.simulation`, decision 0098): the real
engine holds over generated schedules, the schedules meet every fault and step they can
make, a schedule replays the same, and the simulation finds a defect put back on purpose.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

import sync.reconcile.walk
from qa.simulation import Failure, run_schedule
from qa.simulation.explore import SCRATCH, shrink, sweep

#: The default budget: seeds per `make test` run, and steps per schedule.
SCHEDULES = 500
STEPS = 8

FAULTS = ("cut before", "cut after", "cut body", "delay", "429", "503", "kill", "kill in mirror")
STEPS_MET = ("server", "pass", "delete", "send", "content", "watch", "kill")
CHANGES = ("create", "turn", "delete", "start_run", "finish_run")


def test_the_engine_holds_over_generated_schedules() -> None:
    result = sweep(range(SCHEDULES), STEPS, workers=2)
    assert result.failure is None, str(result.failure)
    assert result.schedules == SCHEDULES
    met = result.counts
    missing = [f for f in FAULTS if not met[f]]
    missing += [f"step {s}" for s in STEPS_MET if not met[f"step {s}"]]
    missing += [f"server {c}" for c in CHANGES if not met[f"server {c}"]]
    assert missing == [], f"the schedules never met {missing}"


def test_a_schedule_replays_request_for_request() -> None:
    first: list[str] = []
    second: list[str] = []
    run_schedule(16, STEPS, folder=SCRATCH, trace=first.append)
    run_schedule(16, STEPS, folder=SCRATCH, trace=second.append)
    assert first == second and len(first) > 10


@pytest.fixture
def old_walk(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A walk without decision 0097's rule: a resume that finds the index changed trusts
    the rows it walked before the change."""
    resumed = sync.reconcile.walk.IndexWalk._reread_top

    async def trusting(walk: sync.reconcile.walk.IndexWalk, *args: object) -> None:
        walk.result.epoch = walk.result.generation
        await resumed(walk, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(sync.reconcile.walk.IndexWalk, "_reread_top", trusting)
    yield


@pytest.mark.usefixtures("old_walk")
def test_the_simulation_finds_a_walk_resumed_across_a_delete() -> None:
    result = sweep(range(SCHEDULES), STEPS, workers=0)
    failure = result.failure
    assert failure is not None, "the old walk passed the default budget"
    assert len(failure.steps) < STEPS  # shrunk
    assert "python -m qa.simulation --seed" in failure.replay
    with pytest.raises(Failure):  # the shrunk schedule replays its failure
        run_schedule(failure.seed, failure.steps, folder=SCRATCH)
    again = shrink(failure.seed, failure.steps)
    assert again is not None and again.steps == failure.steps


def test_a_sweep_in_this_process_leaves_logging_as_it_found_it() -> None:
    sweep(range(1), 1, workers=0)
    assert logging.getLogger("sync.engine").isEnabledFor(logging.WARNING)
    assert logging.root.manager.disable < logging.WARNING
