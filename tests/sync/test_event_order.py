"""Listeners hear about mirror writes in the order the writes committed.

The soak's false "reappeared" (docs/reliability.md, "Soak"): a pass committed "ses_x
updated", the device's own delete then committed "ses_x removed", but the two events came
out the other way round. These tests force that interleaving deterministically.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import sync.reconcile
from qa.checker import DeleteAttempt, DeleteResult, check_reappearance
from qa.device import Device, Recorder, RequestStats
from sync.engine import EngineEvent, IndexChanged
from tests.sync.helpers import Server, device, run


def test_a_delete_during_a_pass_is_heard_after_the_pass_that_committed_first(
    live_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pass commits "updated" first and is then held (its cached-file clean-up blocks)
    until the listener has heard the delete's removal, which commits second. The listener
    must hear updated → removed, and the QA checker must see no reappearance."""
    delete_heard = threading.Event()
    pass_held = threading.Event()
    real_remove = sync.reconcile.remove_cached_files  # type: ignore[attr-defined]
    held_once = False

    def slow_clean_up(cache_dir: Path | None, names: list[str]) -> None:
        nonlocal held_once
        if not held_once:  # only the pass under test; runs in a worker thread
            held_once = True
            pass_held.set()
            # bounded: a fixed engine never makes this wait long (the delete runs meanwhile)
            delete_heard.wait(timeout=20)
        real_remove(cache_dir, names)

    async def go() -> None:
        async with Server(live_server.url) as server:
            target = (await server.create("to be changed, then deleted")).id
            other = (await server.create("stays")).id
            async with device(live_server.url, tmp_path / "a") as (engine, _transport):
                assert (await engine.reconcile()).ok
                await server.wait_run(await server.start(target, "a turn"))  # → "updated"

                events: list[IndexChanged] = []
                recorder = Recorder()
                observer = Device(
                    0,
                    tmp_path / "observer",
                    url=live_server.url,
                    token="dev-alice",
                    interval=60,
                    stats=RequestStats(),
                    recorder=recorder,
                )

                def listen(event: EngineEvent) -> None:
                    if isinstance(event, IndexChanged):
                        events.append(event)
                        observer._on_event(event)  # the QA harness's own recording
                        if target in event.removed:
                            delete_heard.set()

                engine.subscribe(listen)
                monkeypatch.setattr(sync.reconcile, "remove_cached_files", slow_clean_up)
                pass_task = asyncio.create_task(engine.reconcile())
                async with asyncio.timeout(20):  # the pass's write has committed
                    while not pass_held.is_set():
                        await asyncio.sleep(0.005)
                sent = time.monotonic()
                outcome = await engine.delete(target)
                assert outcome.removed and outcome.seq > 0
                report = await pass_task
                assert target in report.updated  # the pass did commit first...
                assert report.seq < outcome.seq  # ...as its commit sequence says

                heard = [(e.seq, set(e.updated) | set(e.inserted), set(e.removed)) for e in events]
                assert [seq for seq, _, _ in heard] == sorted(seq for seq, _, _ in heard)
                assert len({seq for seq, _, _ in heard}) == len(heard)
                about_target = [
                    "removed" if target in removed else "present"
                    for _, present, removed in heard
                    if target in present | removed
                ]
                assert about_target == ["present", "removed"], heard
                assert recorder.misordered == 0
                deletes = [
                    DeleteAttempt(
                        target, 0, sent, time.monotonic(), DeleteResult.DELETED, True, False
                    )
                ]
                assert check_reappearance(recorder.observations, deletes, {other}) == []
                assert target not in {row.id for row in await engine.rows()}

    run(go())


def test_index_events_carry_strictly_increasing_commit_sequences(
    live_server: Any, tmp_path: Path
) -> None:
    """Passes, deletes and single-row refreshes racing each other: every event a listener
    hears is newer than the one before."""

    async def go() -> None:
        async with Server(live_server.url) as server:
            ids = [(await server.create(f"chat {i}")).id for i in range(8)]
            async with device(live_server.url, tmp_path / "a", page_limit=2) as (engine, _):
                seqs: list[int] = []
                engine.subscribe(
                    lambda e: seqs.append(e.seq) if isinstance(e, IndexChanged) else None
                )
                await engine.reconcile()
                for sid in ids[:4]:
                    await server.wait_run(await server.start(sid, "more"))
                await asyncio.gather(
                    engine.reconcile(),
                    engine.delete_many(ids[:3]),
                    engine.send_message(ids[4], "hello"),
                    engine.reconcile(),
                )
                assert len(seqs) >= 3
                assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs), seqs

    run(go())
