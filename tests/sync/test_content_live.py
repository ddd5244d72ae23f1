"""The pass's content phase against the live stub (CONTRACT §11): transcripts mirrored,
what a pass costs, reading and searching offline, and a delete that leaves no byte."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest

from sync.engine import SyncEngine
from sync.events import TranscriptChanged
from sync.mirror import sqlite_driver
from sync.mirror.search_text import TRIGRAM, fold
from tests.conftest import LiveServer
from tests.sync.helpers import Server, device, run

EVENTS = r"/v1/sessions/[^/]+/events"
INDEX = "/v1/sessions"


async def synced(engine: SyncEngine) -> None:
    """One pass, then until its content phase (and any it queued) is done."""
    report = await engine.reconcile()
    assert report.ok, report.problem
    await engine.content.wait_idle()


def test_a_pass_mirrors_every_transcript_and_an_unchanged_one_costs_no_request(
    live_server: LiveServer, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with Server(live_server.url) as server:
            views = [await server.control_session(f"note number {i}") for i in range(5)]
            async with device(live_server.url, tmp_path / "a") as (engine, transport):
                await synced(engine)
                for i, view in enumerate(views):
                    held = await engine.mirrored_transcript(view.id)
                    assert held.state is not None and held.state.current
                    assert [e.type for e in held.events] == ["message.user"]
                    assert held.events[0].data["content"][0]["text"] == f"note number {i}"
                transport.log.clear()
                await synced(engine)
                assert transport.count("GET", EVENTS) == 0

    run(scenario())


def test_one_new_message_in_one_of_many_costs_at_most_three_requests_beyond_the_walk(
    live_server: LiveServer, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with Server(live_server.url) as server:
            views = [await server.control_session(f"conversation {i}") for i in range(40)]
            async with device(live_server.url, tmp_path / "a", page_limit=10) as (
                engine,
                transport,
            ):
                await synced(engine)
                target = views[7].id
                await server.wait_run(await server.start(target, "one more question"))
                transport.log.clear()
                await synced(engine)
                walk = transport.count("GET", INDEX)
                assert len(transport.log) - walk <= 3, transport.log
                held = await engine.mirrored_transcript(target)
                texts = [
                    e.data["content"][0]["text"] for e in held.events if e.type == "message.user"
                ]
                assert texts == ["conversation 7", "one more question"]

    run(scenario())


def test_a_mirrored_conversation_opens_and_searches_with_the_server_stopped(
    server_factory: object, tmp_path: Path
) -> None:
    live = server_factory()  # type: ignore[operator]

    async def scenario() -> None:
        async with Server(live.url) as server:
            view = await server.control_session("Réunion à Tōkyō: 東京都の会議")
            async with device(live.url, tmp_path / "a") as (engine, _transport):
                await synced(engine)
                live.stop()
                held = await engine.mirrored_transcript(view.id)
                assert len(held.events) == 1
                for query in ("reunion", "TOKYO", "東京都"):
                    assert [hit.id for hit in await engine.search(query)] == [view.id], query

    run(scenario())


def _trigrams(word: str) -> set[str]:
    folded = fold(word)
    return {folded[i : i + TRIGRAM] for i in range(len(folded) - TRIGRAM + 1)}


@pytest.mark.parametrize("library", ["chosen", "stdlib"])
def test_a_conversation_deleted_on_another_device_leaves_no_byte_under_the_profile(
    live_server: LiveServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, library: str
) -> None:
    """`stdlib`: the fallback where no SQLite with FTS5 secure-delete is at hand (the
    interpreter's 3.40 here): the index is merged after the removal instead."""
    # The index stores trigrams, prefix-compressed: a character no other text has (龘)
    # shows in its segment bytes for as long as any of the word's trigrams is there.
    word = "Zqxjvörtle龘fant"
    if library == "stdlib":
        for name in ("Error", "OperationalError", "DatabaseError"):
            monkeypatch.setattr(sqlite_driver, name, getattr(sqlite3, name))
        monkeypatch.setattr(sqlite_driver, "DBAPI", sqlite3)
        monkeypatch.setattr(
            sqlite_driver, "SECURE_DELETE", sqlite3.sqlite_version_info >= (3, 44, 0)
        )

    async def scenario() -> None:
        async with Server(live_server.url) as server:
            keep = await server.control_session("an ordinary conversation")
            victim = await server.control_session(f"the word is {word} and nothing else")
            profile_a = tmp_path / "a"
            async with device(live_server.url, profile_a) as (engine, _transport):
                await synced(engine)
                assert [h.id for h in await engine.search(word)] == [victim.id]
                async with device(live_server.url, tmp_path / "b") as (other, _t):
                    await other.reconcile()
                    assert (await other.delete(victim.id)).status.value == "deleted"
                await synced(engine)
                assert await engine.search(word) == []
                assert await engine.row(keep.id) is not None
                mirror_path = engine.mirror.path
                # The index's own terms: none of the word's trigrams is left in any segment.
                with contextlib.closing(sqlite_driver.connect(mirror_path)) as db:
                    db.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, search, row)")
                    terms = {row[0] for row in db.execute("SELECT term FROM temp.vocab")}
                    db.execute(
                        "CREATE VIRTUAL TABLE temp.short USING fts5vocab(main, search_short, row)"
                    )
                    short = {row[0] for row in db.execute("SELECT term FROM temp.short")}
                assert not terms & _trigrams(word)
                assert "龘" not in short  # nor its one-character gram in the short index
                assert terms  # the kept conversation is still indexed
        for path in profile_a.rglob("*"):
            if path.is_file():
                held = path.read_bytes()
                assert word.encode() not in held and "龘".encode() not in held, path

    run(scenario())


