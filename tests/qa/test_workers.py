"""`converge qa --workers N` (decision 0214): the devices in worker processes, the workload,
schedule, fault proxy, checks and report in the harness; one clock; no worker outlives it."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from qa import cli as qa_cli
from qa.checker import Observation, Source
from qa.faults import FaultSchedule, FaultSpec
from qa.fleet import merge_observations
from qa.workers import DEVICES_PER_WORKER, WorkerClient, WorkerError, default_workers
from qa.workload import plan, plan_digest

SEED = 7  # its first 40 operations hold a restart, an outage and a refused delete
FAULTS = "latency=10,jitter=20,drop=0.1,cut=0.1,stall=0.1,stall-seconds=1,partition=1@5:3"


def run_qa(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = qa_cli.main([*args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_devices_in_two_worker_processes_converge_with_the_same_plan_and_faults(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The same seed gives the same operations and the same fault schedule whether the
    devices run here or in workers; the invariants hold and every device was heard."""
    args = ["--devices", "3", "--operations", "40", "--seed", str(SEED), "--deadline", "40"]
    code, report = run_qa(capsys, *args, "--workers", "2", "--faults", FAULTS)
    assert report["violations"] == []
    assert code == 0 and report["ok"] is True
    assert report["workers"]["processes"] == 2
    expected = plan_digest(itertools.islice(plan(SEED, 3, restarts=True, outages=True), 40))
    assert report["plan_digest"] == expected
    assert (
        report["faults"]["digest"] == FaultSchedule(FaultSpec.parse(FAULTS), SEED, 3, 40).digest()
    )
    by_kind = report["operations"]["by_kind"]
    assert by_kind["restart"] >= 1 and by_kind["delete_active"] >= 1
    assert report["operations"]["outcomes"]["delete_active_run"] >= 1
    assert all(t is not None for t in report["convergence"]["per_device"].values())
    # What the workers observed came back: passes, rows, requests, watch answers (stages).
    assert report["engine"]["passes"] >= 3 and report["engine"]["inserted"] > 0
    assert report["engine"]["mirror_pulls"] > 0
    assert report["requests"]["requests"] > 0
    assert report["convergence_samples"] > 0 and report["convergence_missed"] == 0
    assert report["device_loop_lag"]["p50"] is not None
    # One clock: on Linux CLOCK_MONOTONIC is system-wide, so a worker's clock read between
    # two of ours lies between them (its offset is within the round trip).
    clock = report["workers"]
    assert clock["shared_monotonic_clock"] is (sys.platform == "linux")
    for offset, trip in zip(clock["offsets_ms"], clock["round_trips_ms"], strict=True):
        assert abs(offset) <= trip / 2 + 0.01


def test_merged_observations_keep_each_process_order_and_one_sequence() -> None:
    def obs(seq: int, at: float, device: int) -> Observation:
        return Observation(seq, at, device, "ses_a", True, Source.INSERTED)

    first = [obs(0, 1.0, 0), obs(1, 2.0, 0), obs(2, 2.0, 2)]
    second = [obs(0, 1.5, 1), obs(1, 2.0, 1)]
    merged = merge_observations([first, second])
    assert [o.seq for o in merged] == [0, 1, 2, 3, 4]
    assert [(o.at, o.device) for o in merged] == [(1.0, 0), (1.5, 1), (2.0, 0), (2.0, 2), (2.0, 1)]


def test_default_worker_count_follows_devices_and_cores() -> None:
    assert default_workers(5, cpus=2) == 0
    assert default_workers(DEVICES_PER_WORKER, cpus=2) == 0
    assert default_workers(20, cpus=2) == 2
    assert default_workers(50, cpus=2) == 2  # at most one per core
    assert default_workers(50, cpus=16) == 5


def test_a_failed_call_is_an_error_and_the_worker_serves_on() -> None:
    async def scenario() -> None:
        worker = await WorkerClient.start(0)
        try:
            with pytest.raises(WorkerError, match="unknown call"):
                await worker.call("no_such_call")
            assert (await worker.call("hello"))["pid"] == worker.process.pid
        finally:
            await worker.stop()
        assert worker.process.returncode == 0

    asyncio.run(scenario())


def _cmdline(process: psutil.Process) -> str:
    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def test_workers_end_when_the_harness_is_killed(tmp_path: Path) -> None:
    """A harness killed outright (no teardown) closes its workers' input: they end."""
    converge = Path(sys.executable).with_name("converge")
    proc = subprocess.Popen(
        [str(converge), "qa", "--devices", "2", "--workers", "2", "--duration", "60"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    children: list[psutil.Process] = []
    try:
        parent = psutil.Process(proc.pid)
        workers: list[psutil.Process] = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(workers) < 2:
            children = parent.children(recursive=True)
            workers = [c for c in children if "qa.worker" in _cmdline(c)]
            time.sleep(0.05)  # polling for the children to appear, with a deadline
        assert len(workers) == 2, "the harness never started its workers"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        _gone, alive = psutil.wait_procs(workers, timeout=20)
        assert not alive
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for child in children:  # never leave a server or worker behind
            with contextlib.suppress(psutil.NoSuchProcess):
                child.kill()
