"""`python -m bench conformance`: what `converge conformance` costs against the stub.

The whole check (every rule, its fixtures and its cleanup) against a real stub server
started WITHOUT the control plane, on SQLite and on PostgreSQL (a throwaway cluster), with
the scripted agent's delay at 0 (the tests' setting) and at its default 0.2 s (what a
deployment runs). Figures: wall seconds and requests per check, `--runs` times, and the
rules that take longest (the watch rules hold requests for their waits by design).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import report

A, B = "dev-alice", "dev-bob"


@contextlib.contextmanager
def _server(root: Path, database: str | None, agent_delay: float) -> Iterator[str]:
    from server_stub.config import ServerSettings
    from server_stub.runner import ServerThread

    settings = ServerSettings(
        database_url=database or f"sqlite:///{root / 'server.sqlite3'}",
        artifacts_dir=root / "objects",
        control=False,
        agent_delay=agent_delay,
        maintenance_interval=3600.0,
    )
    with ServerThread(settings) as server:
        yield server.url


def _measure(url: str, runs: int) -> dict[str, Any]:
    from qa.conformance.runner import run

    seconds: list[float] = []
    requests: list[int] = []
    per_rule: dict[str, list[float]] = {}
    for _ in range(runs):
        outcome = asyncio.run(run(url, A, B))
        if not outcome.passed:
            failed = [v.rule for v in outcome.verdicts if not v.passed]
            raise SystemExit(f"the stub failed rules {failed}: not a benchmark")
        seconds.append(outcome.seconds)
        requests.append(outcome.requests)
        for verdict in outcome.verdicts:
            per_rule.setdefault(verdict.rule, []).append(verdict.seconds)
    slowest = sorted(per_rule.items(), key=lambda kv: -statistics.median(kv[1]))[:5]
    return {
        "rules": len(per_rule),
        "check_s": [round(s, 2) for s in seconds],
        "requests": requests,
        "slowest_rules_median_s": {k: round(statistics.median(v), 2) for k, v in slowest},
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench conformance")
    parser.add_argument("--runs", type=int, default=3, help="checks per configuration")
    parser.add_argument("--postgres", action="store_true", help="also on PostgreSQL")
    args = parser.parse_args(argv)
    figures: dict[str, Any] = {}
    configurations = [("sqlite", 0.0), ("sqlite", 0.2)]
    if args.postgres:
        configurations += [("postgresql", 0.0)]
    for backend, delay in configurations:
        with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
            database = None
            if backend == "postgresql":
                from bench.throwaway_pg import throwaway_postgres

                database = stack.enter_context(throwaway_postgres())
            url = stack.enter_context(_server(Path(tmp), database, delay))
            figures[f"{backend}-agent-delay-{delay}"] = _measure(url, args.runs)
    report.print_table(
        "converge conformance against the stub (no control plane)",
        ("configuration", "rules", "check (s), median", "requests", "slowest rule"),
        [
            (
                name,
                f["rules"],
                round(statistics.median(f["check_s"]), 2),
                f["requests"][0],
                next(iter(f["slowest_rules_median_s"].items())),
            )
            for name, f in figures.items()
        ],
    )
    report.save("conformance", figures)
    return 0
