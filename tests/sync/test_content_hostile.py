"""The content phase against a server that lies (CONTRACT §10.1): a transcript that never
ends, events of another conversation, repeats. Bounded, and what fitted is kept."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx

from sync.api.client import ApiClient
from sync.mirror.store import Mirror
from sync.reconcile.content import ContentSync
from sync.wire.models import SessionView

STAMP = "2026-01-01T00:00:00.000000Z"


def _event(session_id: str, sequence: int) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "run_id": None,
        "sequence": sequence,
        "type": "message.user",
        "created_at": STAMP,
        "data": {"role": "user", "content": [{"type": "text", "text": f"said {sequence}"}]},
    }


def test_a_transcript_that_repeats_its_position_is_cut_and_what_fitted_is_kept(
    tmp_path: Path,
) -> None:
    asked: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append(str(request.url.query.decode()))
        # Every page: the same event, one of another conversation, and the same next_after.
        page = {"items": [_event("ses_x", 1), _event("ses_other", 5)], "next_after": 1}
        return httpx.Response(200, json=page)

    mirror = Mirror.open(tmp_path / "m.sqlite3")
    try:
        mirror.apply([SessionView("ses_x", "t", STAMP, STAMP, None, None)])

        async def scenario() -> None:
            api = ApiClient("http://test", "tok", transport=httpx.MockTransport(handler))
            try:
                content = ContentSync(api, mirror, None, 1 << 30, lambda _ids: None)
                report = await content.run()
                assert report.error is None and report.fetched == ["ses_x"]
            finally:
                await api.aclose()

        asyncio.run(scenario())
        assert len(asked) == 2  # the repeated `next_after` is refused at once
        assert [(e.session_id, e.sequence) for e in mirror.transcript("ses_x")] == [("ses_x", 1)]
        assert mirror.transcript("ses_other") == []
        state = mirror.transcript_state("ses_x")
        assert state is not None and state.current  # not asked again until the row moves
        assert mirror.stale_transcripts(10) == []
    finally:
        mirror.close()
