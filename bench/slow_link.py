"""`python -m bench slow_link`: how many `converge sync` runs bring a whole history's
transcripts over a slow link, and how long each run takes (CONTRACT §11, docs/sync.md
"The content phase").

A server process (`bench.ui.ServerProcess`) is seeded straight in its database with
`--conversations` conversations (default 10,000) of `--messages` user messages each (default
6, one event page each; `bench.search.populate`). A loopback proxy in front of it adds the
link's latency: every chunk, each way, is held half of `--rtt-ms` (default 300), order kept,
and a new connection's first request one round trip more (the TCP handshake); bandwidth is
not limited. Then `converge sync --json` runs as a user runs it (a subprocess, one fresh
profile) until no transcript is left or `--max-runs`; each run's wall time (interpreter
start included), conversations fetched and left are printed, with the rate per second of
the runs that fetched all the time (those whose index walk was one 304).

Figures go to `bench/results/slow_link.json` for `docs/performance.md`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bench.report import print_table, save
from bench.search import populate
from bench.ui import ServerProcess

TOKEN = "dev-alice"


class LatencyProxy:
    """A loopback TCP proxy that delays what it forwards, on its own thread's loop."""

    def __init__(self, upstream_url: str, rtt: float) -> None:
        parts = urlsplit(upstream_url)
        self._upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self._rtt = rtt
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self.connections = 0
        self.url = ""

    def start(self) -> LatencyProxy:
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(self._listen(), self._loop)
        self.url = future.result(10)
        return self

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _close(self) -> None:
        if self._server is not None:
            self._server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _listen(self) -> str:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            up_reader, up_writer = await asyncio.open_connection(*self._upstream)
        except OSError:
            writer.close()
            return
        with contextlib.suppress(OSError):
            await asyncio.gather(
                self._pipe(reader, up_writer, self._rtt), self._pipe(up_reader, writer, 0.0)
            )
        for w in (writer, up_writer):
            w.close()

    async def _pipe(
        self, source: asyncio.StreamReader, sink: asyncio.StreamWriter, first_extra: float
    ) -> None:
        """Forward `source` to `sink`, each chunk half a round trip late, order kept."""
        loop = asyncio.get_running_loop()
        chunks: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def read() -> None:
            extra = first_extra
            try:
                while data := await source.read(65536):
                    chunks.put_nowait((loop.time() + self._rtt / 2 + extra, data))
                    extra = 0.0
            finally:
                chunks.put_nowait((loop.time() + self._rtt / 2, b""))

        reading = asyncio.create_task(read())
        try:
            while True:
                due, data = await chunks.get()
                await asyncio.sleep(max(0.0, due - loop.time()))
                if not data:
                    with contextlib.suppress(OSError):
                        sink.write_eof()
                    return
                sink.write(data)
                await sink.drain()
        finally:
            reading.cancel()


def _sync_once(url: str, profile: Path, token_file: Path) -> tuple[float, dict[str, Any]]:
    command = [sys.executable, "-m", "app.main", "sync", "--json"]
    command += ["--server", url, "--token-file", str(token_file), "--profile", str(profile)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONVERGE_")}
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise RuntimeError(f"converge sync exited {result.returncode}: {result.stderr.strip()}")
    report: dict[str, Any] = json.loads(result.stdout)
    return elapsed, report


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench slow_link")
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--messages", type=int, default=6)
    parser.add_argument("--rtt-ms", type=float, default=300.0)
    parser.add_argument("--max-runs", type=int, default=30)
    args = parser.parse_args(argv)
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="converge-bench-slow-link-") as tmp:
        folder = Path(tmp)
        token_file = folder / "token"
        token_file.write_text(TOKEN + "\n")
        token_file.chmod(0o600)
        server = ServerProcess(folder)
        proxy = LatencyProxy(server.url, args.rtt_ms / 1000).start()
        try:
            populate(server.db, args.conversations, args.messages)
            left = args.conversations
            while left and len(runs) < args.max_runs:
                elapsed, report = _sync_once(proxy.url, folder / "profile", token_file)
                left = report["transcripts_left"]
                runs.append(
                    {
                        "run": len(runs) + 1,
                        "seconds": round(elapsed, 2),
                        "rows_inserted": len(report["inserted"]),
                        "index_not_modified": report["not_modified"],
                        "fetched": report["transcripts_fetched"],
                        "left": left,
                    }
                )
                print(
                    f"run {len(runs)}: {elapsed:.1f} s, {report['transcripts_fetched']:,}"
                    f" fetched, {left:,} left",
                    flush=True,
                )
        finally:
            proxy.stop()
            server.stop()
    steady = [r for r in runs if r["index_not_modified"] and r["left"]]
    rate = sum(r["fetched"] for r in steady) / sum(r["seconds"] for r in steady) if steady else 0
    print_table(
        f"`converge sync` over a {args.rtt_ms:.0f} ms link: {args.conversations:,}"
        f" conversations of {args.messages} messages",
        ["run", "seconds", "rows inserted", "transcripts fetched", "left"],
        [
            [
                r["run"],
                f"{r['seconds']:.1f}",
                f"{r['rows_inserted']:,}",
                f"{r['fetched']:,}",
                f"{r['left']:,}",
            ]
            for r in runs
        ],
    )
    print(f"runs: {len(runs)}; total {sum(r['seconds'] for r in runs):.0f} s")
    print(f"transcripts per second in a run that only fetches: {rate:.1f}")
    save(
        "slow_link",
        {
            "conversations": args.conversations,
            "messages": args.messages,
            "rtt_ms": args.rtt_ms,
            "runs": runs,
            "steady_rate_per_s": round(rate, 2),
            "cpus": os.cpu_count(),
        },
    )
    return 0 if not left else 1
