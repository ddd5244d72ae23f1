"""`python -m bench caps`: what the caps on clients (docs/server.md "Load bounds") cost.

Two figures, each measured interleaved (one sample of every variant per round, so a busy
machine slows all of them alike):

1. over HTTP: `POST /v1/sessions` and `GET /v1/sessions?limit=50` on two real servers
   (`ServerThread`, SQLite files in a temp dir), one with the write rate limit on (the
   default) and one with `write_rate_limit=False`; the difference is the buckets' work;
2. in process: one ASGI request through `RateLimitMiddleware` (enabled, a known token) and
   through `BodyLimitMiddleware` (with its deadline), and through `ObserveMiddleware` over
   `MetricsEndpoint` (request id, latency observation, the `/metrics` door), against the
   bare inner app, in microseconds: the price of each layer alone, with no socket or
   database around it. `--asgi-only --name NAME` measures this part alone.

The held-connection caps (`IndexWatches.admit`, `RunFeeds.reserve`) are a dictionary update
each and are not measured separately.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx

from bench.report import print_table, save, summarize_ms


def _http(rounds: int, folder: Path) -> dict[str, Any]:
    from server_stub.config import ServerSettings
    from server_stub.runner import ServerThread

    base = ServerSettings(agent_delay=0.0, maintenance_interval=3600.0)
    variants = {"limit on": True, "limit off": False}
    servers = {
        name: ServerThread(
            replace(
                base,
                database_url=f"sqlite:///{folder / f'{i}.sqlite3'}",
                artifacts_dir=folder / f"objects{i}",
                write_rate_limit=enabled,
            )
        ).start()
        for i, (name, enabled) in enumerate(variants.items())
    }
    clients = {
        name: httpx.Client(base_url=s.url, headers={"Authorization": "Bearer dev-alice"})
        for name, s in servers.items()
    }
    samples: dict[str, list[float]] = {f"{v} {k}": [] for v in ("POST", "GET") for k in variants}
    try:
        order = list(clients.items())
        for round_no in range(rounds + 20):
            order.reverse()  # neither server is always the first of a round
            for name, client in order:
                for verb in ("POST", "GET"):
                    start = time.perf_counter()
                    if verb == "POST":
                        response = client.post("/v1/sessions", json={})
                    else:
                        response = client.get("/v1/sessions", params={"limit": 50})
                    elapsed = time.perf_counter() - start
                    assert response.status_code in (200, 201), response.text
                    if round_no >= 20:  # warm-up rounds are not kept
                        samples[f"{verb} {name}"].append(elapsed)
    finally:
        for client in clients.values():
            client.close()
        for server in servers.values():
            server.stop()
    return {name: summarize_ms(values) for name, values in samples.items()}


def _asgi(rounds: int) -> dict[str, Any]:
    from server_stub.config import ServerSettings
    from server_stub.edge.auth import DEV_PRINCIPALS, TokenTable
    from server_stub.edge.bodylimit import BodyLimitMiddleware
    from server_stub.edge.ratelimit import RateLimitMiddleware
    from server_stub.observe.metrics import Metrics
    from server_stub.observe.requests import MetricsEndpoint, ObserveMiddleware

    async def inner(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "http.response.start", "status": 201, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    settings = ServerSettings(write_burst=10**12, write_rate=10**12)
    metrics = Metrics()
    layers: dict[str, Callable[[Any, Any, Any], Awaitable[None]]] = {
        "bare app": inner,
        "RateLimitMiddleware": RateLimitMiddleware(
            inner, settings, lookup=TokenTable(DEV_PRINCIPALS).lookup
        ),
        "BodyLimitMiddleware": BodyLimitMiddleware(inner),
        # Request id, latency observation and the /metrics door (docs/server.md "Metrics").
        "ObserveMiddleware+MetricsEndpoint": ObserveMiddleware(
            MetricsEndpoint(inner, metrics, ()), metrics, {}
        ),
    }
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/v1/sessions",
        "headers": [(b"authorization", b"Bearer dev-alice"), (b"content-length", b"2")],
        "client": ("127.0.0.1", 50000),
    }

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(_message: Any) -> None:
        return None

    async def run() -> dict[str, list[float]]:
        batch = 200
        samples: dict[str, list[float]] = {name: [] for name in layers}
        for _ in range(rounds):
            for name, layer in layers.items():
                start = time.perf_counter()
                for _ in range(batch):
                    await layer(scope, receive, send)
                samples[name].append((time.perf_counter() - start) / batch)
        return samples

    measured = asyncio.run(run())
    return {
        name: {
            "median_us": round(sorted(v)[len(v) // 2] * 1e6, 2),
            "p95_us": round(sorted(v)[int(len(v) * 0.95)] * 1e6, 2),
            "n": len(v),
        }
        for name, v in measured.items()
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench caps")
    parser.add_argument("--rounds", type=int, default=300, help="HTTP samples per variant")
    parser.add_argument("--asgi-rounds", type=int, default=500, help="ASGI batches per layer")
    parser.add_argument("--asgi-only", action="store_true", help="skip the HTTP measurement")
    parser.add_argument("--name", default="caps", help="results file (bench/results/NAME.json)")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    http: dict[str, Any] = {}
    if not args.asgi_only:
        with tempfile.TemporaryDirectory(prefix="converge-bench-caps-") as tmp:
            http = _http(args.rounds, Path(tmp))
    asgi = _asgi(args.asgi_rounds)
    load_after = os.getloadavg()[0]
    figures = {
        "http": http,
        "asgi": asgi,
        "cpus": os.cpu_count(),
        "load_avg_1m_before": load_before,
        "load_avg_1m_after": load_after,
    }
    if http:
        print_table(
            "Over HTTP, interleaved (ms)",
            ["request", "median", "p95", "n"],
            [[name, v["median_ms"], v["p95_ms"], v["n"]] for name, v in http.items()],
        )
    print_table(
        "One ASGI request through one layer, in process (µs)",
        ["layer", "median", "p95", "batches of 200"],
        [[name, v["median_us"], v["p95_us"], v["n"]] for name, v in asgi.items()],
    )
    print(f"load average (1 min) before/after: {load_before:.1f} / {load_after:.1f}")
    save(args.name, figures)
    return 0
