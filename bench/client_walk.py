"""`python -m bench.client_walk`: the client's own CPU for a 100,000-session index walk.

500 pages of 200 sessions through `ApiClient.list_sessions` over `httpx.MockTransport` (the
pages are built once, before timing), fed to a `WalkGuard` as the reconciler does: the
HTTP stack, the bounded read (`sync.api.body`), parsing and the walk's bounds, with no server
and no mirror, so the client's share is not drowned by the server's. CPU time
(`time.process_time`), best of `--repeats`.

Run it in two checkouts (before and after a change to the client) to compare them; this is
how the cost of the bounds was measured (`docs/performance.md`, "Sync": the bounds). On a
checkout without `sync.api.bounds` it walks without the guard.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

import httpx

from bench.report import save
from sync.api.client import ApiClient

PAGES = 500
LIMIT = 200


def _item(n: int) -> dict[str, Any]:
    at = f"2026-01-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000000Z"
    return {
        "id": f"ses_bench{n:08d}",
        "title": f"Conversation {n}",
        "created_at": at,
        "updated_at": at,
        "active_run_id": None,
        "last_run_id": None,
    }


def _bodies() -> list[bytes]:
    return [
        json.dumps(
            {
                "items": [_item(p * LIMIT + i) for i in range(LIMIT)],
                "next_cursor": f"c{p + 1}" if p + 1 < PAGES else None,
            }
        ).encode()
        for p in range(PAGES)
    ]


async def walk(bodies: list[bytes]) -> float:
    """CPU seconds for one whole walk."""

    def handler(request: httpx.Request) -> httpx.Response:
        cursor = request.url.params.get("cursor")
        page = int(cursor[1:]) if cursor else 0
        return httpx.Response(200, content=bodies[page], headers={"ETag": '"v"'})

    try:
        from sync.api.bounds import DEFAULT_BOUNDS, WalkGuard
    except ImportError:  # a checkout from before the bounds
        guard = None
    else:
        b = DEFAULT_BOUNDS
        if hasattr(b, "index_walk"):  # as the reconciler builds it (the memory budget too)
            guard = b.index_walk()
        else:
            guard = WalkGuard("session index", b.walk_pages, b.walk_items, b.walk_bytes)
    transport = httpx.MockTransport(handler)
    async with ApiClient("http://bench.invalid", "token", transport=transport) as api:
        cursor: str | None = None
        started = time.process_time()
        while True:
            page = await api.list_sessions(limit=LIMIT, cursor=cursor)
            assert page is not None
            if guard is not None:
                guard.page(len(page.items), getattr(page, "nbytes", 0))
            if page.next_cursor is None:
                return time.process_time() - started
            if guard is not None:
                guard.cursor(page.next_cursor)
            cursor = page.next_cursor


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.client_walk")
    parser.add_argument("--repeats", type=int, default=5, help="walks (the best is kept)")
    parser.add_argument("--save", action="store_true", help="write bench/results/client-walk.json")
    args = parser.parse_args(argv)
    bodies = _bodies()
    times = [asyncio.run(walk(bodies)) for _ in range(max(1, args.repeats))]
    print(f"client CPU for a {PAGES * LIMIT:,}-session walk: best {min(times):.3f} s")
    if args.save:
        save("client-walk", {"sessions": PAGES * LIMIT, "cpu_s": times, "best_s": min(times)})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