def test_an_interrupted_phase_keeps_what_it_stored_and_the_next_goes_on(
    live_server: LiveServer, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with Server(live_server.url) as server:
            views = [await server.control_session(f"part {i}") for i in range(6)]
            async with device(live_server.url, tmp_path / "a") as (engine, transport):
                served = 0

                def after_three(_request: object) -> bool:
                    nonlocal served
                    served += 1
                    return served > 3

                transport.add("GET", EVENTS, "refuse", times=None, when=after_three)
                await synced(engine)
                report = engine.content.last_report
                assert report is not None and report.error is not None
                held = [await engine.mirrored_transcript(v.id) for v in views]
                newest_first = [h.state is not None and h.state.current for h in held][::-1]
                assert newest_first == [True, True, True, False, False, False]
                transport.rules.clear()
                transport.log.clear()
                engine.content.kick()
                await engine.content.wait_idle()
                assert transport.count("GET", EVENTS) == 3
                for view in views:
                    state = (await engine.mirrored_transcript(view.id)).state
                    assert state is not None and state.current

    run(scenario())


def test_an_evicted_transcript_keeps_its_row_and_is_fetched_again_when_opened(
    live_server: LiveServer, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with Server(live_server.url) as server:
            old = await server.control_session("old " + "x" * 3000)
            new = await server.control_session("new " + "y" * 3000)
            async with device(live_server.url, tmp_path / "a") as (engine, transport):
                engine.content.budget = 4000  # one of the two fits
                changed: list[tuple[str, ...]] = []
                engine.subscribe(
                    lambda e: (
                        changed.append(e.session_ids) if isinstance(e, TranscriptChanged) else None
                    )
                )
                await synced(engine)
                evicted = await engine.mirrored_transcript(old.id)
                assert evicted.events == [] and evicted.state is not None
                assert evicted.state.evicted
                assert await engine.row(old.id) is not None
                assert len((await engine.mirrored_transcript(new.id)).events) == 1
                transport.log.clear()
                await synced(engine)  # unchanged: an evicted one costs no request either
                assert transport.count("GET", EVENTS) == 0
                changed.clear()
                assert await engine.refresh_transcript(old.id)
                assert changed == [(old.id,)]
                again = await engine.mirrored_transcript(old.id)
                assert len(again.events) == 1 and again.state is not None
                assert not again.state.evicted

    run(scenario())
