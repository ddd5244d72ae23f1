"""A trigger that arrives while the loop is not running is deferred, not dropped.

Qt fires timers whenever anyone processes events: the foreground watcher's debounce timer
can call `SyncEngine.trigger` in pytest-qt's `processEvents()` between two
`run_until_complete` calls, or in a nested `processEvents()` in the app. No loop runs
there, so the engine schedules the trigger on the loop it was opened on, and the pass runs
at that loop's next run (the policy of `app.loop._WhileRunning`).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from app.loop import ConvergeEventLoop
from sync.engine import SyncEngine
from sync.events import TriggerReason
from sync.profile.profile import Profile
from sync.reconcile.reconciler import ReconcileReport
from tests.ui.conftest import DEADLINE, run


async def _until_reported(reports: list[ReconcileReport]) -> None:
    """Poll (each loop turn yields to the pass) until a pass has reported, or time out."""
    deadline = asyncio.get_running_loop().time() + DEADLINE
    while not reports:
        assert asyncio.get_running_loop().time() < deadline, "the deferred pass never ran"
        await asyncio.sleep(0.01)


def test_a_trigger_between_two_runs_of_the_loop_runs_its_pass_at_the_next_run(
    loop: ConvergeEventLoop, live_server: Any, tmp_path: Path
) -> None:
    profile = Profile(tmp_path / "p", server=live_server.url, token="dev-alice")
    engine = run(loop, SyncEngine.open(profile, retry_attempts=1))
    reports: list[ReconcileReport] = []
    engine.add_pass_listener(reports.append)
    try:
        assert not loop.is_running()
        engine.trigger(TriggerReason.FOREGROUND)  # as a Qt timer would, outside the loop
        assert engine.passes_started == 0  # not run here: there is no loop to run it on
        run(loop, _until_reported(reports))
        assert engine.passes_started == 1
        assert reports[0].reason is TriggerReason.FOREGROUND and reports[0].ok, reports[0]
    finally:
        run(loop, engine.close())
