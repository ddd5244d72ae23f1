"""`python -m bench watch_dead`: how long the engine's index watch takes to notice a dead
connection, and what its bound costs (decision 0100).

A real stub server (in a thread) behind a loopback proxy that can go silent as a
middlebox does (`tests/sync/stall_proxy.py`: sockets open, nothing forwarded, no error).
The engine runs with its defaults (hold `DEFAULT_WAIT`, margin `WATCH_READ_MARGIN`, TCP
keepalive on its sockets) and only the watch as a trigger. Two figures, `--runs` times:

1. stall: the proxy goes silent at a random moment of a held watch; the seconds until the
   watch is in backoff (it noticed). Bound: `wait + margin`, spread by where in the hold
   the stall fell;
2. re-arm: the watch's own flow is forgotten (new connections still work), the index
   changes, a foreground pass runs; the seconds from the end of that pass until a new
   watch is held on the server.

Requests per hour are computed from the hold (one held request per `wait` seconds when
the index is quiet), not measured.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import report

TOKEN = "dev-alice"


async def _until(condition: Callable[[], bool], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the benchmark's condition never came")
        await asyncio.sleep(0.01)


async def _measure(url: str, held: Callable[[], int], root: Path, runs: int) -> dict[str, Any]:
    from sync.api.client import WATCH_READ_MARGIN
    from sync.engine import SyncEngine
    from sync.events import TriggerReason
    from sync.profile.profile import Profile
    from sync.reconcile.watch import DEFAULT_WAIT, WatchState
    from tests.sync.helpers import Server
    from tests.sync.stall_proxy import stall_proxy

    stalls: list[float] = []
    rearms: list[float] = []
    rng = random.Random(17)
    async with Server(url) as server, stall_proxy(url) as proxy:
        profile = Profile.load(root / "profile", server=proxy.url, token=TOKEN, environ={})
        engine = await SyncEngine.open(profile)
        try:
            await engine.reconcile(TriggerReason.CONNECT)
            engine.start_watch()
            for _ in range(runs):
                await _until(lambda: held() == 1)
                await asyncio.sleep(rng.uniform(0, DEFAULT_WAIT))
                proxy.stall()
                stalled = time.monotonic()
                await _until(lambda: engine.watch_state is WatchState.BACKOFF)
                stalls.append(time.monotonic() - stalled)
                proxy.heal()
            for _ in range(runs):
                await _until(lambda: held() == 1 and engine.watch_state is WatchState.WATCHING)
                proxy.forget_open_flows(carrying=b"prefer: wait=")
                await server.create()
                await _until(lambda: held() == 0)
                await engine.reconcile(TriggerReason.FOREGROUND)
                passed = time.monotonic()
                await _until(lambda: held() == 1)
                rearms.append(time.monotonic() - passed)
        finally:
            await engine.close()
    return {
        "wait_s": DEFAULT_WAIT,
        "margin_s": WATCH_READ_MARGIN,
        "held_requests_per_hour": round(3600 / DEFAULT_WAIT),
        "held_requests_per_hour_before": round(3600 / 55),
        "stall_detect_s": [round(s, 2) for s in stalls],
        "rearm_after_pass_s": [round(s, 3) for s in rearms],
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench watch_dead")
    parser.add_argument("--runs", type=int, default=3, help="stalls and re-arms measured")
    args = parser.parse_args(argv)
    from server_stub.config import ServerSettings
    from server_stub.runner import ServerThread

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        settings = ServerSettings(
            database_url=f"sqlite:///{root / 'server.sqlite3'}",
            artifacts_dir=root / "objects",
            control=True,
            agent_delay=0.0,
            maintenance_interval=3600.0,
        )
        with ServerThread(settings) as server:

            def held() -> int:
                return int(server.app.state.converge.watches.held)

            figures = asyncio.run(_measure(server.url, held, root, args.runs))
    stalls, rearms = figures["stall_detect_s"], figures["rearm_after_pass_s"]
    report.print_table(
        "index watch: a dead connection",
        ("figure", "value"),
        [
            ("hold + margin (s)", f"{figures['wait_s']} + {figures['margin_s']}"),
            ("held requests / hour (quiet index)", figures["held_requests_per_hour"]),
            ("  before (hold 55 s, margin 15 s)", figures["held_requests_per_hour_before"]),
            ("stall noticed after (s), each", ", ".join(map(str, stalls))),
            ("stall noticed after (s), median", round(statistics.median(stalls), 2)),
            ("re-armed after the pass (s), max", max(rearms)),
        ],
    )
    report.save("watch_dead", figures)
    return 0
