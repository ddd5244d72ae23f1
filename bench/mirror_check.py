"""`python -m bench mirror_check`: what the damage check costs when a mirror opens.

`Mirror.open` runs `sync.mirror.check.find_damage` (`PRAGMA quick_check` and the schema's
tables and columns, on a read-only connection) before anything else, so every `converge`
command and the window's engine pay it once per open. This builds a mirror of `--rows`
conversations (default 100,000, the size `bench sync` walks), then times the check alone and
a whole `Mirror.open` + `close`, warm (the file in the page cache, as on a second open):
one untimed round of both first, then rounds alternating which of the two goes first, so
that neither is always the one that finds the cache just warmed by the other.
Figures go to `bench/results/mirror-check.json` for `docs/sync.md`.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.report import print_table, save, summarize_ms

STAMP = "2026-11-29T10:00:00.000000Z"


def _build(path: Path, rows: int) -> None:
    from sync.mirror.store import Mirror
    from sync.wire.models import SessionView

    mirror = Mirror.open(path)
    try:
        for start in range(0, rows, 10_000):
            mirror.apply(
                [
                    SessionView(
                        f"ses_{i:08d}", f"Conversation number {i}", STAMP, STAMP, None, None
                    )
                    for i in range(start, min(rows, start + 10_000))
                ]
            )
    finally:
        mirror.close()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench mirror_check")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    from sync.mirror.check import find_damage
    from sync.mirror.store import Mirror

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "mirror.sqlite3"
        _build(path, args.rows)
        assert find_damage(path) is None

        def check_only() -> None:
            find_damage(path)

        def open_close() -> None:
            Mirror.open(path).close()

        steps: dict[str, Callable[[], None]] = {"check": check_only, "whole": open_close}
        for step in steps.values():  # warm-up, untimed
            step()
        times: dict[str, list[float]] = {name: [] for name in steps}
        for round_ in range(args.repeat):
            order = list(steps) if round_ % 2 == 0 else list(reversed(steps))
            for name in order:
                started = time.perf_counter()
                steps[name]()
                times[name].append(time.perf_counter() - started)
        check, whole = times["check"], times["whole"]
        size = path.stat().st_size
    figures = {
        "rows": args.rows,
        "file_bytes": size,
        "quick_check": summarize_ms(check),
        "mirror_open_close": summarize_ms(whole),
    }
    print_table(
        f"mirror damage check, {args.rows:,} rows ({size / 1e6:.1f} MB)",
        ("step", "median ms", "p95 ms"),
        [
            ("find_damage (quick_check + schema)", *figures["quick_check"].values())[:3],
            ("Mirror.open + close (check included)", *figures["mirror_open_close"].values())[:3],
        ],
    )
    save("mirror-check", figures)
    return 0
