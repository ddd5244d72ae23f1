"""`python -m bench first_sync`: a first sync of a big index against its floors, raw walks.

The stub runs in a separate process (as a real server would; its CPU is not the client's),
its sessions inserted straight into its SQLite file (`bench.ui.populate`). Then, interleaved
(floors, ours, floors, ours, ...) so that the machine's load falls on both alike:

- floors, raw walks: every page of the same index (limit 200) fetched over one keep-alive
  connection, each body parsed with `json.loads` and nothing else: with the standard
  library's `http.client` (what any client must pay to read the index), and with a plain
  `httpx.AsyncClient` (what a client on the HTTP library ours uses must pay);
- ours: `SyncEngine.reconcile()` in this process, into an empty mirror (walk, parse, upsert,
  the walk's position and durability), as `converge sync` runs it the first time; then,
  apart (`title_index`), the title entries its pages left pending written as the content
  phase that follows the pass writes them (decision 0238), which is held back meanwhile.

Both wall time and this process's CPU time (`time.process_time`, every thread: the mirror
writes on worker threads) are recorded; the figures are medians, and the ratios those of
the medians. The load average is printed with them: the machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from bench.report import print_table, save
from bench.ui import ServerProcess, populate

TOKEN = "dev-alice"
LIMIT = 200


def raw_walk(url: str) -> tuple[float, float, int]:
    """(wall, CPU, sessions) of one walk with a plain keep-alive client."""
    parts = urlsplit(url)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    wall, cpu = time.perf_counter(), time.process_time()
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port)
    seen = 0
    cursor: str | None = None
    try:
        while True:
            path = f"/v1/sessions?limit={LIMIT}"
            if cursor:
                path += f"&cursor={quote(cursor)}"
            conn.request("GET", path, headers=headers)
            response = conn.getresponse()
            body = json.loads(response.read())
            if response.status != 200:
                raise RuntimeError(f"raw walk: {response.status} {body}")
            seen += len(body["items"])
            cursor = body["next_cursor"]
            if not cursor:
                break
    finally:
        conn.close()
    return time.perf_counter() - wall, time.process_time() - cpu, seen


async def _httpx_walk(url: str) -> tuple[float, float, int]:
    wall, cpu = time.perf_counter(), time.process_time()
    seen = 0
    params: dict[str, str | int] = {"limit": LIMIT}
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(base_url=url, headers=headers) as client:
        while True:
            response = await client.get("/v1/sessions", params=params)
            body = json.loads(response.content)
            if response.status_code != 200:
                raise RuntimeError(f"httpx walk: {response.status_code} {body}")
            seen += len(body["items"])
            if not body["next_cursor"]:
                break
            params = {"limit": LIMIT, "cursor": body["next_cursor"]}
    return time.perf_counter() - wall, time.process_time() - cpu, seen


def httpx_walk(url: str) -> tuple[float, float, int]:
    """(wall, CPU, sessions) of one walk with a plain `httpx.AsyncClient` (the HTTP library
    the client uses), parsing each page with `json.loads` and nothing else."""
    return asyncio.run(_httpx_walk(url))


async def _first_sync(
    url: str, folder: Path
) -> tuple[tuple[float, float], tuple[float, float], int]:
    from sync.engine import SyncEngine
    from sync.profile.profile import Profile

    profile = Profile.load(folder, server=url, token=TOKEN, environ={})
    engine = await SyncEngine.open(profile, use_etag=True)
    engine.content.kick = lambda: None  # type: ignore[method-assign]  # timed apart, below
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        report = await engine.reconcile()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        index_wall, index_cpu = time.perf_counter(), time.process_time()
        while await asyncio.to_thread(engine.mirror.index_titles):
            pass
        index_wall, index_cpu = time.perf_counter() - index_wall, time.process_time() - index_cpu
    finally:
        await engine.close()
    if report.error is not None:
        raise RuntimeError(f"reconcile failed: {report.error.message}")
    return (wall, cpu), (index_wall, index_cpu), len(report.inserted)


def first_sync(url: str, folder: Path) -> dict[str, tuple[float, float, int]]:
    """(wall, CPU, sessions) of one first pass into an empty mirror, and of the title entries
    it left pending written after it."""
    (wall, cpu), (index_wall, index_cpu), n = asyncio.run(_first_sync(url, folder))
    return {"first_sync": (wall, cpu, n), "title_index": (index_wall, index_cpu, n)}


RUNNERS: dict[str, Callable[[str, Path], dict[str, tuple[float, float, int]]]] = {
    "raw_walk": lambda url, _folder: {"raw_walk": raw_walk(url)},
    "httpx_walk": lambda url, _folder: {"httpx_walk": httpx_walk(url)},
    "first_sync": first_sync,
}
MEASURES = ("raw_walk", "httpx_walk", "first_sync", "title_index")


def bench(n: int, rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="converge-bench-first-sync-") as tmp:
        root = Path(tmp)
        server = ServerProcess(root)
        try:
            populate(server.db, n)
            server.restart()
            raw_walk(server.url)  # warm the server's page cache and code paths
            runs: dict[str, list[tuple[float, float]]] = {name: [] for name in MEASURES}
            loads: list[float] = []
            for r in range(rounds):
                loads.append(os.getloadavg()[0])
                line = []
                for name, run in RUNNERS.items():
                    for measure, (wall, cpu, seen) in run(server.url, root / f"{name}-{r}").items():
                        assert seen == n, (measure, seen, n)
                        runs[measure].append((wall, cpu))
                        line.append(f"{measure} {wall:.2f} s ({cpu:.2f} CPU)")
                print(f"round {r + 1}: {', '.join(line)}, load {loads[-1]:.1f}", flush=True)
        finally:
            server.stop()
    out: dict[str, Any] = {
        "sessions": n,
        "rounds": rounds,
        "runners": list(MEASURES),
        "load_avg_1m": loads,
    }
    for name, pairs in runs.items():
        out[f"{name}_wall_s"] = [w for w, _ in pairs]
        out[f"{name}_cpu_s"] = [c for _, c in pairs]
        out[f"median_{name}_wall_s"] = statistics.median(w for w, _ in pairs)
        out[f"median_{name}_cpu_s"] = statistics.median(c for _, c in pairs)
    for floor in ("raw_walk", "httpx_walk"):
        for kind in ("wall", "cpu"):
            ours = out[f"median_first_sync_{kind}_s"]
            out[f"{kind}_ratio_to_{floor}"] = ours / out[f"median_{floor}_{kind}_s"]
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench first_sync")
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (medians kept)")
    parser.add_argument("--save", default="", help="write bench/results/first-sync-<SAVE>.json")
    args = parser.parse_args(argv)
    r = bench(args.sessions, args.rounds)
    rows = []
    for name in r["runners"]:
        wall, cpu = r[f"median_{name}_wall_s"], r[f"median_{name}_cpu_s"]
        rows.append(
            [
                name,
                f"{wall:.2f} s",
                f"{wall / r['median_raw_walk_wall_s']:.2f}x",
                f"{wall / r['median_httpx_walk_wall_s']:.2f}x",
                f"{cpu:.2f} s",
                f"{cpu / r['median_raw_walk_cpu_s']:.2f}x",
                f"{cpu / r['median_httpx_walk_cpu_s']:.2f}x",
            ]
        )
    print_table(
        f"First sync of {r['sessions']:,} sessions against raw walks (stub in its own process;"
        f" medians of {r['rounds']} interleaved rounds)",
        ["", "wall", "/ raw", "/ httpx", "client CPU", "/ raw", "/ httpx"],
        rows,
    )
    loads = r["load_avg_1m"]
    print(f"load average (1 min) over the rounds: {min(loads):.1f}-{max(loads):.1f}")
    if args.save:
        save(f"first-sync-{args.save}", {**r, "cpus": os.cpu_count()})
    return 0
