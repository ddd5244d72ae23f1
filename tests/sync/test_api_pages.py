"""A big index page is parsed off the event loop's thread: 200 sessions (about 40 KB) took
the window's UI thread 3-4 ms, 10 ms with a young collection inside, the longest step of a
cold pass (`python -m bench ui`). A small one is parsed where it arrives (a thread hop costs
more than the parse)."""

from __future__ import annotations

import asyncio
import json
import threading

import httpx
import pytest

from sync.api import client as api
from sync.api.client import ApiClient


def _index(items: int) -> httpx.MockTransport:
    body = {
        "items": [
            {
                "id": f"ses_{i:05d}",
                "title": f"A conversation about item {i} and what came of it",
                "created_at": "2026-01-01T00:00:00.000000Z",
                "updated_at": "2026-01-01T00:00:00.000000Z",
                "active_run_id": None,
                "last_run_id": None,
            }
            for i in range(items)
        ],
        "next_cursor": None,
    }
    raw = json.dumps(body).encode()
    return httpx.MockTransport(lambda _request: httpx.Response(200, content=raw))


@pytest.mark.parametrize(("items", "off_loop"), [(200, True), (5, False)])
def test_an_index_page_is_parsed_off_the_loop_when_it_is_big(
    items: int, off_loop: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[str] = []
    parse = api._session_page

    def recorded(*args: object, **kwargs: object) -> object:
        threads.append(threading.current_thread().name)
        return parse(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(api, "_session_page", recorded)

    async def go() -> None:
        async with ApiClient("http://127.0.0.1:9", "t", transport=_index(items)) as client:
            page = await client.list_sessions(limit=200)
            assert page is not None and len(page.items) == items

    asyncio.run(go())
    assert (threads != [threading.main_thread().name]) is off_loop, threads
