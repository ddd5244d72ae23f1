"""The order in which listeners hear of mirror writes does not matter (decision 0209): a
listener pulls what changed since the number it shows, so an event that comes late, early
or twice changes nothing it shows.

The soak's false "reappeared" (docs/reliability.md, "Soak") came from a device that
recorded events in the order it heard them: a pass committed "ses_x updated", the device's
own delete then committed "ses_x removed", and the two events came out the other way round.
The QA device now pulls from its mirror; these tests hand it the events reversed.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from qa.checker import DeleteAttempt, DeleteResult, Source, check_reappearance
from qa.device import Device, Recorder, RequestStats
from sync.engine import SyncEngine
from sync.events import EngineEvent, IndexChanged
from tests.sync.helpers import Server, device, run


def _observer(folder: Path, url: str, engine: SyncEngine, recorder: Recorder) -> Device:
    """A QA device recording what `engine`'s mirror shows (the harness's own recording)."""
    observer = Device(
        0, folder, url=url, token="dev-alice", interval=60, stats=RequestStats(), recorder=recorder
    )
    observer._engine = engine
    return observer


async def _pulled(observer: Device) -> None:
    async with asyncio.timeout(20):
        while observer._puller is not None:
            await asyncio.sleep(0.005)


def test_a_removal_heard_before_the_update_that_committed_first_records_no_reappearance(
    live_server: Any, tmp_path: Path
) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            target = (await server.create("to be changed, then deleted")).id
            other = (await server.create("stays")).id
            async with device(live_server.url, tmp_path / "a") as (engine, _transport):
                first = await engine.reconcile()
                recorder = Recorder()
                observer = _observer(tmp_path / "observer", live_server.url, engine, recorder)
                observer._on_event(IndexChanged(seq=first.seq))
                await _pulled(observer)

                events: list[IndexChanged] = []

                def listen(event: EngineEvent) -> None:
                    if isinstance(event, IndexChanged):
                        events.append(event)

                engine.subscribe(listen)
                await server.wait_run(await server.start(target, "a turn"))
                report = await engine.reconcile()
                assert target in report.updated
                sent = time.monotonic()
                outcome = await engine.delete(target)
                assert outcome.removed and report.seq < outcome.seq  # the mirror's order

                for event in reversed(events):  # "removed" heard first, then "updated"
                    observer._on_event(event)
                    await _pulled(observer)
                about_target = [
                    (o.present, o.source) for o in recorder.observations if o.session_id == target
                ]
                assert about_target == [(True, Source.INSERTED), (False, Source.DELETED)]
                deletes = [
                    DeleteAttempt(
                        target, 0, sent, time.monotonic(), DeleteResult.DELETED, True, False
                    )
                ]
                assert check_reappearance(recorder.observations, deletes, {other}) == []
                assert target not in {row.id for row in await engine.rows()}

    run(go())


def test_every_announced_change_has_its_own_number_and_the_newest_is_the_mirrors(
    live_server: Any, tmp_path: Path
) -> None:
    """Passes, deletes and single-row refreshes racing each other: each event names the
    number its write took (none twice), and the newest is where the mirror stands."""

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
                assert len(seqs) >= 3 and len(set(seqs)) == len(seqs), seqs
                whole = await engine.changes_since(None)
                assert whole.seq == max(seqs)
                assert whole.rows == await engine.rows()

    run(go())
