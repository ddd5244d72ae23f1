"""`python -m bench micro`: small timing figures that are no unit test's business.

A unit test proves behaviour; how long something takes on a shared 2-core machine is a
figure, printed here (and saved under `bench/results/micro.json`) for `docs/performance.md`:

- demo seed: starting a stub server with `--seed demo` on a fresh SQLite file (the bundled
  server of a first `make run` does this), until it accepts connections;
- 100k-row diff plan: `ui.sidebar.diff.compute_diff` for the sidebar's 100,000 rows after churn (a
  new row every 97th, one in 211 removed), the case `tests/ui/test_diff.py` checks;
- a full collection with the window's modules and widgets loaded and 100,000 sidebar rows,
  with the start-up heap frozen as `app.heap` does and without (the figure behind that
  workaround: full collections are deferred during passes, so `bench ui_without no_freeze`
  cannot show it).

Other such figures have a benchmark of their own: the mirror's bulk upsert (`bench
sync`, "floor: Mirror.apply"), the sidebar's longest stall during a reconcile (`bench ui`),
and a reply's latency on a kept-alive connection (`bench server`, list pages).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.report import print_table, save, summarize_ms


@dataclass(frozen=True)
class _Row:
    """A sidebar row as the diff sees it: an id and a value."""

    id: str
    version: int = 0


def _demo_seed_start(folder: Path) -> float:
    """Seconds from constructing the server to its accepting connections."""
    from server_stub.config import ServerSettings
    from server_stub.runner import ServerThread

    settings = ServerSettings(
        database_url=f"sqlite:///{folder / 'server.sqlite3'}",
        artifacts_dir=folder / "objects",
        agent_delay=0.0,
        seed="demo",
    )
    started = time.perf_counter()
    server = ServerThread(settings).start()
    elapsed = time.perf_counter() - started
    server.stop()
    return elapsed


def _diff_plan(rows: int) -> float:
    """Seconds `compute_diff` takes for `rows` rows after the test's churn."""
    from ui.sidebar.diff import compute_diff

    old = [_Row(f"s{i:06d}") for i in range(rows)]
    new = [_Row(f"s{i:06d}", 1) for i in range(0, rows, 97)] + [
        r for i, r in enumerate(old) if i % 97 and i % 211
    ]
    started = time.perf_counter()
    compute_diff(old, new)
    return time.perf_counter() - started


def _full_collections(rows: int, repeats: int) -> tuple[list[float], list[float]]:
    """Seconds of `gc.collect()` over a window holding `rows` sidebar rows: the start-up heap
    not frozen, then frozen (`app.heap.collect_then_freeze`, before the rows came)."""
    import gc

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    import app.desktop  # noqa: F401  (what a running window has loaded)
    import ui.text.markdown_html  # noqa: F401
    from app.heap import collect_then_freeze
    from sync import SyncEngine  # noqa: F401
    from sync.wire.models import SessionView
    from ui.window.main_window import MainWindow

    qapp = QApplication.instance() or QApplication([])
    window = MainWindow()
    stamp = "2026-01-01T00:00:00.000000Z"

    def fill() -> None:
        views = [
            SessionView(f"ses_{i:08d}", f"Conversation {i}", stamp, stamp, None, None)
            for i in range(rows)
        ]
        window.model.replace_now(views)
        qapp.processEvents()

    def timed() -> list[float]:
        out = []
        for _ in range(repeats):
            started = time.perf_counter()
            gc.collect()
            out.append(time.perf_counter() - started)
        return out

    fill()
    loose = timed()
    window.model.replace_now([])
    collect_then_freeze()  # what the window does at start, before its rows
    fill()
    frozen = timed()
    gc.unfreeze()
    window.close()
    return loose, frozen


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench micro")
    parser.add_argument("--repeats", type=int, default=5, help="samples of each figure")
    parser.add_argument("--rows", type=int, default=100_000, help="rows of the diff plan")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="converge-bench-micro-") as tmp:
        seeds = [_demo_seed_start(Path(tmp) / f"seed{i}") for i in range(args.repeats)]
    plans = [_diff_plan(args.rows) for _ in range(args.repeats)]
    loose, frozen = _full_collections(args.rows, args.repeats)
    load_after = os.getloadavg()[0]
    figures: dict[str, Any] = {
        "demo_seed_start": summarize_ms(seeds),
        "diff_plan": {**summarize_ms(plans), "rows": args.rows},
        "full_collection_not_frozen": {**summarize_ms(loose), "rows": args.rows},
        "full_collection_frozen": {**summarize_ms(frozen), "rows": args.rows},
        "cpus": os.cpu_count(),
        "load_avg_1m_before": load_before,
        "load_avg_1m_after": load_after,
    }
    print_table(
        "Small figures (milliseconds)",
        ["figure", "median", "p95", "n"],
        [
            ["demo seed: server start", *_cells(figures["demo_seed_start"])],
            [f"diff plan: {args.rows:,} rows", *_cells(figures["diff_plan"])],
            [
                f"full collection, {args.rows:,} sidebar rows, start-up heap not frozen",
                *_cells(figures["full_collection_not_frozen"]),
            ],
            [
                f"full collection, {args.rows:,} sidebar rows, start-up heap frozen",
                *_cells(figures["full_collection_frozen"]),
            ],
        ],
    )
    print(f"load average (1 min) before/after: {load_before:.1f} / {load_after:.1f}")
    save("micro", figures)
    return 0


def _cells(summary: dict[str, Any]) -> list[str]:
    return [f"{summary['median_ms']:.1f}", f"{summary['p95_ms']:.1f}", str(summary["n"])]
