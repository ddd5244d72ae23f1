"""`python -m bench client_rss`: the peak memory of `converge sync`, against any server.

The target: the client never exceeds 300 MB RSS per pass. Three figures:

- endless: `converge sync` (a subprocess, default bounds) against the hostile endless index
  (`tests/sync/hostile_server.py`, in this process's thread): fresh cursors and full pages
  for ever, so only a bound ends the pass. Its peak RSS is `ru_maxrss` from `os.wait4` of
  that one child, and its exit status and sentence say which bound ended it.
- fat endless: the same with ~19 KB titles, 200 to a page (just under the 4 MiB a page may
  be): the most characters a walk can be made to hold per page; and a finite one of 34 such
  pages, just inside the budget, which the pass walks whole and writes.
- real: `converge sync` into an empty profile against the real stub seeded with N sessions
  (default 100,000; `bench/sync.py`'s seeding), then again with the mirror full (a warm
  pass that walks every page: the stub's ETag changes with nothing, so it is not a 304
  here only if the stored one is dropped; the bench deletes it).
- per item: the bytes a parsed, deduplicated session view holds (what a pass is charged for)
  (`tracemalloc`, items parsed from real page JSON as `ApiClient` parses them), for the
  hostile item (the endless index's) and for a real one; `sync.api.bounds.WALK_ITEM_BYTES` is
  the figure the walk's memory budget charges.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from bench.report import print_table, save
from bench.sync import TOKEN, populate_server_db
from sync.mirror import sqlite_driver
from sync.reconcile.plan import dedupe_walk
from sync.wire.models import SessionView

REPO = Path(__file__).resolve().parent.parent


#: Runs `converge sync` as its own child and prints that child's peak RSS (KiB). A child's
#: `ru_maxrss` counts the process it was forked from too, so the bench (which holds the
#: servers and their pages) must not be that process: this launcher is small.
LAUNCHER = (
    "import resource, subprocess, sys;"
    "code = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL);"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code)"
)


def _converge_sync(url: str, profile: Path, token_file: Path) -> dict[str, Any]:
    """Run `converge sync` once; its peak RSS (MB), wall time, exit status, last stderr line."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CONVERGE_")}
    command = [sys.executable, "-c", LAUNCHER, sys.executable, "-m", "app.main", "sync"]
    command += ["--server", url, "--token-file", str(token_file), "--profile", str(profile)]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, env=clean, capture_output=True, text=True)
    maxrss_kib, code = done.stdout.split()
    lines = done.stderr.strip().splitlines()
    return {
        "peak_rss_mb": round(int(maxrss_kib) / 1024, 1),  # Linux: KiB
        "seconds": round(time.perf_counter() - started, 2),
        "exit": int(code),
        "stderr": lines[-1] if lines else "",
    }


def _token_file(folder: Path) -> Path:
    path = folder / "token"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(TOKEN + "\n")
    return path


#: The fat index's title: 200 of its items fill most of a 4 MiB index page, so the walk's
#: byte budget, not its item count, is what stops it.
FAT_TITLE = 19_000


#: Pages of the fat index that fit the default budget (34 x ~3.7 MiB with the per-item charge).
FAT_PAGES = 34


def _fat_server(pages: int | None = None) -> Any:
    """The endless index, each session's title ~19 KB: the most characters per page a
    client accepts (`Bounds.index_page_bytes`), fresh ones for ever; or, with `pages`, an
    index that ends there (just inside the budget, so the pass writes them all)."""
    from tests.sync.hostile_server import HostileServer, _item

    class FatIndex(HostileServer):
        async def _answer(self, writer: Any, method: str, path: str, query: dict[str, str]) -> None:
            if path != "/v1/sessions":
                await super()._answer(writer, method, path, query)
                return
            self._counter += 1
            items = []
            for i in range(int(query.get("limit", "50"))):
                item = _item(self._counter * 1000 + i)
                item["title"] = f"{self._counter}.{i} ".ljust(FAT_TITLE, "x")
                items.append(item)
            last = pages is not None and self._counter >= pages
            page = {"items": items, "next_cursor": None if last else f"c{self._counter}"}
            await self._write(writer, "200 OK", json.dumps(page).encode(), {"ETag": '"e"'})

    return FatIndex("endless_index")


def bench_hostile(root: Path, server: Any, name: str) -> dict[str, Any]:
    server.start()
    try:
        result = _converge_sync(server.url, root / name, _token_file(root))
        result["pages_served"] = sum(1 for _, path in server.requests if path == "/v1/sessions")
    finally:
        server.stop()
    return result


def bench_endless(root: Path) -> dict[str, Any]:
    from tests.sync.hostile_server import HostileServer

    return bench_hostile(root, HostileServer("endless_index"), "endless")


