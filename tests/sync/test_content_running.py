"""The content phase holds back a running conversation's fetch (`RUNNING_FETCH_SECONDS`)
and fetches it when it is due, with no pass to kick it: a run that stops moving its row
(waiting for an approval) still reaches the mirror. A real mirror file, an API double that
counts its calls, and a clock the test moves."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from sync.bounds import DEFAULT_BOUNDS, Bounds
from sync.content_sync import ContentSync
from sync.mirror import Mirror
from sync.models import Event, EventPage, SessionView

RUNNING = SessionView(
    "ses_a", "t", "2026-01-01T00:00:00.000000Z", "2026-01-01T00:00:01.000000Z", "run_1", None
)


class Events:
    """`TranscriptApi`: the session's events so far; counts the pages asked."""

    bounds: Bounds = DEFAULT_BOUNDS

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.asked = 0

    def add(self, kind: str) -> None:
        seq = len(self.events) + 1
        self.events.append(Event("ses_a", "run_1", seq, kind, "2026-01-01T00:00:01Z", {}))

    async def session_events(
        self, session_id: str, *, after: int | None = None, limit: int = 1000
    ) -> EventPage:
        self.asked += 1
        return EventPage([e for e in self.events if e.sequence > (after or 0)], None)


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[Mirror]:
    m = Mirror.open(tmp_path / "m.sqlite3")
    try:
        yield m
    finally:
        m.close()


def test_a_held_back_running_conversation_is_fetched_when_due_without_a_pass(
    mirror: Mirror,
) -> None:
    async def scenario() -> None:
        api = Events()
        now = [100.0]
        fetched: asyncio.Queue[tuple[str, ...]] = asyncio.Queue()
        content = ContentSync(
            api,
            mirror,
            None,
            10**9,
            fetched.put_nowait,
            running_seconds=0.2,
            clock=lambda: now[0],
        )
        try:
            api.add("run.started")
            mirror.apply([RUNNING])
            content.kick()
            await content.wait_idle()
            assert api.asked == 1 and await fetched.get() == ("ses_a",)
            api.add("message.assistant.delta")  # the run's next step moves its row
            mirror.apply([replace(RUNNING, updated_at="2026-01-01T00:00:02.000000Z")])
            content.kick()
            await content.wait_idle()
            assert api.asked == 1  # held back: fetched 0 s ago on the test's clock
            now[0] += 0.2  # due; no pass comes, the phase's own kick fetches it
            assert await asyncio.wait_for(fetched.get(), 10) == ("ses_a",)
            assert api.asked == 2
            held = mirror.mirrored_transcript("ses_a")
            assert held.state is not None and held.state.current and len(held.events) == 2
        finally:
            await content.aclose()

    asyncio.run(scenario())


def test_a_conversation_whose_run_ended_is_never_held_back(mirror: Mirror) -> None:
    async def scenario() -> None:
        api = Events()
        content = ContentSync(api, mirror, None, 10**9, lambda _ids: None, clock=lambda: 0.0)
        try:
            api.add("run.started")
            mirror.apply([RUNNING])
            content.kick()
            await content.wait_idle()
            api.add("run.completed")
            ended = replace(RUNNING, updated_at="2026-01-01T00:00:02.000000Z", active_run_id=None)
            mirror.apply([ended])
            content.kick()
            await content.wait_idle()
            assert api.asked == 2  # at once, on the same clock reading
        finally:
            await content.aclose()

    asyncio.run(scenario())
