"""A Hypothesis state machine over the engine's core: devices, a server, and CONTRACT §7.

Two devices (each a real SQLite mirror, a `Reconciler` and a `DeleteService`, wired as
`SyncEngine` wires them) and one in-memory server index (`tests/sync/memory_index.py`) go
through creates, turns, runs starting and ending, deletes from a device (server-first, 409
while a run is active, lost answers), outages, and walks during which sessions move between
pages or appear and disappear. After every step:

- no row leaves a mirror without proof: the device's API answered the contract's 404 for
  it, or 204 to its delete;
- a delete that removed a row removed it from the server first;
- a mirror only holds sessions the server created (none invented, none from elsewhere).

A `settle` step ends outages and runs passes on every device: each mirror must then equal the
server's index, field by field (convergence once the triggers settle). Anchor: vdirsyncer's
`SyncMachine` over its `MemoryStorage`. The live-server tests stay for what only a real
server shows (HTTP, SQL, SSE); this covers the orderings no hand-written test enumerates.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
)

from sync.delete.outcome import DeleteStatus
from sync.delete.service import DeleteService
from sync.mirror.store import Mirror
from sync.reconcile.reconciler import Reconciler
from sync.wire.models import SessionPage, SessionView
from tests.sync.memory_index import MemoryApi, MemoryIndex

DEVICES = 2
PAGE = 2  # small pages: sessions moving during a walk cross page boundaries


class Device:
    """One device's engine core, as `SyncEngine` assembles it."""

    def __init__(self, index: MemoryIndex, folder: Path) -> None:
        self.api = MemoryApi(index)
        self.mirror = Mirror.open(folder / "mirror.sqlite3")
        self.deleted: set[str] = set()
        self.churn: list[str] = []  # what happens on the server after the first page
        self.index = index
        self.reconciler = Reconciler(
            self.api,
            self.mirror,
            page_limit=PAGE,
            skip=self.deleted.__contains__,
            page_hook=self._during_walk,
        )
        self.deleter = DeleteService(self.api, self.mirror, None, on_removed=self.deleted.add)
        self.seen: set[str] = set()

    async def _during_walk(self, page_number: int, _page: SessionPage) -> None:
        """Between the first and second page: the server changes under the walk."""
        if page_number != 1:
            return
        for action in self.churn:
            live = sorted(self.index.sessions)
            if action == "turn" and live:
                self.index.turn(live[-1])  # the oldest-created moves to the top
            elif action == "create":
                self.index.create()
            elif action == "delete" and live:
                victim = next((s for s in live if not self.index.sessions[s].active_run_id), None)
                if victim is not None:
                    self.index.delete(victim)
        self.churn = []

    def rows(self) -> dict[str, SessionView]:
        return {row.id: row for row in self.mirror.rows()}


class EngineMachine(RuleBasedStateMachine):
    sessions = Bundle("sessions")

    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="converge-sm-"))
        self.loop = asyncio.new_event_loop()
        self.index = MemoryIndex()
        self.devices = [Device(self.index, self._device_dir(i)) for i in range(DEVICES)]

    def _device_dir(self, i: int) -> Path:
        path = self.folder / f"d{i}"
        path.mkdir()
        return path

    def run[T](self, coro: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coro)

    # -- the server, driven by other clients and agents -------------------------------------

    @initialize(target=sessions)
    def first_session(self) -> str:
        return self.index.create("first")

    @rule(target=sessions, title=st.one_of(st.none(), st.text(max_size=8)))
    def create(self, title: str | None) -> str:
        return self.index.create(title)

    @rule(sid=sessions)
    def turn(self, sid: str) -> None:
        self.index.turn(sid)

    @rule(sid=sessions)
    def start_run(self, sid: str) -> None:
        self.index.start_run(sid)

    @rule(sid=sessions)
    def finish_run(self, sid: str) -> None:
        self.index.finish_run(sid)

    @rule(sid=sessions)
    def deleted_elsewhere(self, sid: str) -> None:
        if sid in self.index.sessions and self.index.sessions[sid].active_run_id is None:
            self.index.delete(sid)

    # -- the devices ------------------------------------------------------------------------

    @rule(d=st.integers(0, DEVICES - 1), down=st.booleans())
    def outage(self, d: int, down: bool) -> None:
        self.devices[d].api.outage = down

    @rule(
        d=st.integers(0, DEVICES - 1),
        churn=st.lists(st.sampled_from(["turn", "create", "delete"]), max_size=3),
        failing_reads=st.booleans(),
    )
    def reconcile(self, d: int, churn: list[str], failing_reads: bool) -> None:
        device = self.devices[d]
        device.churn = churn
        device.api.failing_point_reads = failing_reads
        try:
            report = self.run(device.reconciler.run_pass())
        finally:
            device.churn = []
            device.api.failing_point_reads = False
        if device.api.outage:
            assert report.error is not None and not report.changed

    @rule(d=st.integers(0, DEVICES - 1), sid=sessions, lose=st.booleans())
    def delete(self, d: int, sid: str, lose: bool) -> None:
        device = self.devices[d]
        had_row = sid in device.rows()
        view = self.index.sessions.get(sid)
        active = view is not None and view.active_run_id is not None
        device.api.lose_delete_answers = lose
        try:
            outcome = self.run(device.deleter.delete(sid))
        finally:
            device.api.lose_delete_answers = False
        if outcome.removed:  # server-first: the server no longer has it
            assert sid not in self.index.sessions
        if device.api.outage:
            assert outcome.status is DeleteStatus.FAILED
        elif active:
            assert outcome.status is DeleteStatus.ACTIVE_RUN
            assert sid in self.index.sessions  # nothing deleted, no run cancelled
        elif lose and view is not None:
            assert outcome.status is DeleteStatus.UNCONFIRMED
        if not outcome.removed and had_row:
            assert sid in device.rows()  # the row stays until the server's word

    @rule()
    def settle(self) -> None:
        """Triggers settle: every device online, two passes each; all converge."""
        for device in self.devices:
            device.api.outage = False
            for _ in range(2):
                report = self.run(device.reconciler.run_pass())
                assert report.error is None, report.error
        truth = {sid: view for sid, view in self.index.sessions.items()}
        for device in self.devices:
            assert device.rows() == truth
            assert device.mirror.unconfirmed_deletes() == set()

    # -- after every step -------------------------------------------------------------------

    @invariant()
    def no_row_leaves_without_proof(self) -> None:
        for device in self.devices:
            current = set(device.rows())
            device.seen |= current
            unproven = (device.seen - current) - device.api.proofs
            assert not unproven, f"pruned or deleted without a 404/204: {sorted(unproven)}"

    @invariant()
    def mirrors_hold_only_sessions_the_server_created(self) -> None:
        created = set(self.index.sessions) | self.index.tombstones
        for device in self.devices:
            assert set(device.rows()) <= created

    def teardown(self) -> None:
        for device in self.devices:
            device.mirror.close()
        self.loop.close()
        shutil.rmtree(self.folder, ignore_errors=True)


EngineMachine.TestCase.settings = settings(
    max_examples=40,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_engine_state_machine = EngineMachine.TestCase
