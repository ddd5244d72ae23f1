"""What a memory says, for the window's "Remembered: …" note under a reply.

A `memory.formed` event carries only the memory's id (CONTRACT §2); the text is in the
principal's memory list (`GET /v1/memories`, newest first). A memory just formed is on the
first page, so the lookup reads pages until every wanted id is found, a page limit is
reached or the list ends. Read-only, through the existing route; no new server capability.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sync.api.client import ApiClient

PAGE_SIZE = 100
MAX_PAGES = 5


async def memory_texts(
    api: ApiClient, memory_ids: Iterable[str], *, max_pages: int = MAX_PAGES
) -> dict[str, str]:
    """The text of each wanted memory that could be found (missing ids are left out: a
    memory can be purged with its conversation, or be older than `max_pages` pages)."""
    from sync.api.body import json_of  # httpx loads with the client, not with this module

    wanted = set(memory_ids)
    found: dict[str, str] = {}
    cursor: str | None = None
    for _ in range(max_pages):
        if not wanted - found.keys():
            break
        params: dict[str, Any] = {"limit": PAGE_SIZE}
        if cursor:
            params["cursor"] = cursor
        response = await api.request(
            "GET",
            "/v1/memories",
            params=params,
            has_cursor=bool(cursor),
            cap=api.bounds.index_page_bytes,
        )
        body = json_of(response)
        items = body.get("items") if isinstance(body, Mapping) else None
        if not isinstance(items, list):
            break
        for item in items:
            if not isinstance(item, Mapping):
                continue
            memory_id, text = item.get("id"), item.get("text")
            if memory_id in wanted and isinstance(memory_id, str) and isinstance(text, str):
                found[memory_id] = text
        next_cursor = body.get("next_cursor")
        if not isinstance(next_cursor, str) or not next_cursor:
            break
        cursor = next_cursor
    return found
