"""Shared output for benchmarks: a plain-text table on stdout and a JSON file of the figures."""

from __future__ import annotations

import json
import platform
import statistics
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def percentile(samples: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile; samples need not be sorted."""
    ordered = sorted(samples)
    if not ordered:
        return float("nan")
    rank = max(1, round(pct / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def summarize_ms(samples_s: Sequence[float]) -> dict[str, float]:
    """Median and p95 of samples given in seconds, reported in milliseconds."""
    return {
        "median_ms": round(statistics.median(samples_s) * 1000, 3),
        "p95_ms": round(percentile(samples_s, 95) * 1000, 3),
        "n": len(samples_s),
    }


def print_table(title: str, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    print(f"\n{title}")
    print("  ".join(h.ljust(w) for h, w in zip(cells[0], widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in cells[1:]:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))


def save(name: str, figures: dict[str, Any]) -> Path:
    """Write `bench/results/<name>.json` with the machine's description beside the figures."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    payload = {
        "benchmark": name,
        "at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "platform": platform.platform(),
        "figures": figures,
    }
    path = RESULTS_DIR / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"\nsaved {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}")
    return path
