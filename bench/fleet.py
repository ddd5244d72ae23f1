"""`python -m bench fleet --database postgresql+psycopg://…`: how fast a fleet acts as one.

Two `converge-server` processes on one empty PostgreSQL database (CONTRACT §9.4). Measured
from a client, over HTTP, for `--samples` rounds each:

- **event across processes**: a stream is open on process B for a run waiting for approval
  on process A; the approval is decided through A; the time from sending the decision to the
  `approval.resolved` frame arriving on B's stream (A's commit, the `NOTIFY`, B's feed
  re-reading, the frame). The contract's bound is 100 ms.
- **cancel across processes**: a `/wait 600` run executes on A; the cancel is posted to B;
  the time until the run's stream (on A) delivers `run.cancelled`.
- **failover**: one `/wait 600` run executes on A; A is killed (SIGKILL); the time until B
  reports the run `failed`. The contract's bound is 30 s.

Without `--database` it prints that it needs one and does nothing (`make bench` has no
PostgreSQL of its own).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from bench import report
from bench.child_server import start_server

SSE = {"Accept": "text/event-stream"}


def _parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench fleet")
    p.add_argument("--database", help="an empty PostgreSQL database URL")
    p.add_argument("--samples", type=int, default=30)
    p.add_argument("--name", default="fleet", help="results file name")
    return p.parse_args(argv)


class Process:
    """One `converge-server` child."""

    def __init__(self, database: str, workdir: Path, index: int) -> None:
        self.proc, self.log, self.url = start_server(database, workdir, f"server{index}.log")
        self.client = httpx.Client(
            base_url=self.url, headers={"Authorization": "Bearer dev-alice"}, timeout=60
        )

    def stop(self, sig: int = signal.SIGTERM) -> None:
        self.client.close()
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self.log.close()


def _message(text: str) -> dict[str, Any]:
    return {"input": {"role": "user", "content": [{"type": "text", "text": text}]}}


def _wait_status(client: httpx.Client, run_id: str, status: str) -> None:
    while client.get(f"/v1/runs/{run_id}").json()["status"] != status:
        time.sleep(0.005)


def _stream_until(
    client: httpx.Client, run_id: str, event: str, opened: threading.Event, seen: list[float]
) -> None:
    with client.stream("GET", f"/v1/runs/{run_id}/events", headers=SSE) as stream:
        opened.set()
        for line in stream.iter_lines():
            if line == f"event: {event}":
                seen.append(time.perf_counter())
                return


def _across(a: Process, b: Process, samples: int) -> dict[str, Any]:
    event_s: list[float] = []
    cancel_s: list[float] = []
    sid = a.client.post("/v1/sessions", json={}).json()["id"]
    for _ in range(samples):
        run = a.client.post(f"/v1/sessions/{sid}/runs", json=_message("/approve x")).json()
        _wait_status(a.client, run["id"], "waiting_for_approval")
        events = b.client.get(f"/v1/runs/{run['id']}/events").json()["items"]
        approval = next(e for e in events if e["type"] == "approval.requested")
        opened, seen = threading.Event(), list[float]()
        args = (b.client, run["id"], "approval.resolved", opened, seen)
        reader = threading.Thread(target=_stream_until, args=args)
        reader.start()
        opened.wait()
        time.sleep(0.05)  # the stream's replay is done; it now waits on the bus
        sent = time.perf_counter()
        a.client.post(
            f"/v1/approvals/{approval['data']['approval_id']}/decision",
            json={"decision": "approve"},
        )
        reader.join()
        event_s.append(seen[0] - sent)
        _wait_status(a.client, run["id"], "completed")

        run = a.client.post(f"/v1/sessions/{sid}/runs", json=_message("/wait 600")).json()
        _wait_status(a.client, run["id"], "running")
        opened, seen = threading.Event(), []
        reader = threading.Thread(
            target=_stream_until, args=(a.client, run["id"], "run.cancelled", opened, seen)
        )
        reader.start()
        opened.wait()
        time.sleep(0.05)
        sent = time.perf_counter()
        b.client.post(f"/v1/runs/{run['id']}/cancel")
        reader.join()
        cancel_s.append(seen[0] - sent)
    return {
        "event_across": report.summarize_ms(event_s),
        "event_across_max_ms": round(max(event_s) * 1000, 3),
        "cancel_across": report.summarize_ms(cancel_s),
        "cancel_across_max_ms": round(max(cancel_s) * 1000, 3),
    }


def _failover(a: Process, b: Process) -> float:
    sid = a.client.post("/v1/sessions", json={}).json()["id"]
    run = a.client.post(f"/v1/sessions/{sid}/runs", json=_message("/wait 600")).json()
    _wait_status(a.client, run["id"], "running")
    killed = time.perf_counter()
    a.stop(signal.SIGKILL)
    _wait_status(b.client, run["id"], "failed")
    return time.perf_counter() - killed


def main(argv: list[str]) -> int:
    """Run the fleet benchmark (PostgreSQL only); print and save its figures."""
    args = _parse(argv)
    if not args.database or not args.database.startswith("postgresql"):
        print("bench fleet: needs --database postgresql+psycopg://… (an empty database); skipped")
        return 0
    workdir = Path(tempfile.mkdtemp(prefix="converge-fleet-"))
    load_before = os.getloadavg()[0]
    a, b = Process(args.database, workdir, 0), Process(args.database, workdir, 1)
    try:
        fig: dict[str, Any] = _across(a, b, args.samples)
        fig["failover_s"] = round(_failover(a, b), 3)
        fig["load_average_1min"] = {"start": load_before, "end": os.getloadavg()[0]}
        report.print_table(
            "two processes on one PostgreSQL",
            ["measure", "median ms", "p95 ms", "max ms", "n"],
            [
                [
                    "decision on A → frame on B's stream",
                    fig["event_across"]["median_ms"],
                    fig["event_across"]["p95_ms"],
                    fig["event_across_max_ms"],
                    fig["event_across"]["n"],
                ],
                [
                    "cancel on B → run.cancelled on A's stream",
                    fig["cancel_across"]["median_ms"],
                    fig["cancel_across"]["p95_ms"],
                    fig["cancel_across_max_ms"],
                    fig["cancel_across"]["n"],
                ],
            ],
        )
        print(f"\nkill -9 of A → its run failed by B after {fig['failover_s']} s")
        report.save(args.name, fig)
    finally:
        a.stop()
        b.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0
