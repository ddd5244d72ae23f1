"""`python -m bench fanout`: how long one delete, or one create, takes to reach N watching
devices, without the rest of `converge qa`'s workload.

`bench scale` measures convergence inside the harness's seeded workload, where runs stream
and every step of a run wakes every device: a delete's figure there is mostly the herd's
queue of passes for other changes, and a run of 120 operations has only about nine deletes.
This benchmark isolates the two paths a change takes to a watching device (a create: a row
on the watch's first page; a delete: a row missing from it, point-read, pruned on the 404):

1. a `converge-server` child (`qa.server.ServerProcess`: SQLite in a temp folder, or
   `--database URL`, `--postgres` for a throwaway cluster) with `--initial` conversations
   made through its control plane;
2. N devices as `converge qa` runs them (`qa.workers.WorkerFleet`, `--workers` processes;
   page size 200, the index watch open), given a few seconds to settle;
3. `--changes` changes, one every `--gap` seconds, in turn: device 0 deletes a
   conversation (timed from its 204), the control plane creates one (timed from just
   before the request).

It reports, per kind, `qa.latency`'s figures (the time until the slowest other device's
mirror followed: p50/p95/p99/max) with the stage split at that device's watch answer, the
server's, the worker processes' and (`--postgres`) the cluster's CPU per change, and the
load before and after. The server runs this checkout's code (`PYTHONPATH`, as `bench
scale` does). Writes
`bench/results/fanout[-NAME].json`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import report
from bench.scale import _databases
from qa.fleet import DeviceSpec
from qa.latency import Change, convergence_latencies, stages
from qa.server import ControlPlane, ServerProcess
from qa.workers import WorkerFleet
from sync.api.client import PAGE_LIMIT

TOKEN = "dev-alice"


def _parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench fanout")
    p.add_argument("--devices", type=int, nargs="+", default=[5, 50])
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--changes", type=int, default=30, help="deletes and creates, in turn")
    p.add_argument("--gap", type=float, default=1.5, help="seconds between two changes")
    p.add_argument("--initial", type=int, default=30)
    p.add_argument("--database", help="an empty database URL (default: SQLite)")
    p.add_argument("--postgres", action="store_true", help="a throwaway PostgreSQL 15 cluster")
    p.add_argument("--name", default="", help="results file suffix")
    p.add_argument("--label", default="", help="what was measured (recorded as is)")
    return p.parse_args(argv)


def _load() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def _cpu(pid: int) -> float:
    """A process's CPU seconds (user + system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _cluster_cpu(postmaster: int | None) -> float:
    """The throwaway cluster's CPU seconds: its postmaster's and its live backends' (they
    serve the server's pooled connections for the whole run)."""
    if postmaster is None:
        return 0.0
    children = Path(f"/proc/{postmaster}/task/{postmaster}/children").read_text().split()
    total = _cpu(postmaster)
    for child in children:
        with contextlib.suppress(FileNotFoundError):  # a backend ended between the reads
            total += _cpu(int(child))
    return total


async def _run(
    devices: int, args: argparse.Namespace, database: str | None, postmaster: int | None
) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="bench-fanout-"))
    server = ServerProcess(work, database_url=database)
    url = await server.start()
    control = ControlPlane(url)
    fleet = WorkerFleet(args.workers)
    try:
        live = [await control.create_history(TOKEN, f"seed {i}") for i in range(args.initial)]
        specs = [
            DeviceSpec(i, str(work / f"d{i:03d}"), url, TOKEN, 30.0, PAGE_LIMIT, True)
            for i in range(devices)
        ]
        await fleet.open(specs)
        await asyncio.sleep(3.0)  # the first passes and transcripts
        pids = [w.process.pid for w in fleet.workers]
        assert server._proc is not None
        server_pid = server._proc.pid
        cpu: dict[str, list[float]] = {"delete": [0.0, 0.0, 0, 0.0], "create": [0.0, 0.0, 0, 0.0]}
        changes: list[Change] = []
        before = _load()
        for k in range(args.changes):
            s0, w0, d0 = _cpu(server_pid), sum(_cpu(p) for p in pids), _cluster_cpu(postmaster)
            if k % 2 == 0 and live:
                kind, sid = "delete", live.pop(0)
                done = await fleet.delete(0, sid)
                changes.append(Change(sid, 0, done.done_at, False, sent_at=done.sent_at))
            else:
                kind, at = "create", time.monotonic()
                sid = await control.create_history(TOKEN, f"new {k}")
                live.append(sid)
                changes.append(Change(sid, -1, at, True))
            await asyncio.sleep(args.gap)
            cpu[kind][0] += _cpu(server_pid) - s0
            cpu[kind][1] += sum(_cpu(p) for p in pids) - w0
            cpu[kind][2] += 1
            cpu[kind][3] += _cluster_cpu(postmaster) - d0
        after = _load()
        observations = await fleet.observations()
    finally:
        totals = await fleet.close()
        await control.aclose()
        await server.close()
    latencies = convergence_latencies(changes, observations, range(devices))
    by_kind = latencies.by_kind_ms()
    per_change = {
        kind: {
            "server_cpu_ms": round(server_cpu / max(1, count) * 1000),
            "devices_cpu_ms": round(devices_cpu / max(1, count) * 1000),
            "database_cpu_ms": round(database_cpu / max(1, count) * 1000),
        }
        for kind, (server_cpu, devices_cpu, count, database_cpu) in cpu.items()
    }
    row = {
        "devices": devices,
        "workers": args.workers,
        "convergence_by_kind_ms": by_kind,
        "missed": latencies.missed,
        "stages_by_kind_ms": {k: stages(latencies, totals.wakes, k) for k in by_kind},
        "cpu_per_change": per_change,
        "requests_by_route": totals.stats.to_json().get("by_route", {}),
        "load_average_before": before,
        "load_average_after": after,
    }
    print(
        f"{devices:3d} devices: "
        + "; ".join(
            f"{kind}s ({k['n']}) p50 {k['p50']} ms, p95 {k['p95']} ms, max {k['max']} ms, "
            f"server CPU {per_change[kind]['server_cpu_ms']} ms, "
            f"devices' CPU {per_change[kind]['devices_cpu_ms']} ms, "
            f"database CPU {per_change[kind]['database_cpu_ms']} ms"
            for kind, k in by_kind.items()
        )
        + f"; {latencies.missed} missed; load {before[0]:.2f} → {after[0]:.2f}",
        flush=True,
    )
    return row


def main(argv: list[str]) -> int:
    args = _parse(argv)
    # The server is started by the installed console script, whose imports the editable
    # install points at the main checkout: the path makes them this checkout's.
    root = str(Path(__file__).resolve().parent.parent)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, (root, os.environ.get("PYTHONPATH"))))
    with _databases(args) as database:
        cluster = getattr(database, "__self__", None)  # `--postgres`: the throwaway cluster's
        pid_file = cluster.data / "postmaster.pid" if cluster is not None else None
        postmaster = int(pid_file.read_text().split()[0]) if pid_file is not None else None
        rows = [
            asyncio.run(_run(devices, args, database(), postmaster)) for devices in args.devices
        ]
    name = "fanout" + (f"-{args.name}" if args.name else "")
    report.save(
        name,
        {
            "label": args.label,
            "backend": "postgresql" if args.database or args.postgres else "sqlite",
            "changes": args.changes,
            "gap_s": args.gap,
            "initial": args.initial,
            "page_limit": PAGE_LIMIT,
            "cpus": os.cpu_count(),
            "runs": rows,
        },
    )
    return 0