def _drop_etag(profile: Path) -> None:
    (path,) = (profile / "accounts").glob("*/mirror.sqlite3")
    conn = sqlite_driver.connect(path)
    try:
        conn.execute("DELETE FROM sync_state")
        conn.commit()
    finally:
        conn.close()


def bench_real(root: Path, sessions: int) -> dict[str, Any]:
    from server_stub.config import ServerSettings
    from server_stub.runner import ServerThread

    db = root / "server.sqlite3"
    settings = ServerSettings(
        database_url=f"sqlite:///{db}",
        artifacts_dir=root / "objects",
        control=True,
        agent_delay=0.0,
        maintenance_interval=3600.0,
    )
    with ServerThread(settings) as server:
        populate_server_db(db, sessions)
        token = _token_file(root)
        profile = root / "real"
        cold = _converge_sync(server.url, profile, token)
        _drop_etag(profile)
        warm = _converge_sync(server.url, profile, token)
    return {"sessions": sessions, "cold": cold, "warm_no_etag": warm}


def _page(items: list[dict[str, Any]]) -> bytes:
    return json.dumps({"items": items, "next_cursor": None}).encode()


def _hostile_item(n: int) -> dict[str, Any]:
    from tests.sync.hostile_server import _item

    return _item(n)


def _real_item(n: int) -> dict[str, Any]:
    created = f"2026-01-{1 + n // 86400 % 28:02d}T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:"
    return {
        "id": f"ses_{n:026d}",
        "title": f"Conversation {n} about keyset pagination",
        "created_at": f"{created}{n % 60:02d}.{n % 999983:06d}Z",
        "updated_at": f"{created}{n % 60:02d}.{(n * 7919) % 999983:06d}Z",
        "active_run_id": None,
        "last_run_id": f"run_{n:026d}",
    }


def bytes_per_item(make: Any, items: int = 100_000) -> float:
    """Bytes a parsed, deduplicated walked view holds, were a pass to keep them all."""
    bodies = [_page([make(p * 200 + i) for i in range(200)]) for p in range(items // 200)]
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    kept: dict[str, SessionView] = {}
    for body in bodies:
        kept.update(dedupe_walk(SessionView.from_json(raw) for raw in json.loads(body)["items"]))
    held = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    assert len(kept) == items
    return held / items


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench client_rss")
    parser.add_argument("--sessions", type=int, default=100_000, help="the real index's size")
    parser.add_argument("--skip-endless", action="store_true", help="only the real index")
    parser.add_argument("--save", action="store_true", help="write bench/results/client-rss.json")
    parser.add_argument(
        "--label", default="", help="save (implies --save) as client-rss-LABEL.json instead"
    )
    args = parser.parse_args(argv)
    figures: dict[str, Any] = {
        "bytes_per_item": {
            "hostile": round(bytes_per_item(_hostile_item)),
            "real": round(bytes_per_item(_real_item)),
        }
    }
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="converge-bench-rss-") as tmp:
        root = Path(tmp)
        if not args.skip_endless:
            figures["endless"] = bench_endless(root)
            figures["fat_endless"] = bench_hostile(root, _fat_server(), "fat")
            figures["fat_within_budget"] = bench_hostile(root, _fat_server(FAT_PAGES), "fat34")
        figures["real"] = bench_real(root, args.sessions)
    figures["cpus"] = os.cpu_count()
    figures["load_avg_1m_before"] = load_before
    figures["load_avg_1m_after"] = os.getloadavg()[0]
    rows = []
    if "endless" in figures:
        e = figures["endless"]
        rows.append(["endless index", e["peak_rss_mb"], e["seconds"], e["exit"], e["stderr"]])
    if "fat_endless" in figures:
        e = figures["fat_endless"]
        rows.append(
            ["endless, 19 KB titles", e["peak_rss_mb"], e["seconds"], e["exit"], e["stderr"]]
        )
    if "fat_within_budget" in figures:
        e = figures["fat_within_budget"]
        label = f"{FAT_PAGES * 200:,} sessions of 19 KB titles, whole"
        rows.append([label, e["peak_rss_mb"], e["seconds"], e["exit"], e["stderr"]])
    real = figures["real"]
    for name in ("cold", "warm_no_etag"):
        r = real[name]
        label = f"{real['sessions']:,} sessions, {name.replace('_', ' ')}"
        rows.append([label, r["peak_rss_mb"], r["seconds"], r["exit"], r["stderr"][:60]])
    print_table(
        "`converge sync`, one pass, default bounds",
        ["server", "peak RSS (MB)", "seconds", "exit", "last stderr line"],
        rows,
    )
    per = figures["bytes_per_item"]
    print(f"held per walked item: hostile {per['hostile']} B, real {per['real']} B")
    if args.save or args.label:
        save(f"client-rss-{args.label}" if args.label else "client-rss", figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
