"""While the engine watches the index, content phases keep a pace (`WATCHING_PACE`): a
watching device passes at every change, and a phase after each pass cost one request per
moved conversation per pass. Kicks during the pace fold into one phase, so one request
takes what several passes showed. A real mirror file and an API double that counts."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sync.api.bounds import DEFAULT_BOUNDS, Bounds
from sync.engine import SyncEngine
from sync.mirror.store import Mirror
from sync.profile.profile import Profile
from sync.reconcile.content import WATCHING_PACE, ContentSync
from sync.wire.models import Event, EventPage, SessionView


def _view(step: int) -> SessionView:
    at = f"2026-01-01T00:00:{step:02d}.000000Z"
    return SessionView("ses_a", "t", "2026-01-01T00:00:00.000000Z", at, "run_1", None)


class Events:
    """`TranscriptApi` for one conversation: its events so far; counts the pages asked."""

    bounds: Bounds = DEFAULT_BOUNDS

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.asked = 0

    def step(self, mirror: Mirror) -> None:
        """The run's next step: an event, and the row moves (as a pass would write it)."""
        seq = len(self.events) + 1
        self.events.append(Event("ses_a", "run_1", seq, "message.assistant.delta", "t", {}))
        mirror.apply([_view(seq)])

    async def session_events(
        self, session_id: str, *, after: int | None = None, limit: int = 1000
    ) -> EventPage:
        self.asked += 1
        return EventPage([e for e in self.events if e.sequence > (after or 0)], None)


@pytest.mark.parametrize(("pace", "requests"), [(2.0, 2), (0.0, 3)])
def test_kicks_during_the_pace_fold_into_one_phase_and_one_request(
    mirror: Mirror, pace: float, requests: int
) -> None:
    async def scenario() -> None:
        api = Events()
        content = ContentSync(api, mirror, None, 10**9, lambda _ids: None)
        content.pace = pace
        try:
            api.step(mirror)
            content.kick()
            await content.wait_idle()
            assert api.asked == 1
            for _ in range(2):  # two more steps, each a pass that kicks the phase
                api.step(mirror)
                content.kick()
                await asyncio.sleep(0)  # let a phase start if it may
                if not pace:
                    await content.wait_idle()
            await content.wait_idle()
            assert api.asked == requests
            held = mirror.mirrored_transcript("ses_a")
            assert held.state is not None and held.state.current and len(held.events) == 3
        finally:
            await content.aclose()

    asyncio.run(scenario())


def test_the_engine_keeps_the_pace_only_while_it_watches(tmp_path: Path) -> None:
    async def scenario() -> None:
        profile = Profile(tmp_path / "p", server="http://127.0.0.1:9", token="t")
        engine = await SyncEngine.open(profile)
        try:
            assert engine.content.pace == 0.0  # `converge sync`: content at once
            engine.start_watch()
            assert engine.content.pace == WATCHING_PACE
            await engine.stop_watch()
            assert engine.content.pace == 0.0
        finally:
            await engine.close()

    asyncio.run(scenario())
