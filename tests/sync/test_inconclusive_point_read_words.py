"""The words a user is shown when a pass's point reads were inconclusive (CONTRACT §7).

A row the walk no longer listed is pruned only on a 404; when its point read fails (503,
401, no connection) the row is kept and the pass does not count as synced. The window's
status line (`SyncEngine`) and `converge sync` then say so, in `sync.wording.unconfirmed`'s
sentence, and only then: not after a conclusive pass, not when the walk itself failed.
Run in process, against the in-memory index (no network); the same over HTTP against the
stub server: tests/sync/test_reconcile_live.py."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sync.cli.main import _kept_verdict
from sync.engine import SyncEngine
from sync.errors import Unauthenticated
from sync.events import EngineState
from sync.profile.profile import Profile
from sync.wire.models import SessionView
from tests.sync.memory_index import MemoryApi, MemoryIndex

UNAVAILABLE = "The server is unavailable right now (503)."
REFUSED = "The server no longer accepts this token."


class RefusingPointReads(MemoryApi):
    """The index answers; every point read is refused (401)."""

    async def get_session(self, session_id: str) -> SessionView:
        raise Unauthenticated(REFUSED, status=401)


async def _engine(tmp_path: Path, api: MemoryApi, monkeypatch: pytest.MonkeyPatch) -> SyncEngine:
    """An engine whose passes go to `api` (no request leaves the process)."""
    profile = Profile(tmp_path / "p", server="http://127.0.0.1:9", token="t")
    engine = await SyncEngine.open(profile)
    engine.reconciler.api = api
    monkeypatch.setattr(engine.content, "kick", lambda: None)  # transcripts: not the subject
    return engine


def test_a_kept_row_is_named_with_the_reason_and_that_the_next_sync_retries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    async def scenario() -> None:
        index = MemoryIndex()
        ids = [index.create(f"t{n}") for n in range(4)]
        api = MemoryApi(index)
        engine = await _engine(tmp_path, api, monkeypatch)
        try:
            first = await engine.reconcile()
            assert first.ok and engine.status.message == ""
            # One row gone, its point read answers 503: kept, and said so, exactly.
            index.delete(ids[0])
            api.failing_point_reads = True
            report = await engine.reconcile()
            assert report.kept == (ids[0],)
            assert engine.status.state is EngineState.TROUBLE
            assert engine.status.message == (
                "1 conversation the server stopped listing could not be checked (The server"
                " is unavailable right now (503)); it was kept and the next sync retries."
            )
            assert _kept_verdict(report) == 1
            assert capsys.readouterr().err == (
                "converge: 1 conversation the server stopped listing could not be checked"
                " (The server is unavailable right now (503)); it was kept and the next sync"
                " retries. Run `converge sync` again.\n"
            )
            # Two rows: the count and the verb follow.
            index.delete(ids[1])
            await engine.reconcile()
            assert engine.status.message == (
                "2 conversations the server stopped listing could not be checked (The server"
                " is unavailable right now (503)); they were kept and the next sync retries."
            )
            # The walk itself fails: that error is shown, not the kept-rows sentence.
            api.outage = True
            failed = await engine.reconcile()
            assert failed.error is not None and failed.kept == ()
            assert engine.status.message == failed.error.message
            assert "could not be checked" not in engine.status.message
            # The point reads answer again (404): pruned, synced, nothing to say.
            api.outage = False
            api.failing_point_reads = False
            done = await engine.reconcile()
            assert sorted(done.pruned) == sorted(ids[:2]) and done.kept == ()
            synced = engine.status  # a fresh name: mypy keeps the TROUBLE narrowing above
            assert synced.state is EngineState.IDLE
            assert synced.message == ""
            assert _kept_verdict(done) == 0
            assert capsys.readouterr().err == ""
        finally:
            await engine.close()

    asyncio.run(scenario())


def test_a_refused_token_on_the_point_reads_says_the_token_is_no_longer_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario() -> None:
        index = MemoryIndex()
        gone = index.create("gone")
        api = RefusingPointReads(index)
        engine = await _engine(tmp_path, api, monkeypatch)
        try:
            await engine.reconcile()
            index.delete(gone)
            report = await engine.reconcile()
            assert report.kept == (gone,)
            assert engine.status.state is EngineState.ERROR
            assert engine.status.message == (
                "The server no longer accepts this token, so 1 conversation it stopped"
                " listing could not be checked; it was kept. The server no longer accepts"
                " this token."
            )
        finally:
            await engine.close()

    asyncio.run(scenario())
