"""`python -m bench ui`: the window's responsiveness with big histories (offscreen Qt).

Figures:

- first paint: from the moment the process is spawned to the first paint of a non-empty
  sidebar, for the real start-up path (`converge`: `app.main` → `app.desktop.run`, in a
  child process that imports nothing else first, `bench/first_paint_child.py`) over a
  100,000-row mirror (the configured server is unreachable, so nothing but the mirror is
  involved); of it, interpreter start and imports; whether SQLAlchemy, httpx, markdown-it
  or Pygments were loaded;
- all rows: until the model holds all 100,000 rows; then until the engine is attached, and
  the process's RSS then;
- reconcile stalls, for 10,000 and 100,000 sessions: the longest gap between two ticks of
  a 5 ms Qt timer while the real engine reconciles (walk, mirror upsert) and the sidebar
  applies the diff: a cold pass into an empty mirror, then a pass after churn on the server
  (1 % of sessions updated, so they move to the top; 0.5 % deleted; 0.5 % created). Wall
  gaps count every cause, including the engine's own work and other processes on the
  machine; "UI CPU" gaps count only the UI thread's CPU time between two ticks.

The stub server runs in a separate process (as a real server would), its sessions inserted
straight into its SQLite file.

- a pass that changes one row: the UI-thread time of the sidebar's loop (worst of 5);
- a repaint of the sidebar's visible rows, its layout finished: its UI-thread time (median of
  30; `bench.sidebar_paint`), and how long the sidebar shows no row after one insert;
- for each stall figure, what the worst gap was made of: the loop callbacks that ran in it
  and the rest (Qt's own paint, layout and events);
- `--busy-core`: the same with another process keeping one core busy.

Targets: first paint < 0.5 s, stall < 16 ms (< 25 ms with one core busy),
memory < 200 MB, one-row pass < 2 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.report import print_table, save
from bench.sidebar_paint import bench_blank_after_insert, bench_repaint
from bench.stall_meter import StallMeter

TOKEN = "dev-alice"
# The targets: stall < 16 ms quiet (< 25 ms with one core busy), first paint < 0.5 s,
# RSS < 200 MB, a pass that changes one row < 2 ms of UI time.
TARGETS = {"first_paint_s": 0.5, "stall_ms": 16.0, "stall_busy_ms": 25.0, "rss_mb": 200.0}
TARGETS |= {"one_row_ui_ms": 2.0, "first_paint_floor_ratio": 1.5, "rss_idle_mb": 150.0}


def _ts(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# --- the server, in its own process ---------------------------------------------------------


class ServerProcess:
    """The stub on a SQLite file the benchmark also writes directly (`populate`, `churn`,
    `touch_one`). The server remembers each principal's index version in memory
    (`server_stub.domain.indexversions`: on SQLite it is the only writer), so after a direct write
    it is restarted on the same port (`restart`): a client then finds the changes as it
    would after changes made while it was away. Without the restart the churn and one-row
    passes would be 304s that measure nothing."""

    def __init__(self, folder: Path) -> None:
        self.db = folder / "server.sqlite3"
        self.folder = folder
        self.url = ""
        self._start("0")

    def _start(self, port: str) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "server_stub.cli",
                "--port",
                port,
                "--database",
                f"sqlite:///{self.db}",
                "--artifacts",
                str(self.folder / "objects"),
                "--agent-delay",
                "0",
                "--log-level",
                "warning",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.startswith("listening on "):
            self.proc.kill()
            raise RuntimeError(f"server did not start: {line!r}")
        self.url = line.removeprefix("listening on ")

    def restart(self) -> None:
        """Stop and start again on the same port (the client keeps its URL)."""
        self.stop()
        self._start(self.url.rsplit(":", 1)[1])

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def populate(db: Path, n: int) -> list[str]:
    """n sessions of dev-alice, one per second of 2026; returns their ids."""
    base = datetime(2026, 1, 1, tzinfo=UTC)
    rows = []
    for i in range(n):
        at = _ts(base + timedelta(seconds=i))
        rows.append((f"ses_bench{i:08d}", f"Conversation {i}", at, at))
    conn = sqlite3.connect(db, timeout=30)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(
            "INSERT INTO sessions (id, tenant, principal, title, title_state, created_at,"
            " updated_at, last_sequence) VALUES (?, 'acme', 'alice', ?, 'stored', ?, ?, 0)",
            rows,
        )
        _bump(conn)
        conn.execute("COMMIT")
    finally:
        conn.close()
    return [r[0] for r in rows]


def churn(db: Path, ids: list[str], seed: int = 7) -> dict[str, int]:
    """1 % updated (to the top), 0.5 % deleted, 0.5 % created, straight in the database."""
    rnd = random.Random(seed)
    n = len(ids)
    picked = rnd.sample(ids, n // 100 + n // 200)
    updated, deleted = picked[: n // 100], picked[n // 100 :]
    now = datetime(2026, 11, 1, tzinfo=UTC)
    conn = sqlite3.connect(db, timeout=30)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(
            "UPDATE sessions SET updated_at = ?, title = title || ' (edited)' WHERE id = ?",
            [(_ts(now + timedelta(seconds=i)), sid) for i, sid in enumerate(updated)],
        )
        conn.executemany("DELETE FROM sessions WHERE id = ?", [(sid,) for sid in deleted])
        created = [
            (f"ses_new{i:08d}", f"New conversation {i}", _ts(now), _ts(now + timedelta(hours=1)))
            for i in range(n // 200)
        ]
        conn.executemany(
            "INSERT INTO sessions (id, tenant, principal, title, title_state, created_at,"
            " updated_at, last_sequence) VALUES (?, 'acme', 'alice', ?, 'stored', ?, ?, 0)",
            created,
        )
        _bump(conn)
        conn.execute("COMMIT")
    finally:
        conn.close()
    return {"updated": len(updated), "deleted": len(deleted), "created": len(created)}


def touch_one(db: Path, session_id: str) -> None:
    """One session gets newer activity (it moves to the top), straight in the database."""
    conn = sqlite3.connect(db, timeout=30)
    try:
        conn.execute("BEGIN IMMEDIATE")
        at = _ts(datetime.now(UTC))
        conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (at, session_id))
        _bump(conn)
        conn.execute("COMMIT")
    finally:
        conn.close()


def _bump(conn: sqlite3.Connection) -> None:
    conn.execute(
        "INSERT INTO principal_versions (tenant, principal, version) VALUES ('acme', 'alice', 1)"
        " ON CONFLICT (tenant, principal) DO UPDATE SET version = version + 1"
    )


# --- stalls during a reconcile (in this process) ---------------------------------------------


async def _reconcile_stalls(server: ServerProcess, ids: list[str]) -> dict[str, Any]:
    from app import heap
    from sync.engine import SyncEngine
    from sync.profile.profile import Profile
    from ui.window.controller import WindowController
    from ui.window.main_window import MainWindow

    url, folder, db = server.url, server.folder, server.db
    window = MainWindow()
    window.show()
    # No watch, no timer: the measured passes are the benchmark's own, one at a time.
    controller = WindowController(window, sync_interval=0, watch=False)
    heap.HeapPolicy()  # as the application does
    engine = await SyncEngine.open(Profile(folder / "profile", server=url, token=TOKEN))
    meter = StallMeter()
    out: dict[str, Any] = {}
    try:
        controller.attach(engine, connect=False)
        await asyncio.sleep(0.2)
        for phase in ("cold", "churn"):
            if phase == "churn":
                window.list.selectionModel().setCurrentIndex(
                    window.model.index(len(ids) // 2, 0),
                    window.list.selectionModel().SelectionFlag.ClearAndSelect,
                )
                await controller.wait_idle()
                out["churn_counts"] = churn(db, ids)
                await asyncio.to_thread(server.restart)
            meter.start()
            started = time.perf_counter()
            report = await engine.reconcile()
            if report.error is not None:
                raise RuntimeError(report.error.message)
            if not report.changed:
                raise RuntimeError(f"the {phase} pass changed nothing: it measured nothing")
            await controller.wait_idle()  # the sidebar follows by itself (delta or diff)
            elapsed = time.perf_counter() - started
            figures = meter.stop()
            figures["duration_s"] = round(elapsed, 2)
            figures["rows"] = window.model.rowCount()
            out[phase] = figures
        # A pass that changes one row: the UI thread's time in the sidebar's loop.
        samples = []
        for i in range(5):
            touch_one(db, ids[i])
            await asyncio.to_thread(server.restart)
            meter.start()
            report = await engine.reconcile()
            await controller.wait_idle()
            meter.stop()
            if report.updated != (ids[i],):
                raise RuntimeError(f"the one-row pass changed {report.updated}, not {ids[i]}")
            samples.append(meter.total.get("SidebarRefresher._loop", 0.0) * 1000)
        out["one_row_ui_ms"] = round(max(samples), 2)
        out["one_row_ui_ms_median"] = round(sorted(samples)[len(samples) // 2], 2)
    finally:
        await controller.shutdown()
        await engine.close()
        window.close()
    return out


def bench_reconcile(n: int) -> dict[str, Any]:
    from PySide6.QtWidgets import QApplication

    from app.loop import ConvergeEventLoop

    app = QApplication.instance() or QApplication([sys.argv[0]])
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    with tempfile.TemporaryDirectory(prefix="converge-bench-ui-") as tmp:
        folder = Path(tmp)
        server = ServerProcess(folder)
        try:
            ids = populate(server.db, n)
            loop = ConvergeEventLoop(app)
            asyncio.set_event_loop(loop)
            try:
                stalls = _reconcile_stalls(server, ids)
                figures: dict[str, Any] = loop.run_until_complete(stalls)
                return figures
            finally:
                loop.close()
                asyncio.set_event_loop(None)
        finally:
            server.stop()


async def _backfill_stalls(server: ServerProcess) -> dict[str, Any]:
    """A first sync with content (`bench_backfill`): the window's stalls from the pass's
    start until the content phase has mirrored every transcript."""
    from app import heap
    from sync.engine import SyncEngine
    from sync.profile.profile import Profile
    from ui.window.controller import WindowController
    from ui.window.main_window import MainWindow

    window = MainWindow()
    window.show()
    controller = WindowController(window, sync_interval=0, watch=False)
    heap.HeapPolicy()  # as the application does
    profile = Profile(server.folder / "profile", server=server.url, token=TOKEN)
    engine = await SyncEngine.open(profile)
    meter = StallMeter()
    try:
        controller.attach(engine, connect=False)
        await asyncio.sleep(0.2)
        meter.start()
        started = time.perf_counter()
        report = await engine.reconcile()
        if report.error is not None:
            raise RuntimeError(report.error.message)
        await controller.wait_idle()
        rows_s = time.perf_counter() - started
        await engine.content.wait_idle()
        while await asyncio.to_thread(engine.mirror.stale_transcripts, 1):
            engine.content.kick()  # a phase stops at its time budget: the next goes on
            await engine.content.wait_idle()
        figures = meter.stop()
        figures["rows_s"] = round(rows_s, 2)
        figures["duration_s"] = round(time.perf_counter() - started, 2)
    finally:
        await controller.shutdown()
        await engine.close()
        window.close()
    return figures


def bench_backfill(conversations: int, messages: int) -> dict[str, Any]:
    """A history backfill: `conversations` of `messages` each (`bench.search`'s seeded
    text), synced into a new profile with the window open: rows first, then every
    transcript, and the longest UI-thread stall over all of it."""
    from PySide6.QtWidgets import QApplication

    from app.loop import ConvergeEventLoop
    from bench.search import populate as populate_with_content

    app = QApplication.instance() or QApplication([sys.argv[0]])
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    with tempfile.TemporaryDirectory(prefix="converge-bench-backfill-") as tmp:
        server = ServerProcess(Path(tmp))
        try:
            populate_with_content(server.db, conversations, messages)
            server.restart()  # the server sees what was written behind its back
            loop = ConvergeEventLoop(app)
            asyncio.set_event_loop(loop)
            try:
                figures = loop.run_until_complete(_backfill_stalls(server))
            finally:
                loop.close()
                asyncio.set_event_loop(None)
        finally:
            server.stop()
    return {"conversations": conversations, "messages_each": messages, **figures}


# --- first paint (a fresh process) -----------------------------------------------------------


def build_mirror(folder: Path, n: int) -> None:
    from sync.mirror.store import Mirror
    from sync.wire.models import SessionView

    base = datetime(2026, 1, 1, tzinfo=UTC)
    views = []
    for i in range(n):
        at = _ts(base + timedelta(seconds=i))
        views.append(SessionView(f"ses_bench{i:08d}", f"Conversation {i}", at, at, None, None))
    folder.mkdir(parents=True, exist_ok=True)
    mirror = Mirror.open(folder / "mirror.sqlite3")
    try:
        mirror.apply(views)
    finally:
        mirror.close()


def bench_first_paint(n: int, runs: int = 5) -> dict[str, Any]:
    """`converge` in fresh processes over an n-row mirror (`bench/first_paint_child.py`),
    interleaved start by start with its floor, a bare `QListView` over the same file
    (`bench/bare_list_child.py`).

    A user's `converge` starts with the project's bytecode cached (written by its first
    start), so the children may write it even where the environment says
    PYTHONDONTWRITEBYTECODE, one start of each warms the caches untimed, and the figures are
    the median of the next `runs` starts; the ratios are each start's over the floor's just
    before it, so that a change of load between rounds touches both sides of a ratio.
    """
    with tempfile.TemporaryDirectory(prefix="converge-bench-paint-") as tmp:
        profile = Path(tmp) / "profile"
        build_mirror(profile, n)
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        _bare_run(profile, n, env)
        _first_paint_run(profile, n, env)
        floors, starts = [], []
        for _ in range(runs):
            floors.append(_bare_run(profile, n, env))
            starts.append(_first_paint_run(profile, n, env))
    out: dict[str, Any] = {"starts": starts, "floor_starts": floors}
    times = ("imports_s", "imports_cpu_s", "first_paint_s", "first_paint_cpu_s", "all_rows_s")
    for key in (*times, "engine_s", "rss_paint_mb", "rss_mb", "rss_idle_mb", "modules_at_paint"):
        out[key] = _median([r[key] for r in starts])
    floor: dict[str, Any] = {}
    for key in ("imports_s", "imports_cpu_s", "first_paint_s", "first_paint_cpu_s", "rss_mb"):
        floor[key] = _median([r[key] for r in floors])
    out["floor"] = floor
    for key in ("first_paint_s", "first_paint_cpu_s"):
        ratios = [s[key] / f[key] for s, f in zip(starts, floors, strict=True)]
        out[f"{key}_floor_ratio"] = round(_median(ratios), 2)
    out["heavy_at_paint"] = sorted({m for r in starts for m in r["heavy_at_paint"]})
    return out


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def _first_paint_run(profile: Path, n: int, env: dict[str, str]) -> dict[str, Any]:
    return _child(["bench.first_paint_child", str(profile)], n, env)


def _bare_run(profile: Path, n: int, env: dict[str, str]) -> dict[str, Any]:
    from bench.first_paint_child import TOKEN, UNREACHABLE
    from sync.profile.profile import Profile

    mirror = Profile(profile, server=UNREACHABLE, token=TOKEN).mirror_path
    if not mirror.is_file():  # an account's own mirror, or the profile's top-level one
        mirror = profile / "mirror.sqlite3"
    return _child(["bench.bare_list_child", str(mirror)], n, env)


def _child(module: list[str], n: int, env: dict[str, str]) -> dict[str, Any]:
    spawned = time.time()
    result = subprocess.run(
        [sys.executable, "-m", *module, str(spawned), str(n)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    line = next((x for x in result.stdout.splitlines() if x.startswith("{")), None)
    if line is None:
        raise RuntimeError(f"{module[0]} failed: {result.stderr[-2000:]}")
    return dict(json.loads(line))


# --- entry ------------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    parser = argparse.ArgumentParser(prog="python -m bench ui")
    parser.add_argument("--sizes", default="10000,100000", help="index sizes for the stalls")
    parser.add_argument("--paint-rows", type=int, default=100_000)
    parser.add_argument(
        "--busy-core", action="store_true", help="another process keeps one core busy"
    )
    parser.add_argument(
        "--backfill",
        type=int,
        default=0,
        metavar="N",
        help="also a first sync of N conversations of 20 messages with the window open",
    )
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    spinner = None
    if args.busy_core:
        spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        time.sleep(1.0)  # let it be scheduled and show in the load average
    try:
        return _run(args, sizes)
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()


def _run(args: argparse.Namespace, sizes: list[int]) -> int:
    figures: dict[str, Any] = {
        "targets": TARGETS,
        "busy_core": args.busy_core,
        "cpus": os.cpu_count(),
        "load_avg_1m_before": os.getloadavg()[0],
    }
    paint = bench_first_paint(args.paint_rows)
    figures["first_paint"] = paint
    if sizes:
        figures["repaint"] = bench_repaint(max(sizes))
        figures["blank_after_insert"] = bench_blank_after_insert(max(sizes))
    for n in sizes:
        figures[f"reconcile_{n}"] = bench_reconcile(n)
    if args.backfill:
        figures["backfill"] = bench_backfill(args.backfill, 20)

    floor = paint["floor"]
    k = f"{args.paint_rows // 1000:,}k"
    rows: list[list[Any]] = [
        [f"first paint, {k}-row mirror (s), median of 5", paint["first_paint_s"], "< 0.5"],
        ["  of which Python + imports (s)", paint["imports_s"], ""],
        [
            "  CPU time then, of which imports (s)",
            f"{paint['first_paint_cpu_s']} ({paint['imports_cpu_s']})",
            "",
        ],
        ["floor: a bare QListView over the same file (s)", floor["first_paint_s"], ""],
        ["  of which Python + imports (s)", floor["imports_s"], ""],
        [
            "  CPU time then, of which imports (s)",
            f"{floor['first_paint_cpu_s']} ({floor['imports_cpu_s']})",
            "",
        ],
        [
            "first paint over the floor, wall, median of pairs",
            paint["first_paint_s_floor_ratio"],
            "<= 1.5",
        ],
        [
            "first paint over the floor, CPU, median of pairs",
            paint["first_paint_cpu_s_floor_ratio"],
            "<= 1.5",
        ],
        [
            "  deferred modules loaded at first paint",
            ",".join(paint["heavy_at_paint"]) or "no",
            "",
        ],
        ["  modules loaded at first paint", paint["modules_at_paint"], ""],
        [f"all {k} rows in the sidebar (s)", paint["all_rows_s"], ""],
        ["engine attached (s)", paint["engine_s"], ""],
        [f"RSS with {k} rows at the first paint (MB)", paint["rss_paint_mb"], ""],
        [f"RSS with {k} rows, engine attached (MB)", paint["rss_mb"], "< 200"],
        [f"RSS with {k} rows, engine idle (MB)", paint["rss_idle_mb"], "<= 150"],
        [f"floor's RSS with {k} rows (MB)", floor["rss_mb"], ""],
    ]
    for n in sizes:
        for phase in ("cold", "churn"):
            f = figures[f"reconcile_{n}"][phase]
            label = f"reconcile {n:,} {phase}"
            stall = "< 25" if args.busy_core else "< 16"
            rows.append([f"{label}: longest stall, wall (ms)", f["max_wall_gap_ms"], stall])
            rows.append([f"{label}: p99 tick gap, wall (ms)", f["p99_wall_gap_ms"], ""])
            rows.append([f"{label}: longest UI-thread busy (ms)", f["max_ui_cpu_gap_ms"], stall])
            gap = f["worst_gap"]
            parts = ", ".join(f"{n} {t}" for n, t in gap["longest"])
            rows.append(
                [
                    f"  in {gap['callbacks']} loop callbacks ({parts}) (ms)",
                    gap["in_callbacks_ms"],
                    "",
                ]
            )
            rows.append(
                ["  outside the loop: Qt's paint, layout, events (ms)", gap["outside_loop_ms"], ""]
            )
            rows.append([f"{label}: duration (s)", f["duration_s"], ""])
            name, worst = next(iter(f["longest_callbacks_ms"].items()))
            rows.append([f"{label}: longest step: {name} (ms)", worst, ""])
        one = figures[f"reconcile_{n}"]
        rows.append(
            [f"{n:,}: pass changing one row, UI time, worst of 5 (ms)", one["one_row_ui_ms"], "< 2"]
        )
    if sizes:
        repaint = figures["repaint"]
        label = f"sidebar repaint, {repaint['rows_shown']} rows shown, UI time, median of 30 (ms)"
        rows.append([label, repaint["repaint_ms"], ""])
        blank = figures["blank_after_insert"]
        label = f"{blank['rows']:,} rows, one inserted: no row shown for (ms), worst of 5"
        rows.append([label, blank["blank_ms"], "< 16"])
        turn = blank["worst_turn_ms"]
        rows.append(["  longest UI-thread turn of that layout (ms)", turn, "< 16"])
    if args.backfill:
        f = figures["backfill"]
        label = f"backfill {args.backfill:,} conversations x 20 messages"
        rows.append([f"{label}: longest stall, wall (ms)", f["max_wall_gap_ms"], "< 16"])
        rows.append([f"{label}: longest UI-thread busy (ms)", f["max_ui_cpu_gap_ms"], "< 16"])
        name, worst = next(iter(f["longest_callbacks_ms"].items()))
        rows.append([f"{label}: longest step: {name} (ms)", worst, ""])
        rows.append([f"{label}: rows in the sidebar (s)", f["rows_s"], ""])
        rows.append([f"{label}: every transcript mirrored (s)", f["duration_s"], ""])
    figures["load_avg_1m_after"] = os.getloadavg()[0]
    print_table("Desktop window (offscreen)", ["figure", "value", "target"], rows)
    before, after = figures["load_avg_1m_before"], figures["load_avg_1m_after"]
    print(f"load average (1 min) before/after: {before:.1f} / {after:.1f}")
    name = "ui_busy_core" if args.busy_core else "ui"
    if not sizes:  # `--sizes ''`: first paint only, or with the backfill
        name = f"{name}_backfill" if args.backfill else f"{name}_first_paint"
    if args.paint_rows != 100_000:
        name = f"{name}_{args.paint_rows}"
    save(name, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
