"""`python -m bench device_cost`: what one watching device spends to follow one change.

Convergence with many devices is bounded by the devices' own CPU: each change wakes every
device's watch, and a worker process of `converge qa` carries many devices on cores shared
with the server. This benchmark measures the device half of that alone, so a change to the
engine can be judged without the herd's noise:

1. a `converge-server` child (SQLite, agent delay 0) with `--sessions` conversations, each
   with one finished turn;
2. one `SyncEngine` in this process, as the window runs it (page size 200, the index watch
   open), synced and its transcripts mirrored;
3. `--changes` changes made by a writer thread over its own HTTP client, in turn: a turn
   in an existing conversation, a new conversation with one turn, a delete; after each, the
   writer waits for the server to settle (the run finished) and the device for its mirror
   to hold exactly the server's index and every transcript to be current, then for the
   engine to be quiet.

Per change it reports the device's CPU time (this process's, minus the writer thread's),
its requests, passes, mirror transactions and SQL statements. Counts do not depend on the
machine's load; the CPU time does a little (say the load with it).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from bench import report
from bench.child_server import start_server
from sync import EngineState, Profile, SyncEngine, TriggerReason

TOKEN = "dev-alice"


def _parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench device_cost", description=__doc__)
    p.add_argument("--sessions", type=int, default=50)
    p.add_argument("--changes", type=int, default=60)
    p.add_argument(
        "--agent-delay",
        type=float,
        default=0.0,
        help="the scripted agent's pause between steps (the app's server: 0.2)",
    )
    p.add_argument("--name", default="device-cost", help="results file suffix")
    p.add_argument("--label", default="", help="what was measured (recorded as is)")
    return p.parse_args(argv)


class Writer:
    """The other device: a plain HTTP client on a thread of its own, its CPU time kept."""

    def __init__(self, url: str) -> None:
        self.client = httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30
        )
        self.cpu = 0.0
        self.created: list[str] = []

    def _turn(self, session_id: str, text: str) -> None:
        run = self.client.post(
            f"/v1/sessions/{session_id}/runs",
            json={"input": {"role": "user", "content": [{"type": "text", "text": text}]}},
        )
        run.raise_for_status()
        run_id = run.json()["id"]
        while self.client.get(f"/v1/runs/{run_id}").json()["status"] not in (
            "completed",
            "failed",
            "cancelled",
        ):
            time.sleep(0.005)

    def new_conversation(self, text: str) -> str:
        created = self.client.post("/v1/sessions", json={})
        created.raise_for_status()
        session_id: str = created.json()["id"]
        self._turn(session_id, text)
        self.created.append(session_id)
        return session_id

    def change(self, i: int) -> None:
        """Change i: a turn, a new conversation, or a delete (in that rotation)."""
        started = time.thread_time()
        kind = i % 3
        if kind == 1 or not self.created:
            self.new_conversation(f"conversation {i}: the fox jumps over the lazy dog")
        elif kind == 0:
            self._turn(self.created[-1], f"turn {i}: and then what happened next")
        else:
            self.client.delete(f"/v1/sessions/{self.created.pop(0)}").raise_for_status()
        self.cpu += time.thread_time() - started

    def index(self) -> dict[str, str]:
        """The server's whole index: id → updated_at."""
        page = self.client.get("/v1/sessions", params={"limit": 200}).json()
        assert page["next_cursor"] is None, "the benchmark keeps the index to one page"
        return {item["id"]: item["updated_at"] for item in page["items"]}


class Counts:
    """Requests, mirror transactions and statements of the device."""

    def __init__(self) -> None:
        self.by = Counter[str]()
        self.paused = False  # the benchmark's own reads are not the device's

    def watch(self, engine: SyncEngine) -> None:
        """Count the mirror's transactions by kind, and the statements they run."""
        mirror: Any = engine.mirror
        transaction = mirror._transaction

        @contextlib.contextmanager
        def counted(pool: list[Any], begin: str) -> Iterator[Any]:
            self.count("read_tx" if pool is mirror._readers else "write_tx")
            with transaction(pool, begin) as conn:
                conn.set_trace_callback(self.statement)
                try:
                    yield conn
                finally:
                    conn.set_trace_callback(None)

        mirror._transaction = counted

    def statement(self, sql: str) -> None:
        """The device's own statements: SQLite also traces those a virtual table runs
        for one of them (FTS5's, prefixed `--`), which are that statement's cost."""
        if not sql.startswith("--"):
            self.count("statements")

    def count(self, what: str) -> None:
        if not self.paused:
            self.by[what] += 1


