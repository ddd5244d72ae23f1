"""`converge qa`: prove that N devices converge on the server's history (ADR-0050 §8).

The harness starts a stub server as a child process (`converge-server --port 0 --control
--agent-delay 0 ...`, restartable for real) or targets `--server URL`, any server that
implements the contract (CONTRACT §12). It needs only the sixteen public routes
(`qa.public`): seeding, the workload, the truth and the purge audit all go through them.
The stub's control plane, when the server serves it (and `--public-only` is not given),
adds its extras: fast seeding with past activity and legacy titles, object-store outages,
the outbox and the row-level purge audit; restarts come with the harness's own server.

It opens N simulated devices (`qa.device`) and drives a seeded workload (`qa.workload`):
new conversations, turns that reorder the index, deletes from random devices, deletes
refused by active runs, repeated deletes, reconnects and foreground triggers, plus the
extras above. Then a quiet phase: no more operations, the object store up; the harness
polls until every mirror equals the server's index (read by a full walk with a fresh
client) or the convergence deadline passes. Finally deleted sessions must leave nothing
any route serves (and, with the control plane, no residue and an empty outbox).

Everything observed goes into a `qa.checker.History`; `qa_checker.check` decides the
violations. The report (text, or one JSON object with `--json`) gives the operations by kind
and outcome, the devices' request figures, the time each device took to converge after the
quiet phase began, and the violations; the exit status is 1 when there is any.

A run that stops early (its server never starts, a failure in the harness, a cancellation)
still tears down and hands back its report: `stopped` says why and `checked` which
invariants it gathered all the evidence for, so a long soak is never lost without a trace.
The harness's own requests are retried and counted as the devices' are (`qa.public`,
`qa.server.ControlPlane`); one that still fails in an operation is an outcome, not the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from qa.checker import (
    DeleteAttempt,
    DeleteResult,
    History,
    Kind,
    Residue,
    RowKey,
    check,
)
from qa.device import CountingTransport, plain_transport
from qa.faults import FaultSchedule, FaultSpec
from qa.fleet import ENGINE_COUNTERS, DeviceSpec, LocalFleet, SendStatus
from qa.latency import Change, convergence_latencies, stages
from qa.proxy import DeviceNetwork
from qa.public import Presence, PublicAudit, Truth, seed_public
from qa.report import QaOptions, QaReport
from qa.server import ControlPlane, QaSetupError, ServerProcess
from qa.workers import WorkerFleet, default_workers
from qa.workload import Op, OpKind, choose, initial_histories, plan, plan_digest
from sync.delete.outcome import DeleteStatus
from sync.errors import SyncError, Unauthenticated

log = logging.getLogger(__name__)

DEFAULT_OPERATIONS = 60
WAIT_SECONDS = 3  # the `/wait N` of a delete that must be refused (long enough under load)
SAMPLE_EVERY = 10  # operations between mirror samples
OP_DEADLINE = 60.0  # an operation still running after this is reported as stuck
#: Operations drawn on the server's lane of the timeline, not on a device's.
SERVER_LANE = frozenset({OpKind.RESTART, OpKind.OUTAGE_START, OpKind.OUTAGE_END})
RESIDUE_LIMIT = 100  # deleted sessions audited at the end (the first ones deleted)
TOMBSTONE_LIMIT = 1000  # removed sessions whose tombstone is checked
WORDS = (
    "budget",
    "deploy",
    "résumé",
    "kitchen",
    "naïve",
    "lecture",
    "weather",
    "日本語",
    "garden",
    "refactor",
)


_RESULTS = {
    DeleteStatus.DELETED: DeleteResult.DELETED,
    DeleteStatus.ALREADY_GONE: DeleteResult.ALREADY_GONE,
    DeleteStatus.ACTIVE_RUN: DeleteResult.ACTIVE_RUN,
    DeleteStatus.FAILED: DeleteResult.FAILED,
    DeleteStatus.UNCONFIRMED: DeleteResult.UNCONFIRMED,
    DeleteStatus.SERVER_ONLY: DeleteResult.DELETED,  # the server confirmed; the row stayed
}


def why_stopped(exc: BaseException) -> str:
    """One sentence for the exception that ended a run early."""
    if isinstance(exc, QaSetupError):
        return str(exc)
    if isinstance(exc, SyncError):
        return exc.message
    if isinstance(exc, KeyboardInterrupt | asyncio.CancelledError):
        return "the run was interrupted before it finished"
    return f"the harness failed ({type(exc).__name__}: {exc}); run with -v for details"


class Harness:
    """One run of `converge qa`: set-up, workload, quiet phase, checks, tear-down.

    `transport` makes the transport of each of the harness's own clients (the truth, the
    control plane; never a device's) for a base URL: tests put faults there.
    """

    def __init__(
        self,
        options: QaOptions,
        *,
        transport: Callable[[str], httpx.AsyncBaseTransport] = plain_transport,
    ) -> None:
        self.o = options
        self._transport = transport
        self.report = QaReport(options)
        self.report.checked = set()  # each phase adds what it let the checker judge
        self.history = History(devices=options.devices, deadline=options.deadline)
        workers = options.workers
        if workers is None:
            workers = default_workers(options.devices)
        self.report.workers = workers
        # The devices: on this loop, or spread over worker processes (decision 0214).
        self.fleet: LocalFleet | WorkerFleet = (
            WorkerFleet(min(workers, options.devices)) if workers > 0 else LocalFleet()
        )
        self.wakes: dict[int, list[float]] = {}
        self.server: ServerProcess | None = None  # the first of `servers`
        self.servers: list[ServerProcess] = []
        self.control: ControlPlane | None = None  # the first of `controls`
        self.controls: list[ControlPlane] = []
        self.truth: Truth | None = None
        self.audit: PublicAudit | None = None
        self.network: DeviceNetwork | None = None  # the fault proxies (`--faults`)
        self.url = ""
        self.live: list[str] = []  # sessions the workload believes live, in creation order
        self.deleted: list[str] = []  # confirmed deleted, in deletion order
        self._deleted_set: set[str] = set()
        self.changes: list[Change] = []  # for the convergence latency
        self.outage = False
        self.workdir = Path()
        self.timeline = self.report.timeline  # operations, faults, partitions (`--html`)

    # -- set-up and tear-down ---------------------------------------------------------------

    async def run(self) -> QaReport:
        started = time.monotonic()
        self.timeline.started = started
        made_tmp = self.o.workdir is None
        self.workdir = (
            Path(tempfile.mkdtemp(prefix="converge-qa-"))
            if self.o.workdir is None
            else self.o.workdir
        )
        lag = asyncio.get_running_loop().create_task(self._measure_lag())
        failed = False
        try:
            try:
                await self._setup()
                await self._workload()
                await self._quiet_phase()
                await self._final_checks()
            except Exception:
                failed = True
                raise
            finally:
                lag.cancel()
                self.report.total_seconds = time.monotonic() - started
                await self._teardown()
                # A run that failed keeps its own server's folder: the log may say why.
                if self.o.keep or not made_tmp or (failed and self.servers):
                    self.report.workdir = str(self.workdir)
                else:
                    shutil.rmtree(self.workdir, ignore_errors=True)
        except asyncio.CancelledError as exc:
            # Ctrl-C or SIGTERM: the report still says what was checked before, and the
            # cancellation goes on to the caller.
            if self.report.stopped is None:
                self.report.stopped = why_stopped(exc)
            self._conclude()
            raise
        except Exception as exc:
            # Whatever ended the run, it does not take the report with it.
            log.info("the run stopped early", exc_info=True)
            self.report.stopped = why_stopped(exc)
        self._conclude()
        return self.report

    def _conclude(self) -> None:
        """Judge the history gathered so far; a run stopped early leaves some unjudged."""
        checked = self.report.checked
        self.report.violations = [
            v
            for v in check(self.history)
            # Without the final mirrors every device would look unconverged.
            if v.kind is not Kind.NOT_CONVERGED or Kind.NOT_CONVERGED in checked
        ]
        self.report.latencies = convergence_latencies(
            self.changes, self.history.observations, range(self.o.devices)
        )
        self.report.stages = stages(self.report.latencies, self.wakes)
        self.report.stages_by_kind = {
            kind: stages(self.report.latencies, self.wakes, kind)
            for kind in sorted(set(self.report.latencies.kinds))
        }

    def _harness_transport(self, url: str) -> httpx.AsyncBaseTransport:
        """The transport of one of the harness's own clients, counted as a device's is."""
        return CountingTransport(self.report.harness_requests, self._transport(url))

    async def _measure_lag(self, period: float = 0.05) -> None:
        while True:
            before = time.monotonic()
            await asyncio.sleep(period)
            self.report.loop_lag.append(max(0.0, time.monotonic() - before - period))

    async def _setup(self) -> None:
        if self.o.server:
            self.url = self.o.server.rstrip("/")
            self.report.mode = "external"
        else:
            # Several processes share the database and one object store (§9.4): a folder,
            # or a bucket's prefix.
            endpoint = ("--s3-endpoint", self.o.s3_endpoint) if self.o.s3_endpoint else ()
            self.servers = [
                ServerProcess(
                    self.workdir / ("server" if i == 0 else f"server{i}"),
                    database_url=self.o.database,
                    artifacts=self.o.artifacts or self.workdir / "server" / "artifacts",
                    control=not self.o.public_only,
                    extra_args=endpoint,
                    start_timeout=self.o.server_start_timeout,
                )
                for i in range(self.o.servers)
            ]
            self.server = self.servers[0]
            urls = [await server.start() for server in self.servers]
            self.url = urls[0]
        self.report.url = self.url
        self.truth = Truth(self.url, self.o.token, self._harness_transport)
        self.audit = PublicAudit(self.truth)
        await self._require_api()
        if not self.o.public_only:
            urls = [s.url for s in self.servers] or [self.url]
            probes = [ControlPlane(url, transport=self._harness_transport(url)) for url in urls]
            if await probes[0].probe():
                self.controls = probes
                self.control = probes[0]
            else:
                for probe in probes:
                    await probe.aclose()
        self.report.extras = self._extras()
        if self.control is not None:
            await self._object_store(True)
            for text, updated_at, legacy in initial_histories(self.o.seed, self.o.initial):
                sid = await self.control.create_history(
                    self.o.token, text, updated_at=updated_at, legacy=legacy
                )
                self.live.append(sid)
        else:
            texts = [text for text, _at, _legacy in initial_histories(self.o.seed, self.o.initial)]
            self.live.extend(await seed_public(self.truth, texts))
            # The seeding runs end before the devices start, so the first turns are not 409s.
            await self.truth.wait_idle(time.monotonic() + self.o.deadline)
        urls = [
            self.servers[i % len(self.servers)].url if self.servers else self.url
            for i in range(self.o.devices)
        ]
        ports: list[int | None] = [None] * self.o.devices
        if self.o.faults is not None:
            horizon = self.o.operations or DEFAULT_OPERATIONS
            schedule = FaultSchedule(
                FaultSpec.parse(self.o.faults), self.o.seed, self.o.devices, horizon
            )
            self.network = DeviceNetwork(schedule, timeline=self.timeline)
            ports = list(await self.network.start(urls))
        specs = [
            DeviceSpec(
                index=index,
                folder=str(self.workdir / "devices" / f"d{index:03d}"),
                url=urls[index],
                token=self.o.token,
                interval=self.o.interval,
                page_limit=self.o.page_limit,
                watch=self.o.watch,
                proxy_port=ports[index],
            )
            for index in range(self.o.devices)
        ]
        await self.fleet.open(specs)
        if isinstance(self.fleet, WorkerFleet):
            self.report.clock = self.fleet.clock()

    async def _require_api(self) -> None:
        """The public API answers and takes the token (the one thing a run needs)."""
        assert self.truth is not None
        try:
            async with self.truth.client() as api:
                await api.list_sessions(limit=1)
        except Unauthenticated as exc:
            raise QaSetupError(f"the server refused the token: {exc.message}") from exc
        except SyncError as exc:
            raise QaSetupError(f"the server's index cannot be read: {exc.message}") from exc

    def _extras(self) -> dict[str, bool]:
        """What the run adds to the public routes (the report says which were used)."""
        control = self.control is not None
        return {
            "control_plane": control,
            "control_seeding": control,
            "object_store_faults": control,
            "stub_purge_audit": control,
            "restarts": self.server is not None,
        }

    async def _teardown(self) -> None:
        """Each step runs whatever the others did, so a run that stopped early still stops
        its children and keeps what they counted."""
        try:
            totals = await self.fleet.close()
        except Exception:
            log.exception("closing the devices failed")
        else:
            self.report.engine = {k: totals.counters[k] for k in ENGINE_COUNTERS}
            self.report.stats = totals.stats
            self.report.device_loop_lag = totals.loop_lag
            self.wakes = totals.wakes
        if self.network is not None:
            try:
                await self.network.close()
            except Exception:
                log.exception("closing the fault proxies failed")
            self.report.faults = self.network.to_json()
        for control in self.controls:
            await control.aclose()
        errors: int | None = None
        for server in self.servers:
            try:
                await server.close()
            except Exception:
                log.exception("stopping the server failed")
            count = server.log_errors()
            if count is not None:
                errors = (errors or 0) + count
        if self.servers:
            self.report.server_log_errors = errors

    async def _object_store(self, up: bool) -> None:
        """The fault switch lives in each process's memory: set it on every one."""
        for control in self.controls:
            await control.object_store(up)

    # -- the workload -----------------------------------------------------------------------

    async def _workload(self) -> None:
        started = time.monotonic()
        ops = plan(
            self.o.seed,
            self.o.devices,
            restarts=self.server is not None,
            outages=self.control is not None,
        )
        done: list[Op] = []
        limit = self.o.operations
        if limit is None and self.o.duration is None:
            limit = DEFAULT_OPERATIONS
        for op in ops:
            if limit is not None and len(done) >= limit:
                break
            if self.o.duration is not None and time.monotonic() - started >= self.o.duration:
                break
            op_started = time.monotonic()
            if self.network is not None:
                self.network.at_operation(op.index)
            try:
                # A restart waits for its server as long as the first start may.
                op_deadline = OP_DEADLINE
                if op.kind is OpKind.RESTART:
                    op_deadline += self.o.server_start_timeout
                async with asyncio.timeout(op_deadline):
                    await self._execute(op)
                for server in self.servers:
                    server.check_alive()
            except TimeoutError:
                self.history.stuck.append(
                    f"operation {op.index} ({op.kind.value}) did not finish within {op_deadline:g}s"
                )
                self._outcome("stuck")
            except (httpx.HTTPError, SyncError) as exc:
                # One of the harness's own requests (the control plane, the truth) failed
                # after its retries: counted as a device's failed request is, not fatal.
                log.info("operation %d (%s): %r", op.index, op.kind.value, exc)
                self._outcome("harness_request_failed")
            took = time.monotonic() - op_started
            self.report.op_seconds.setdefault(op.kind.value, []).append(took)
            lane = None if op.kind in SERVER_LANE else op.device
            self.timeline.add(lane, "op", op.kind.value, at=op_started, seconds=took)
            done.append(op)
            self.report.ops[op.kind.value] += 1
            if len(done) % SAMPLE_EVERY == 0:
                await self._sample_all()
        self.report.operations = len(done)
        self.report.plan_digest = plan_digest(done)
        # Every operation ran: what they did is all there is to judge of them.
        self.report.checked |= {
            Kind.STUCK,
            Kind.CONFLICT_LOST_ROW,
            Kind.CONFLICT_DELETED,
            Kind.FAILED_DELETE_LOST_ROW,
        }
        self.report.workload_seconds = time.monotonic() - started

    async def _execute(self, op: Op) -> None:
        handler = {
            OpKind.CREATE: self._op_create,
            OpKind.ARTIFACT: self._op_artifact,
            OpKind.TURN: self._op_turn,
            OpKind.DELETE: self._op_delete,
            OpKind.DELETE_AGAIN: self._op_delete_again,
            OpKind.DELETE_ACTIVE: self._op_delete_active,
            OpKind.TRIGGER: self._op_trigger,
            OpKind.REOPEN: self._op_reopen,
            OpKind.OUTAGE_START: self._op_outage_start,
            OpKind.OUTAGE_END: self._op_outage_end,
            OpKind.RESTART: self._op_restart,
        }[op.kind]
        await handler(op)

    def _outcome(self, name: str) -> None:
        self.report.outcomes[name] += 1

    def _text(self, op: Op) -> str:
        word = WORDS[op.index % len(WORDS)]
        text = f"qa {self.o.seed}-{op.index} {word}"
        if op.index % 7 == 3:  # long enough for the 64-code-point cut of the title rule
            text += " " + " ".join(WORDS) + " 👩‍💻 end"
        return text

    async def _send(self, device: int, session_id: str | None, text: str) -> str | None:
        """Start a run (in a new session when `session_id` is None); the session id or None."""
        sent = await self.fleet.send(device, session_id, text)
        if sent.status is SendStatus.BUSY:
            self._outcome("run_busy")
            return None
        if sent.status is SendStatus.GONE:
            self._outcome("run_session_gone")
            if session_id is not None:
                self._forget(session_id)
            return None
        if sent.status is SendStatus.FAILED or sent.session_id is None:
            log.info("run on device %d failed: %s", device, sent.error)
            self._outcome(f"run_failed_{sent.error}")
            return None
        if session_id is None:
            self.live.append(sent.session_id)
            # Timed from just before the request left, in the device's own process.
            self.changes.append(Change(sent.session_id, device, sent.sent_at, present=True))
            self._outcome("created")
        else:
            self._outcome("turn_started")
        return sent.session_id

    def _forget(self, session_id: str) -> None:
        with contextlib.suppress(ValueError):
            self.live.remove(session_id)
        if session_id not in self._deleted_set:
            self._deleted_set.add(session_id)
            self.deleted.append(session_id)

    async def _op_create(self, op: Op) -> None:
        await self._send(op.device, None, self._text(op))

    async def _op_artifact(self, op: Op) -> None:
        target = choose(self.live, op.pick) if op.flag else None
        text = f"/artifact qa-{op.index}.txt bytes of operation {op.index}"
        await self._send(op.device, target, text)

    async def _op_turn(self, op: Op) -> None:
        target = choose(self.live, op.pick)
        if target is None:
            await self._op_create(op)
            return
        await self._send(op.device, target, self._text(op))

    async def _delete(self, device: int, session_id: str, *, stop_run: bool = False) -> bool:
        """A server-first delete through the device's engine, recorded for the checker;
        whether it was refused because a run is active."""
        if self.audit is not None and session_id not in self._deleted_set:
            await self.audit.record(session_id)  # what the purge must make unreachable
        done = await self.fleet.delete(device, session_id, stop_run=stop_run)
        result = _RESULTS[done.status]
        server_has: bool | None = None
        if result is DeleteResult.ACTIVE_RUN and self.truth is not None:
            server_has = await self.truth.exists(session_id)
        self.history.deletes.append(
            DeleteAttempt(
                session_id=session_id,
                device=device,
                sent_at=done.sent_at,
                done_at=done.done_at,
                result=result,
                row_before=done.row_before,
                row_after=done.row_after,
                server_has_after=server_has,
            )
        )
        self._outcome(f"delete_{result.value}")
        if result is DeleteResult.DELETED:
            # `done_at` is just after the 204 (the device's own mirror write in between).
            self.changes.append(
                Change(session_id, device, done.done_at, False, sent_at=done.sent_at)
            )
        if done.removed:
            self._forget(session_id)
        return done.status is DeleteStatus.ACTIVE_RUN

    async def _op_delete(self, op: Op) -> None:
        target = choose(self.live, op.pick)
        if target is None:
            self._outcome("delete_nothing_live")
            return
        await self._delete(op.device, target)

    async def _op_delete_again(self, op: Op) -> None:
        target = choose(self.deleted, op.pick)
        if target is None:
            self._outcome("delete_again_nothing_deleted")
            return
        await self._delete(op.device, target)

    async def _op_delete_active(self, op: Op) -> None:
        """Start a `/wait` run, then delete from another device: 409, row and session kept.

        With `flag`, the deleting device then takes the explicit second action: stop the
        run, observe its end, delete (ADR-0050 §4).
        """
        target = choose(self.live, op.pick)
        sid = await self._send(op.device, target, f"/wait {WAIT_SECONDS}")
        if sid is None:
            return
        await self.fleet.reconcile(op.other)  # so it holds the row
        refused = await self._delete(op.other, sid)
        if refused and op.flag:
            await self._delete(op.other, sid, stop_run=True)

    async def _op_trigger(self, op: Op) -> None:
        await self.fleet.trigger(op.device)

    async def _op_reopen(self, op: Op) -> None:
        await self.fleet.reopen(op.device)

    async def _op_outage_start(self, op: Op) -> None:
        self.outage = True  # first: should the switch fail, the quiet phase still sets it up
        await self._object_store(False)

    async def _op_outage_end(self, op: Op) -> None:
        await self._object_store(True)
        self.outage = False

    async def _op_restart(self, op: Op) -> None:
        """SIGTERM the server, keep it down a moment (a delete may be tried meanwhile: it must
        fail and keep the row), start it again on the same database and port."""
        assert self.server is not None
        # With a fleet, the processes take turns, and every other turn (the first one
        # included) is a SIGKILL, a crash: the survivors keep serving and fail its runs.
        server = self.servers[self.report.restarts % len(self.servers)]
        if len(self.servers) > 1 and self.report.restarts % 2 == 0:
            await server.kill()
        else:
            await server.stop()
        if op.flag:
            target = choose(self.live, op.pick)
            if target is not None:
                await self._delete(op.other, target)
        await asyncio.sleep(op.pause)  # deliberate downtime: the devices' timers fail meanwhile
        await server.start()
        self.report.restarts += 1
        if self.outage:  # the fault switch lives in the server's memory
            await self._object_store(False)

    async def _sample_all(self) -> list[list[RowKey]]:
        """Every device's mirror, in device order."""
        rows = await self.fleet.sample(set(self.deleted))
        return [rows[index] for index in range(self.o.devices)]

    # -- quiet phase and checks -------------------------------------------------------------

    async def _quiet_phase(self) -> None:
        """No more operations. First the server settles (runs still active, e.g. a `/wait`,
        end), then the convergence clock starts: poll until every mirror equals the truth
        and stays so, or the deadline (counted from the end of the workload) passes."""
        assert self.truth is not None
        if self.network is not None:
            self.network.heal()  # as the object store comes back: the network too
        if self.outage:
            await self._object_store(True)
            self.outage = False
        quiet_started = time.monotonic()
        self.timeline.add(None, "phase", "quiet phase")
        deadline = quiet_started + self.o.deadline
        poll = max(0.02, min(0.1, self.o.interval / 2))
        while time.monotonic() < deadline:
            truth = await self._truth_or_none()
            if truth is not None and not any(r.active_run_id for r in truth):
                break
            await asyncio.sleep(poll)
        started = time.monotonic()
        self.report.settle_seconds = started - quiet_started
        since: dict[int, float | None] = dict.fromkeys(range(self.o.devices))
        while True:
            now = time.monotonic()
            truth = await self._truth_or_none()
            mirrors = await self._sample_all()
            for device, rows in enumerate(mirrors):
                if truth is not None and rows == truth:
                    if since[device] is None:
                        since[device] = now - started
                else:
                    since[device] = None
            settled = truth is not None and not any(r.active_run_id for r in truth)
            if settled and all(t is not None for t in since.values()):
                break
            if time.monotonic() >= deadline:
                break
            await asyncio.sleep(poll)
        self.report.converge_after = dict(since)
        self.history.converged_after = dict(since)
        self.report.quiet_seconds = time.monotonic() - quiet_started

    async def _truth_or_none(self) -> list[RowKey] | None:
        assert self.truth is not None
        for server in self.servers:
            server.check_alive()
        try:
            return [RowKey.of(view) for view in await self.truth.index()]
        except SyncError as exc:
            log.info("truth walk failed: %s", exc.message)
            return None

    async def _final_checks(self) -> None:
        assert self.truth is not None and self.audit is not None
        await self.fleet.stop_timers()
        truth = [RowKey.of(view) for view in await self.truth.index()]
        self.history.server_index = truth
        mirrors = await self._sample_all()
        self.history.mirrors = {device: rows for device, rows in enumerate(mirrors)}
        self.history.observations = await self.fleet.observations()
        self.report.sessions_final = len(truth)
        self.report.deleted = len(self.deleted)
        self.report.checked |= {Kind.NOT_CONVERGED, Kind.REAPPEARED, Kind.DELETED_STILL_SERVED}
        if self.control is not None:
            await self._stub_audit(self.control)
        self.report.checked.add(Kind.OUTBOX_NOT_DRAINED)
        # The same invariants through the public routes, with or without the control plane.
        public, leftovers = await self.audit.verify(self.deleted)
        self.history.leftovers = [(left.session_id, left.what) for left in leftovers]
        contents = self.audit.contents
        self.report.public_audit = {
            "sessions": len(public),
            "runs": sum(len(contents[s].runs) for s in public if s in contents),
            "artifacts": sum(len(contents[s].artifacts) for s in public if s in contents),
            "leftovers": len(leftovers),
        }
        self.report.checked.add(Kind.RESIDUE)
        # Cross-check every removal against the server's own record of deletions: route 3's
        # tombstone, and the stub's tombstone row when there is a control plane.
        removed = sorted({o.session_id for o in self.history.observations if o.source.is_removal})
        async with self.truth.client() as api:
            for sid in removed[:TOMBSTONE_LIMIT]:
                has = public.get(sid)
                if has is None:
                    has = await self.truth.presence(sid, api) is Presence.TOMBSTONED
                if self.control is not None and has:
                    if sid in self.history.residue:
                        has = self.history.residue[sid].tombstone
                    else:
                        audit = await self.control.residue(sid)
                        has = bool(audit.get("tombstone", False))
                self.history.tombstones[sid] = has
        self.report.tombstones_checked = len(self.history.tombstones)
        self.report.checked.add(Kind.LIVE_PRUNED)

    async def _stub_audit(self, control: ControlPlane) -> None:
        """The control plane's extras: the outbox drains, and the purge left no row or object."""
        pending = await control.maintenance()
        for _ in range(2):  # a pass racing a late byte delete may leave one queued
            if pending == 0:
                break
            pending = await control.maintenance()
        self.history.outbox_pending = pending
        self.report.outbox_pending = pending
        for sid in self.deleted[:RESIDUE_LIMIT]:
            audit = await control.residue(sid)
            self.history.residue[sid] = Residue(
                rows=sum(int(n) for n in audit.get("rows", {}).values()),
                objects=int(audit.get("objects", 0)),
                outbox=int(audit.get("outbox", 0)),
                tombstone=bool(audit.get("tombstone", False)),
            )
        self.report.residue_checked = len(self.history.residue)


# -- command line ---------------------------------------------------------------------------
