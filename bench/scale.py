"""`python -m bench scale`: convergence latency of `converge qa` as the devices grow.

Runs `converge qa --devices N --seed S --operations K --json` (the harness's own server, no
faults: the seeded workload with its restarts and outages) once per `--devices` value, as
a child process each, and keeps from each report the convergence latency (p50, p95, p99,
max: for every create and every confirmed delete, the time until the slowest other device's
mirror followed; and apart for creates and for deletes, which reach a watching device by
different paths), its split at the slowest device's watch answer, the requests (by route,
and per pass), the worker processes the devices ran in (`--workers`, decision 0214), the
event-loop lag of the harness and of the devices' loops, and the violations, with the
machine's load average before and after (the machine is shared: say the load with each
figure). The devices walk at the app's page size (200), as real devices do; `--page-limit
20` gives `converge qa`'s own, which exists to make walks span pages while items move
between them. `--database URL --servers 2` runs the two-process PostgreSQL fleet;
`--postgres` makes a throwaway cluster for it (`tests.conftest.PostgresCluster`, a new
database per run). Writes `bench/results/convergence-scale[-NAME].json`.

Target: with 50 watching devices, p95 under 1 s and p99 under 2 s.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import report
from sync.api.client import PAGE_LIMIT

TARGET_P95_MS = 1000.0
TARGET_P99_MS = 2000.0


def _parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench scale")
    p.add_argument("--devices", type=int, nargs="+", default=[5, 20, 50])
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--operations", type=int, default=120)
    p.add_argument("--database", help="an empty database URL for the harness's servers")
    p.add_argument("--postgres", action="store_true", help="a throwaway PostgreSQL 15 cluster")
    p.add_argument("--servers", type=int, default=1)
    p.add_argument(
        "--page-limit",
        type=int,
        default=PAGE_LIMIT,
        help=f"the devices' page size (default the app's, {PAGE_LIMIT}; `converge qa`'s own is 20)",
    )
    p.add_argument(
        "--workers",
        type=int,
        help="the harness's worker processes for the devices (default: its own choice)",
    )
    p.add_argument("--name", default="", help="results file suffix")
    p.add_argument("--label", default="", help="what was measured (recorded as is)")
    return p.parse_args(argv)


def _load() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


@contextlib.contextmanager
def _databases(args: argparse.Namespace) -> Iterator[Any]:
    """A function giving each run an empty database URL (None: SQLite in its work folder)."""
    if not args.postgres:
        yield lambda: args.database
        return
    from tests.conftest import PostgresCluster  # only for --postgres

    cluster = PostgresCluster()
    cluster.start()
    try:
        yield cluster.new_database
    finally:
        cluster.stop()


def _run(devices: int, args: argparse.Namespace, database: str | None) -> dict[str, Any]:
    # The module rather than the console script, so a checkout runs its own code.
    command = [
        sys.executable,
        "-m",
        "app.main",
        "qa",
        "--devices",
        str(devices),
        "--seed",
        str(args.seed),
        "--operations",
        str(args.operations),
        "--json",
    ]
    if database:
        command += ["--database", database, "--servers", str(args.servers)]
    command += ["--page-limit", str(args.page_limit)]
    if args.workers is not None:
        command += ["--workers", str(args.workers)]
    # The harness starts its servers by the installed console script, whose imports the
    # editable install points at the main checkout: the path makes them this checkout's.
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    before = _load()
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=1800, check=False, env=env
    )
    after = _load()
    qa = json.loads(done.stdout)
    ms = qa["convergence_ms"]
    by_kind = qa.get("convergence_by_kind_ms", {})
    row = {
        "devices": devices,
        "exit_status": done.returncode,
        "convergence_ms": ms,
        "convergence_by_kind_ms": by_kind,
        "changes": qa["convergence_samples"],
        "missed": qa["convergence_missed"],
        "requests": qa["requests"]["requests"],
        "requests_per_second": qa["requests"]["per_second"],
        "passes": qa["engine"]["passes"],
        "requests_per_pass": round(qa["requests"]["requests"] / max(1, qa["engine"]["passes"]), 2),
        "requests_by_route": qa["requests"].get("by_route", {}),
        "workers": qa["workers"]["processes"],
        "clock": qa["workers"],
        "loop_lag_s": qa["loop_lag"],
        "device_loop_lag_s": qa["device_loop_lag"],
        "workload_seconds": qa["seconds"]["workload"],
        "stages_ms": qa.get("convergence_stages_ms", {}),
        "stages_by_kind_ms": qa.get("convergence_stages_by_kind_ms", {}),
        "violations": len(qa["violations"]),
        "restarts": qa["server"]["restarts"],
        "load_average_before": before,
        "load_average_after": after,
        "target_met": ms["p95"] is not None
        and ms["p95"] < TARGET_P95_MS
        and (ms.get("p99") or 0) < TARGET_P99_MS,
    }
    print(
        f"{devices:3d} devices: p50 {ms['p50']} ms, p95 {ms['p95']} ms, p99 {ms.get('p99')} ms, "
        f"max {ms['max']} ms"
        + "".join(
            f"; {kind}s ({k['n']}) p50 {k['p50']} ms, p95 {k['p95']} ms"
            for kind, k in by_kind.items()
        )
        + f"; {row['requests']} requests, {row['passes']} passes, "
        f"{row['workers']} workers, devices' loop lag p50 "
        f"{(qa['device_loop_lag']['p50'] or 0) * 1000:.0f} ms; {row['violations']} violations; "
        f"load {before[0]:.2f} → {after[0]:.2f}",
        flush=True,
    )
    return row


def main(argv: list[str]) -> int:
    args = _parse(argv)
    rows = []
    with _databases(args) as database:
        for devices in args.devices:
            rows.append(_run(devices, args, database()))
    backend = "postgresql" if (args.postgres or args.database) else "sqlite"
    name = "convergence-scale" + (f"-{args.name}" if args.name else "")
    report.save(
        name,
        {
            "label": args.label,
            "backend": backend,
            "servers": args.servers if backend == "postgresql" else 1,
            "seed": args.seed,
            "operations": args.operations,
            "page_limit": args.page_limit,
            "cpus": os.cpu_count(),
            "targets": {"devices": 50, "p95_ms": TARGET_P95_MS, "p99_ms": TARGET_P99_MS},
            "runs": rows,
        },
    )
    return 0