class CountingTransport(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport, counts: Counts) -> None:
        self.inner, self.counts = inner, counts

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.counts.by.update(["requests"])
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


class Probe:
    """The benchmark's own looks at the device, their CPU time kept apart (the loop's
    thread, never a worker thread, so `thread_time` sees all of it)."""

    def __init__(self, engine: SyncEngine, writer: Writer, counts: Counts) -> None:
        self.engine, self.writer, self.counts = engine, writer, counts
        self.cpu = 0.0

    def converged(self, want: dict[str, str]) -> bool:
        started = time.thread_time()
        self.counts.paused = True
        try:
            mirror = self.engine.mirror
            rows = {row.id: row.updated_at for row in mirror.rows()}
            return rows == want and not mirror.stale_transcripts(1)
        finally:
            self.counts.paused = False
            self.cpu += time.thread_time() - started

    def server_index(self) -> dict[str, str]:
        started = time.thread_time()
        try:
            return self.writer.index()
        finally:
            self.cpu += time.thread_time() - started

    async def settled(self, changed: asyncio.Event) -> None:
        """Until the mirror holds the server's index and every transcript is current, and
        the engine is quiet (no pass running, no content phase)."""
        want = self.server_index()
        while True:
            changed.clear()
            if self.converged(want):
                await self.engine.content.wait_idle()
                if self.engine.status.state is not EngineState.SYNCING:
                    return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), 0.5)


async def _measure(url: str, args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    writer = Writer(url)
    for i in range(args.sessions):
        await asyncio.to_thread(writer.new_conversation, f"seeded {i}: hello there")
    writer.created.clear()  # the seeded ones stay; deletes take the new ones
    counts = Counts()
    profile = Profile.load(folder / "profile", server=url, token=TOKEN, environ={})
    engine = await SyncEngine.open(
        profile, transport=CountingTransport(httpx.AsyncHTTPTransport(), counts)
    )
    changed = asyncio.Event()
    engine.subscribe(lambda _event: changed.set())  # rows, transcripts, status
    try:
        engine.trigger(TriggerReason.CONNECT)
        engine.start_watch()
        probe = Probe(engine, writer, counts)
        await probe.settled(changed)
        counts.watch(engine)
        counts.by.clear()
        passes0 = engine.passes_started
        writer.cpu = probe.cpu = 0.0
        cpu0, wall0 = time.process_time(), time.perf_counter()
        per_change: list[float] = []
        for i in range(args.changes):
            c0, w0, p0 = time.process_time(), writer.cpu, probe.cpu
            await asyncio.to_thread(writer.change, i)
            await probe.settled(changed)
            per_change.append(time.process_time() - c0 - (writer.cpu - w0) - (probe.cpu - p0))
        cpu = time.process_time() - cpu0 - writer.cpu - probe.cpu
        wall = time.perf_counter() - wall0
        passes = engine.passes_started - passes0
    finally:
        await engine.close()
        writer.client.close()
    n = args.changes
    return {
        "changes": n,
        "cpu_ms_per_change": round(cpu * 1000 / n, 2),
        "cpu_ms_per_change_median": round(statistics.median(per_change) * 1000, 2),
        "wall_s": round(wall, 2),
        "requests_per_change": round(counts.by["requests"] / n, 2),
        "passes_per_change": round(passes / n, 2),
        "write_tx_per_change": round(counts.by["write_tx"] / n, 2),
        "read_tx_per_change": round(counts.by["read_tx"] / n, 2),
        "statements_per_change": round(counts.by["statements"] / n, 2),
        "writer_cpu_ms_per_change": round(writer.cpu * 1000 / n, 2),
        "probe_cpu_ms_per_change": round(probe.cpu * 1000 / n, 2),
    }


@contextlib.contextmanager
def _server(folder: Path, agent_delay: float) -> Iterator[str]:
    proc, log, url = start_server(
        f"sqlite:///{folder / 'server.sqlite3'}",
        folder,
        "server.log",
        ("--agent-delay", str(agent_delay)),
    )
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()
        if proc.stdout is not None:
            proc.stdout.close()


def main(argv: list[str]) -> int:
    args = _parse(argv)

    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp, _server(Path(tmp), args.agent_delay) as url:
        figures = asyncio.run(_measure(url, args, Path(tmp)))
    figures.update(
        sessions=args.sessions,
        agent_delay=args.agent_delay,
        label=args.label,
        load_average_before=[round(x, 2) for x in load],
        threads=threading.active_count(),
    )
    for key, value in figures.items():
        print(f"{key:28s} {value}")
    report.save(args.name, figures)
    return 0
