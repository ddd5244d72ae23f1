"""A transcript evicted for the size budget while it is being fetched is never left partly
stored and taken for whole (CONTRACT §11). The eviction removes the pages stored so far; a
later page stored after it would be the conversation's end alone, marked current, and the
window would show it without its beginning until the row moved again.

The window's `refresh` of an evicted conversation (two pages) runs while a phase stores a
newer one whose budget evicts it between the two pages: the API double holds the second
page until the eviction has committed. A real mirror file."""

from __future__ import annotations

import asyncio

import pytest

from sync.api.bounds import DEFAULT_BOUNDS, Bounds
from sync.mirror.store import Mirror
from sync.reconcile.content import ContentSync
from sync.wire.models import Event, EventPage, SessionView

OLD, NEW = "2026-01-01T00:00:00.000000Z", "2026-01-02T00:00:00.000000Z"


def _event(session_id: str, sequence: int) -> Event:
    data = {"role": "user", "content": [{"type": "text", "text": "x" * 100}]}
    return Event(session_id, None, sequence, "message.user", OLD, data)


class Held:
    """`TranscriptApi`: `ses_old` has three events in pages of two, its second page held
    until `evicted` is set; `ses_new` has one. `second_asked` is set when the held page is
    asked for."""

    bounds: Bounds = DEFAULT_BOUNDS

    def __init__(self) -> None:
        self.events = {
            "ses_old": [_event("ses_old", n) for n in (1, 2, 3)],
            "ses_new": [_event("ses_new", 1)],
        }
        self.second_asked = asyncio.Event()
        self.evicted = asyncio.Event()

    async def session_events(
        self, session_id: str, *, after: int | None = None, limit: int = 1000
    ) -> EventPage:
        if session_id == "ses_old" and after:
            self.second_asked.set()
            await self.evicted.wait()
        items = [e for e in self.events[session_id] if e.sequence > (after or 0)][:limit]
        return EventPage(items, items[-1].sequence if len(items) == limit else None)


def test_a_transcript_evicted_between_its_pages_is_not_left_partial(
    mirror: Mirror, monkeypatch: pytest.MonkeyPatch
) -> None:
    mirror.apply([SessionView("ses_old", "old", OLD, OLD, None, None)])
    assert mirror.store_events("ses_old", [_event("ses_old", n) for n in (1, 2, 3)], fetched_at=OLD)
    mirror.evict_over_budget(0)  # evicted earlier: fetched again when the window opens it
    mirror.apply([SessionView("ses_new", "new", NEW, NEW, None, None)])
    budget = 300  # one event's share fits (about 220 bytes), two do not

    async def scenario() -> None:
        api = Held()
        loop = asyncio.get_running_loop()
        real_evict = mirror.evict_over_budget

        def evict_then_answer(budget: int) -> tuple[list[str], list[str]]:
            evicted = real_evict(budget)
            if "ses_old" in evicted[0]:
                loop.call_soon_threadsafe(api.evicted.set)
            return evicted

        monkeypatch.setattr(mirror, "evict_over_budget", evict_then_answer)
        content = ContentSync(api, mirror, None, budget, lambda _ids: None, page_limit=2)
        try:
            opened = asyncio.create_task(content.refresh("ses_old"))  # the window opens it
            await api.second_asked.wait()  # its first page is stored
            content.kick()  # a pass moved `ses_new`: its phase stores it, over the budget
            await content.wait_idle()
            await opened
        finally:
            await content.aclose()

    asyncio.run(asyncio.wait_for(scenario(), 30))
    held = mirror.mirrored_transcript("ses_old")
    assert held.state is not None
    whole = [e.sequence for e in held.events] == [1, 2, 3] and not held.state.evicted
    gone = held.events == [] and held.state.evicted
    assert whole or gone, (held.events, held.state)
