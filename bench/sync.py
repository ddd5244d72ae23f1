"""`python -m bench sync`: reconcile cost against the real stub server on loopback.

Figures, for each index size (default 10,000 and 100,000 sessions):

- cold: one pass into an empty mirror (walk every page, insert every row);
- warm, ETag: a pass over an unchanged index with the stored ETag (one 304 request);
- warm, no ETag: the same without the ETag (walk every page, write nothing);
- floor, page walk: the same pages fetched by a bare `ApiClient` loop, no mirror at all;
- floor, executemany: the N-row upsert alone, raw `sqlite3` and through `Mirror.apply`.

The server's sessions are inserted straight into its SQLite file (the public API would need
N requests just to set up); the rows are what `POST /v1/sessions` would have written.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.report import print_table, save
from sync.api.client import ApiClient
from sync.engine import SyncEngine
from sync.mirror.store import Mirror
from sync.profile.profile import Profile
from sync.wire.models import SessionView

TOKEN = "dev-alice"


def _ts(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _fake_views(n: int) -> list[SessionView]:
    base = datetime(2026, 1, 1, tzinfo=UTC)
    out = []
    for i in range(n):
        at = _ts(base + timedelta(seconds=i))
        out.append(SessionView(f"ses_bench{i:08d}", f"Conversation {i}", at, at, None, None))
    return out


def populate_server_db(db_path: Path, n: int) -> None:
    """Insert n sessions for dev-alice (acme/alice) and bump the principal's index version."""
    views = _fake_views(n)
    conn = sqlite3.connect(db_path, timeout=30)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(
            "INSERT INTO sessions (id, tenant, principal, title, title_state, created_at,"
            " updated_at, last_sequence) VALUES (?, 'acme', 'alice', ?, 'stored', ?, ?, 0)",
            [(v.id, v.title, v.created_at, v.updated_at) for v in views],
        )
        conn.execute(
            "INSERT INTO principal_versions (tenant, principal, version)"
            " VALUES ('acme', 'alice', 1)"
            " ON CONFLICT (tenant, principal) DO UPDATE SET version = version + 1"
        )
        conn.execute("COMMIT")
    finally:
        conn.close()


async def _pass(url: str, folder: Path, *, use_etag: bool) -> tuple[float, Any]:
    profile = Profile.load(folder, server=url, token=TOKEN, environ={})
    engine = await SyncEngine.open(profile, use_etag=use_etag)
    try:
        started = time.perf_counter()
        report = await engine.reconcile()
        elapsed = time.perf_counter() - started
    finally:
        await engine.close()
    if report.error is not None:
        raise RuntimeError(f"reconcile failed: {report.error.message}")
    return elapsed, report


async def _raw_walk(url: str) -> tuple[float, int]:
    async with ApiClient(url, TOKEN) as api:
        started = time.perf_counter()
        cursor: str | None = None
        pages = 0
        while True:
            page = await api.list_sessions(limit=200, cursor=cursor)
            assert page is not None
            pages += 1
            if page.next_cursor is None:
                return time.perf_counter() - started, pages
            cursor = page.next_cursor


def _raw_executemany(folder: Path, n: int) -> float:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "raw.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT, created_at TEXT, updated_at"
        " TEXT, active_run_id TEXT, last_run_id TEXT, synced_at FLOAT)"
    )
    rows = [
        (v.id, v.title, v.created_at, v.updated_at, v.active_run_id, v.last_run_id, 0.0)
        for v in _fake_views(n)
    ]
    started = time.perf_counter()
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET"
        " title=excluded.title, updated_at=excluded.updated_at",
        rows,
    )
    conn.execute("COMMIT")
    elapsed = time.perf_counter() - started
    conn.close()
    return elapsed


def _mirror_apply(folder: Path, n: int) -> float:
    folder.mkdir(parents=True, exist_ok=True)
    mirror = Mirror.open(folder / "apply.sqlite3")
    views = _fake_views(n)
    try:
        started = time.perf_counter()
        mirror.apply(views)
        return time.perf_counter() - started
    finally:
        mirror.close()


def bench_size(n: int, repeats: int) -> dict[str, Any]:
    from server_stub.config import ServerSettings
    from server_stub.runner import ServerThread

    with tempfile.TemporaryDirectory(prefix="converge-bench-sync-") as tmp:
        root = Path(tmp)
        db = root / "server.sqlite3"
        settings = ServerSettings(
            database_url=f"sqlite:///{db}",
            artifacts_dir=root / "objects",
            control=True,
            agent_delay=0.0,
            maintenance_interval=3600.0,
        )
        with ServerThread(settings) as server:
            populate_server_db(db, n)
            url = server.url
            cold: list[float] = []
            warm_etag: list[float] = []
            warm_plain: list[float] = []
            walks: list[float] = []
            pages = 0
            requests_etag = 0
            for r in range(repeats):
                folder = root / f"profile{r}"
                elapsed, report = asyncio.run(_pass(url, folder, use_etag=True))
                assert len(report.inserted) == n, (len(report.inserted), n)
                cold.append(elapsed)
                pages = report.pages
                elapsed, report = asyncio.run(_pass(url, folder, use_etag=True))
                assert report.not_modified
                requests_etag = report.requests
                warm_etag.append(elapsed)
                elapsed, report = asyncio.run(_pass(url, folder, use_etag=False))
                assert not report.changed
                warm_plain.append(elapsed)
                walk, _ = asyncio.run(_raw_walk(url))
                walks.append(walk)
            raw = [_raw_executemany(root / f"raw{r}", n) for r in range(repeats)]
            applied = [_mirror_apply(root / f"apply{r}", n) for r in range(repeats)]
    return {
        "sessions": n,
        "pages": pages,
        "cold_s": min(cold),
        "warm_etag_s": min(warm_etag),
        "warm_etag_requests": requests_etag,
        "warm_no_etag_s": min(warm_plain),
        "floor_page_walk_s": min(walks),
        "floor_executemany_raw_s": min(raw),
        "floor_mirror_apply_s": min(applied),
        "repeats": repeats,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench sync")
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated index sizes")
    parser.add_argument("--repeats", type=int, default=2, help="runs per size (best is kept)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    load_before = os.getloadavg()[0]
    results = [bench_size(n, args.repeats if n <= 20_000 else 1) for n in sizes]
    load_after = os.getloadavg()[0]
    rows = [
        [
            f"{r['sessions']:,}",
            r["pages"],
            f"{r['cold_s']:.2f}",
            f"{r['warm_etag_s'] * 1000:.1f} ms ({r['warm_etag_requests']} req)",
            f"{r['warm_no_etag_s']:.2f}",
            f"{r['floor_page_walk_s']:.2f}",
            f"{r['floor_executemany_raw_s']:.3f}",
            f"{r['floor_mirror_apply_s']:.3f}",
        ]
        for r in results
    ]
    print_table(
        "Reconcile against the stub on loopback (seconds unless noted; best of the repeats)",
        [
            "sessions",
            "pages",
            "cold",
            "warm, ETag",
            "warm, no ETag",
            "floor: walk",
            "floor: raw executemany",
            "floor: Mirror.apply",
        ],
        rows,
    )
    print(f"load average (1 min) before/after: {load_before:.1f} / {load_after:.1f}")
    save(
        "sync",
        {
            "results": results,
            "cpus": os.cpu_count(),
            "load_avg_1m_before": load_before,
            "load_avg_1m_after": load_after,
        },
    )
    return 0
