"""`python -m bench watch`: what held index watches (CONTRACT §9.1) cost the stub server.

One run against a real `converge-server` child process (so that its memory and threads are
its own), on a temp SQLite file, with a principals file of one measured user plus one user
per watch:

1. the list latency of the measured user's first page (limit 50) with no watch open;
2. W watches opened (default 300), each by a different user, each held by the server
   (`If-None-Match` matching, `Prefer: wait=55`); the server's memory (RSS) and thread
   count before and after give the cost per watch;
3. the same list latency again while the W watches are held;
4. the wake-up latency: K more watches of the measured user, then a session created as
   that user; the time from sending the create to each watch's 200 (an upper bound of
   "from the commit"), repeated R times;
5. the watches of the other users must all still be held (none woken by the measured
   user's changes), then the server is stopped while they are held: how long it takes to
   answer them all (304) and exit.

Samples of (1) and (3) are taken the same way, one keep-alive connection, so the only
difference is the W held requests.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import psutil

from bench import report
from qa.server import LISTENING, server_command

MEASURED = "bench-user"
WAIT = 55


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench watch", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--watches", type=int, default=300, help="held watches (W)")
    parser.add_argument("--samples", type=int, default=300, help="timed list requests per phase")
    parser.add_argument("--sessions", type=int, default=100, help="the measured user's sessions")
    parser.add_argument("--wakes", type=int, default=20, help="wake-up rounds (R)")
    parser.add_argument("--wake-watches", type=int, default=5, help="watches woken per round (K)")
    parser.add_argument("--name", default="watch", help="results file (bench/results/NAME.json)")
    return parser.parse_args(argv)


def _principals_file(path: Path, watches: int) -> None:
    lines = []
    for token in [MEASURED, *(f"watcher-{i}" for i in range(watches))]:
        lines += [
            "[[principal]]",
            f'token = "{token}"',
            'tenant = "bench"',
            f'principal = "{token}"',
            'scopes = ["*"]',
            "",
        ]
    path.write_text("\n".join(lines))


class Child:
    """The server child process."""

    def __init__(self, workdir: Path, principals: Path) -> None:
        self.workdir = workdir
        self.principals = principals
        self.proc: asyncio.subprocess.Process | None = None
        self.url = ""

    async def start(self) -> str:
        log = (self.workdir / "server.log").open("ab")
        self.proc = await asyncio.create_subprocess_exec(
            *server_command(),
            "--port",
            "0",
            "--agent-delay",
            "0",
            "--database",
            f"sqlite:///{self.workdir / 'server.sqlite3'}",
            "--principals",
            str(self.principals),
            "--log-level",
            "warning",
            stdout=asyncio.subprocess.PIPE,
            stderr=log,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        log.close()
        assert self.proc.stdout is not None
        line = (await asyncio.wait_for(self.proc.stdout.readline(), 60)).decode()
        match = LISTENING.search(line)
        if match is None:
            raise RuntimeError(f"the server did not start: {line!r}")
        self.url = match.group(1)
        return self.url

    def process(self) -> psutil.Process:
        assert self.proc is not None
        return psutil.Process(self.proc.pid)

    async def stop(self) -> float:
        """SIGTERM; seconds until the process exited."""
        assert self.proc is not None
        started = time.perf_counter()
        self.proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(self.proc.wait(), 60)
        return time.perf_counter() - started


async def _list_latency(client: httpx.AsyncClient, samples: int) -> list[float]:
    headers = {"Authorization": f"Bearer {MEASURED}"}
    out = []
    for i in range(samples + 20):
        start = time.perf_counter()
        response = await client.get("/v1/sessions", params={"limit": 50}, headers=headers)
        elapsed = time.perf_counter() - start
        assert response.status_code == 200, response.text
        if i >= 20:
            out.append(elapsed)
    return out


async def _etag(client: httpx.AsyncClient, token: str) -> str:
    response = await client.get("/v1/sessions", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    return str(response.headers["ETag"])


def _watch(client: httpx.AsyncClient, token: str, etag: str) -> asyncio.Task[httpx.Response]:
    headers = {
        "Authorization": f"Bearer {token}",
        "If-None-Match": etag,
        "Prefer": f"wait={WAIT}",
    }
    return asyncio.ensure_future(client.get("/v1/sessions", params={"limit": 1}, headers=headers))


async def _until_connections(proc: psutil.Process, count: int) -> None:
    """Until the server holds `count` established connections (each watch is one)."""
    deadline = time.monotonic() + 60
    while sum(1 for c in proc.net_connections() if c.status == "ESTABLISHED") < count:
        if time.monotonic() > deadline:
            raise RuntimeError("the watches did not all connect")
        await asyncio.sleep(0.05)


async def _run(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    principals = workdir / "principals.toml"
    _principals_file(principals, args.watches)
    child = Child(workdir, principals)
    url = await child.start()
    proc = child.process()
    limits = httpx.Limits(max_connections=args.watches + 50, max_keepalive_connections=None)
    timeout = httpx.Timeout(10.0, read=WAIT + 15)
    async with (
        httpx.AsyncClient(base_url=url, timeout=timeout) as lister,
        httpx.AsyncClient(base_url=url, timeout=timeout, limits=limits) as watchers,
    ):
        auth = {"Authorization": f"Bearer {MEASURED}"}
        for _ in range(args.sessions):
            assert (await lister.post("/v1/sessions", json={}, headers=auth)).status_code == 201
        before_list = await _list_latency(lister, args.samples)
        etags = {f"watcher-{i}": await _etag(watchers, f"watcher-{i}") for i in range(args.watches)}
        rss_before = proc.memory_info().rss
        threads_before = proc.num_threads()
        held = [_watch(watchers, token, etag) for token, etag in etags.items()]
        await _until_connections(proc, args.watches + 1)
        rss_after = proc.memory_info().rss
        threads_after = proc.num_threads()
        with_list = await _list_latency(lister, args.samples)

        wakes: list[float] = []
        for _ in range(args.wakes):
            etag = await _etag(watchers, MEASURED)
            mine = [_watch(watchers, MEASURED, etag) for _ in range(args.wake_watches)]
            await _until_connections(proc, args.watches + args.wake_watches + 1)
            sent = time.perf_counter()
            create = asyncio.ensure_future(lister.post("/v1/sessions", json={}, headers=auth))
            for response in await asyncio.gather(*mine):
                assert response.status_code == 200, response.status_code
            arrived = time.perf_counter() - sent
            assert (await create).status_code == 201
            wakes.append(arrived)
        others_still_held = sum(1 for w in held if not w.done())
        stop_s = await child.stop()
        answers = await asyncio.gather(*held, return_exceptions=True)
        released = sum(1 for a in answers if isinstance(a, httpx.Response) and a.status_code == 304)

    per_watch = (rss_after - rss_before) / max(1, args.watches)
    return {
        "watches": args.watches,
        "list_without": _summary(before_list),
        "list_with": _summary(with_list),
        "rss_before_mb": round(rss_before / 2**20, 1),
        "rss_after_mb": round(rss_after / 2**20, 1),
        "rss_per_watch_kb": round(per_watch / 1024, 1),
        "threads_before": threads_before,
        "threads_after": threads_after,
        "wake": _summary(wakes),
        "wake_watches_per_round": args.wake_watches,
        "others_still_held": others_still_held,
        "shutdown_s": round(stop_s, 3),
        "released_by_shutdown": released,
    }


def _summary(samples: list[float]) -> dict[str, float]:
    return {
        **report.summarize_ms(samples),
        "min_ms": round(min(samples) * 1000, 3),
        "max_ms": round(max(samples) * 1000, 3),
        "mean_ms": round(statistics.fmean(samples) * 1000, 3),
    }


_COLUMNS = ("median_ms", "p95_ms", "max_ms", "n")


def _print(fig: dict[str, Any]) -> None:
    w = fig["watches"]
    report.print_table(
        f"Session list (first page, limit 50) with and without {w} held watches",
        ["phase", "median ms", "p95 ms", "max ms", "n"],
        [
            ["no watch", *(fig["list_without"][k] for k in _COLUMNS)],
            [f"{w} watches held", *(fig["list_with"][k] for k in _COLUMNS)],
        ],
    )
    report.print_table(
        "Cost of the held watches (server process)",
        ["figure", "value"],
        [
            ["RSS before / after (MB)", f"{fig['rss_before_mb']} / {fig['rss_after_mb']}"],
            ["RSS per watch (KB)", fig["rss_per_watch_kb"]],
            ["threads before / after", f"{fig['threads_before']} / {fig['threads_after']}"],
            ["other users' watches still held after the wake rounds", fig["others_still_held"]],
            ["shutdown with them held (s)", fig["shutdown_s"]],
            ["answered 304 by the shutdown", fig["released_by_shutdown"]],
        ],
    )
    wake = fig["wake"]
    report.print_table(
        f"Wake-up: create sent → {fig['wake_watches_per_round']} watches of the user answered 200",
        ["median ms", "p95 ms", "max ms", "n"],
        [[wake["median_ms"], wake["p95_ms"], wake["max_ms"], wake["n"]]],
    )


def main(argv: list[str]) -> int:
    args = _parse(argv)
    with tempfile.TemporaryDirectory(prefix="converge-bench-watch-") as tmp:
        figures = asyncio.run(_run(args, Path(tmp)))
    _print(figures)
    report.save(args.name, figures)
    return 0
