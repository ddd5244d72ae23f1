"""`python -m bench ui_without VARIANT [ROWS]`: the reconcile stalls of `bench ui` with one of
the client's garbage-collector and GIL measures taken out, to re-check that each still earns
its place (docs/performance.md, "Which workarounds still earn their place").

VARIANT: `none` (all measures in place), `no_defer`
(`sync.reconcile.gc_pause.full_collections_deferred`), `no_freeze` (the heap policy of
`app.heap`), or `all` (every one of them out). Prints one JSON line and adds it to the runs of
`bench/results/ui-without.json` (`python -m bench ui_without --fresh` empties that first).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from types import ModuleType
from typing import Any

VARIANTS = ("none", "no_defer", "no_freeze", "all")


class _NoHeapPolicy:
    """`app.heap.HeapPolicy` taken out: no freezing, no idle collection."""

    def __init__(self) -> None:
        pass

    def uninstall(self) -> None:
        pass


def _replace(module: ModuleType, name: str, value: object) -> None:
    """Take a workaround out where it is used; a name the module does not have would take
    out nothing (and the variant would measure nothing), so that is an error."""
    if not hasattr(module, name):
        raise AttributeError(f"{module.__name__} has no {name}: the variant is stale")
    setattr(module, name, value)


def _take_out(variant: str) -> None:
    import app.heap
    import sync.reconcile.reconciler
    import ui.sidebar.refresher

    every = variant == "all"
    if every or variant == "no_defer":
        _replace(sync.reconcile.reconciler, "full_collections_deferred", contextlib.nullcontext)
        _replace(ui.sidebar.refresher, "full_collections_deferred", contextlib.nullcontext)
    if every or variant == "no_freeze":
        _replace(app.heap, "HeapPolicy", _NoHeapPolicy)


def _record(run: dict[str, Any]) -> None:
    from bench.report import RESULTS_DIR, save

    path = RESULTS_DIR / "ui-without.json"
    runs: list[dict[str, Any]] = []
    if path.exists():
        runs = json.loads(path.read_text())["figures"]["runs"]
    save("ui-without", {"runs": [*runs, run]})


def main(argv: list[str]) -> int:
    if argv == ["--fresh"]:
        from bench.report import RESULTS_DIR

        (RESULTS_DIR / "ui-without.json").unlink(missing_ok=True)
        return 0
    if not argv or argv[0] not in VARIANTS:
        print(f"usage: python -m bench ui_without {{{','.join(VARIANTS)}}} [rows]")
        return 2
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    variant = argv[0]
    rows = int(argv[1]) if len(argv) > 1 else 100_000
    from bench.ui import bench_reconcile

    _take_out(variant)
    figures = bench_reconcile(rows)
    out: dict[str, Any] = {
        "variant": variant,
        "rows": rows,
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "at": time.strftime("%H:%M:%SZ", time.gmtime()),
    }
    for phase in ("cold", "churn"):
        f = figures[phase]
        out[phase] = {
            "max_wall_gap_ms": f["max_wall_gap_ms"],
            "max_ui_cpu_gap_ms": f["max_ui_cpu_gap_ms"],
            "longest_step": next(iter(f["longest_callbacks_ms"].items())),
        }
    out["one_row_ui_ms"] = figures["one_row_ui_ms"]
    print(json.dumps(out))
    _record(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
