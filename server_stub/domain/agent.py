"""The scripted agent of CONTRACT §4: deterministic runs for demos and tests.

Each step is its own short write transaction (the session row locked, the event appended,
the waiters notified after the commit); with no agent delay, the reply and the run's end
are one (`_Run.reply_and_finish`). Cancellation is cooperative: the agent looks at
`cancel_requested` before every step, and its waits (`/wait`, an approval) wake on the run's
notifier, so a cancel ends them at once. The terminal status and terminal event commit
together, after every other write of the run; nothing is written for the run after them.
A step whose write fails ends the run as failed, with the reason: when the database refused
(a full disk, a PostgreSQL restart), the failure is retried with backoff until it commits,
so no run stays active after an outage (CONTRACT §10.2). Tasks belong to the app's
lifespan, which cancels them at shutdown; runs left active by a process that stopped are
failed by a live one (server_stub.domain.leases).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import tenacity
from sqlalchemy import delete, func, select
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Session

from server_stub.db import outage
from server_stub.db.engine import Database
from server_stub.db.models import (
    MAX_NAME,
    ApprovalRow,
    MemoryRow,
    ObjectIntentRow,
    RecallTraceItemRow,
    RunRow,
    SessionRow,
    SkillRevisionRow,
    SkillRow,
)
from server_stub.domain import ids, timestamps
from server_stub.domain.graph import (
    add_approval,
    add_artifact,
    add_memory,
    add_run_state,
    add_skill,
    add_skill_revision,
    add_tool_invocation,
)
from server_stub.domain.history import (
    TERMINAL_STATUSES,
    append_event,
    finish_run,
    lock_session,
    set_run_status,
)
from server_stub.domain.notifier import RunNotifier, wait_for
from server_stub.domain.recall import BATCH as RECALL_BATCH
from server_stub.domain.recall import index_memory, index_rest, matching_memories, words_of
from server_stub.storage.objectstore import ObjectStore, locator_for

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Backoff of a run's failure while the database refuses it: 0.1 s, doubling, at most 2 s
#: (a recovered database is noticed within 2 s; a waiting agent costs one query per 2 s).
FAIL_RETRY_FIRST = 0.1
FAIL_RETRY_MAX = 2.0


class RunCancelled(Exception):
    """The run saw `cancel_requested` and must end as cancelled."""


class RunFailed(Exception):
    """The run must end as failed."""


class RunLost(Exception):
    """The run was ended by another process (its lease expired: this process was taken for
    dead); it must write nothing more."""


@dataclass(frozen=True)
class Command:
    """The parsed first line of the first text block."""

    name: str
    arg: str


def parse_command(text: str) -> Command | None:
    """`/name rest-of-line` from the first line, else None (plain echo)."""
    first = text.split("\n", 1)[0].strip()
    if not first.startswith("/"):
        return None
    name, _, rest = first[1:].partition(" ")
    if name not in {"wait", "approve", "artifact", "remember", "skill", "fail"}:
        return None
    return Command(name, rest.strip())


def wait_seconds(arg: str) -> float:
    """`/wait N`: N seconds within 0..3600; 1 s when N is missing or not a finite number."""
    words = arg.split()
    try:
        seconds = float(words[0]) if words else 1.0
    except ValueError:
        return 1.0
    return min(max(seconds, 0.0), 3600.0) if math.isfinite(seconds) else 1.0


def first_text(message: dict[str, Any]) -> str:
    """The first text block's text ('' when there is none)."""
    for block in message.get("content", []):
        if isinstance(block, dict) and block.get("type") == "text":
            return str(block.get("text", ""))
    return ""


def _stored_name(name: str, what: str) -> str:
    """`name` as given, or the run fails: a name (and the knowledge document's title copied
    from an artifact's) is stored whole, never cut into another name (decision 0193)."""
    if len(name) > MAX_NAME:
        raise RunFailed(f"the {what} name is longer than {MAX_NAME} characters")
    return name


def _reply(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The events of the echo reply to `text`: a few deltas, then the whole message."""
    reply = f"Echo: {text}"
    events: list[tuple[str, dict[str, Any]]] = [
        ("message.assistant.delta", {"text": chunk}) for chunk in split_reply(reply)
    ]
    events.append(
        ("message.assistant", {"role": "assistant", "content": [{"type": "text", "text": reply}]})
    )
    return events


def split_reply(text: str, parts: int = 3) -> list[str]:
    """The reply in a few chunks (streamed as deltas)."""
    size = max(1, -(-len(text) // parts))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class AgentManager:
    """Starts and owns the agent tasks of one app."""

    def __init__(
        self,
        db: Database,
        store: ObjectStore,
        notifier: RunNotifier,
        loop: asyncio.AbstractEventLoop,
        delay: float,
    ) -> None:
        self.db = db
        self.store = store
        self.notifier = notifier
        self.loop = loop
        self.delay = delay
        self.tasks: set[asyncio.Task[None]] = set()
        self._running: dict[str, int] = {}  # run id -> its tasks (executing or failing it)
        self._closing = False
        self.owner = db.instance_id  # the lease owner of the runs this app executes

    def start(self, run_id: str) -> None:
        """Run `run_id` in the background; callable from any thread."""
        self.loop.call_soon_threadsafe(self._spawn, run_id)

    def _spawn(self, run_id: str) -> None:
        if self._closing:
            return
        task = self.loop.create_task(self._guarded(run_id), name=f"agent-{run_id}")
        self.tasks.add(task)
        self._running[run_id] = self._running.get(run_id, 0) + 1

        def done(finished: asyncio.Task[None]) -> None:
            self.tasks.discard(finished)
            left = self._running.pop(run_id, 1) - 1
            if left > 0:
                self._running[run_id] = left

        task.add_done_callback(done)

    def executing(self) -> frozenset[str]:
        """The runs this process executes now (or is failing): their leases are renewed,
        and no other run of this process's is (server_stub.domain.leases)."""
        return frozenset(self._running)

    async def shutdown(self) -> None:
        """Cancel every agent task and wait for them to go."""
        self._closing = True
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.gather(*self.tasks, return_exceptions=True)

    async def _guarded(self, run_id: str) -> None:
        try:
            await _Run(self, run_id).execute()
        except asyncio.CancelledError:
            raise
        except RunLost:
            log.warning("run %s was failed by another process; stopped executing it", run_id)
        except Exception as exc:
            said = outage.reason(exc)
            if said is None:
                log.exception("agent crashed on %s", run_id)
            else:
                log.warning(
                    "run %s: %s; failing it once the database accepts writes again", run_id, said
                )
            await self._fail_when_possible(run_id, said or "internal agent error")

    async def _fail_when_possible(self, run_id: str, reason: str) -> None:
        """Fail the run with `reason`, retrying (with backoff) for as long as the database
        refuses: a run is never left active because its own failure could not be written.

        Retries stop at shutdown (the next start fails the run: server_stub.domain.leases) and on
        an error that is no outage (then the lease, no longer renewed, lets the reaper
        fail it)."""
        outages = outage.OutageLog(log)

        def still_out(state: tenacity.RetryCallState) -> None:
            if state.outcome is not None and (error := state.outcome.exception()) is not None:
                outages.report(f"run {run_id} cannot be failed yet", error)

        try:
            async for attempt in tenacity.AsyncRetrying(
                retry=tenacity.retry_if_exception(outage.is_outage),
                wait=tenacity.wait_exponential(multiplier=FAIL_RETRY_FIRST, max=FAIL_RETRY_MAX),
                before_sleep=still_out,
                reraise=True,
            ):
                with attempt:
                    await asyncio.to_thread(self._fail_now, run_id, reason)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("could not fail %s; its lease will expire and it will be reaped", run_id)

    def _fail_now(self, run_id: str, reason: str) -> None:
        with self.db.write() as s:
            run = s.get(RunRow, run_id)
            if run is None or run.status in TERMINAL_STATUSES:
                return
            session = lock_session(s, run.session_id)
            s.refresh(run)
            if session is None or run.status in TERMINAL_STATUSES:
                return
            for approval in s.scalars(
                select(ApprovalRow).where(
                    ApprovalRow.run_id == run_id, ApprovalRow.status == "pending"
                )
            ):
                approval.status = "cancelled"
                approval.decided_at = timestamps.now()
            finish_run(s, session, run, "failed", {"error": reason})
        self.notifier.notify(run_id, final=True)


class _Run:
    """One execution of one run."""

    def __init__(self, manager: AgentManager, run_id: str) -> None:
        self.m = manager
        self.run_id = run_id
        self.tenant = ""
        self.principal = ""
        self.session_id = ""
        self.message: dict[str, Any] = {}

    async def tx(
        self,
        fn: Callable[[Session, SessionRow, RunRow], T],
        *,
        cancellable: bool = True,
        first: bool = False,
    ) -> T:
        """One write transaction over the locked session and the run; notify after commit.

        A cancellable step first looks at `cancel_requested` inside the same transaction and
        raises RunCancelled (writing nothing) when it is set: every step is a cancel point.
        Every step but the `first` raises RunLost when the run is already terminal (another
        process failed it as orphaned): nothing is written after a terminal event.
        """

        def work() -> T:
            with self.m.db.write() as s:
                run = s.get(RunRow, self.run_id)
                if run is None:
                    raise RunLost
                session = lock_session(s, run.session_id)
                if session is None:
                    raise RunLost
                s.refresh(run)
                if not first and run.status in TERMINAL_STATUSES:
                    raise RunLost
                if cancellable and run.cancel_requested:
                    raise RunCancelled
                return fn(s, session, run)

        result = await asyncio.to_thread(work)
        self.m.notifier.notify(self.run_id)
        return result

    async def cancel_requested(self) -> bool:
        def work() -> bool:
            with self.m.db.read() as s:
                value = s.scalar(select(RunRow.cancel_requested).where(RunRow.id == self.run_id))
                return bool(value)

        return await asyncio.to_thread(work)

    async def pause(self) -> None:
        """Between steps: pause for `--agent-delay` (the next step checks for a cancel)."""
        await asyncio.sleep(self.m.delay)

    async def emit(self, type_: str, data: dict[str, Any]) -> None:
        await self.tx(lambda s, ses, run: append_event(s, ses, run.id, type_, data))

    async def execute(self) -> None:
        def begin(s: Session, ses: SessionRow, run: RunRow) -> bool:
            if run.status in TERMINAL_STATUSES:
                return False
            self.tenant, self.principal, self.session_id = run.tenant, run.principal, ses.id
            self.message = dict(run.input)
            if run.status == "queued":
                set_run_status(s, run, "running")
            return True

        if not await self.tx(begin, cancellable=False, first=True):
            return
        text = first_text(self.message)
        outcome = "completed"
        detail: dict[str, Any] = {}
        try:
            await self.pause()
            command = parse_command(text)
            if command is not None:
                await self.command(command)
            if self.m.delay <= 0:
                recalled = await self.recall(text)
                await self.tx(
                    lambda s, ses, run: self.reply_and_finish(s, ses, run, text, recalled)
                )
                self.m.notifier.notify(self.run_id, final=True)
                return
            await self.echo(text)
        except RunCancelled:
            outcome = "cancelled"
        except RunFailed as exc:
            outcome, detail = "failed", {"error": str(exc)}
        recalled = await self.recall(text)
        await self.tx(
            lambda s, ses, run: self.write_state(s, run, text, outcome, recalled),
            cancellable=False,
        )
        await self.tx(
            lambda s, ses, run: finish_run(s, ses, run, outcome, detail), cancellable=False
        )
        self.m.notifier.notify(self.run_id, final=True)

    def reply_and_finish(
        self, s: Session, ses: SessionRow, run: RunRow, text: str, recalled: set[str]
    ) -> None:
        """With no agent delay, the reply, the run's state and its end in one transaction:
        the same events in the same order as `echo` and the steps after it, in one commit.
        Every commit that moves the index wakes every watching device of the principal
        (CONTRACT §9.1), so a turn costs each of them one wake fewer."""
        for type_, data in _reply(text):
            append_event(s, ses, run.id, type_, data)
        self.write_state(s, run, text, "completed", recalled)
        finish_run(s, ses, run, "completed", {})

    async def echo(self, text: str) -> None:
        """`Echo: <text>` as a few deltas and one whole message, a step each."""
        for type_, data in _reply(text):
            await self.emit(type_, data)
            await self.pause()

    async def command(self, command: Command) -> None:
        handler = {
            "wait": self.do_wait,
            "approve": self.do_approve,
            "artifact": self.do_artifact,
            "remember": self.do_remember,
            "skill": self.do_skill,
            "fail": self.do_fail,
        }[command.name]
        await handler(command.arg)

    async def do_fail(self, _arg: str) -> None:
        raise RunFailed("scripted failure")

    async def do_wait(self, arg: str) -> None:
        seconds = wait_seconds(arg)
        start = time.monotonic()
        deadline = start + seconds
        next_tick = start + 1.0
        while True:
            wake = self.m.notifier.waiter(self.run_id)
            if await self.cancel_requested():
                raise RunCancelled
            now = time.monotonic()
            # A tick due before the deadline is streamed even when this task woke late (a
            # busy machine): "a delta each whole second" stays true of the stream.
            if now >= next_tick and next_tick < deadline:
                await self.emit("message.assistant.delta", {"text": "."})
                next_tick += 1.0
                continue
            if now >= deadline:
                return
            await wait_for(wake, min(next_tick, deadline) - now)

    async def do_approve(self, arg: str) -> None:
        tool = _stored_name(arg.split()[0] if arg.split() else "tool", "tool")

        def request(s: Session, ses: SessionRow, run: RunRow) -> str:
            approval = add_approval(s, run, ids.new_id("apr"), tool, "pending", timestamps.now())
            append_event(
                s, ses, run.id, "approval.requested", {"approval_id": approval.id, "tool": tool}
            )
            set_run_status(s, run, "waiting_for_approval")
            return approval.id

        approval_id = await self.tx(request)
        while True:
            wake = self.m.notifier.waiter(self.run_id)
            status, cancel = await asyncio.to_thread(self._approval_state, approval_id)
            if status in ("approved", "denied"):
                break
            if cancel or status == "cancelled":
                await self.tx(
                    lambda s, ses, run: self._cancel_approval(s, ses, run, approval_id),
                    cancellable=False,
                )
                raise RunCancelled
            await wait_for(wake, 1.0)
        if status == "approved":

            def invoke(s: Session, ses: SessionRow, run: RunRow) -> None:
                output = f"{tool} ran"
                add_tool_invocation(s, run, approval_id, tool, output, timestamps.now())
                append_event(
                    s,
                    ses,
                    run.id,
                    "tool.invocation",
                    {"tool": tool, "status": "succeeded", "output": output},
                )

            await self.pause()
            await self.tx(invoke)

    def _approval_state(self, approval_id: str) -> tuple[str, bool]:
        with self.m.db.read() as s:
            approval = s.get(ApprovalRow, approval_id)
            run = s.get(RunRow, self.run_id)
            return (
                approval.status if approval else "cancelled",
                bool(run and run.cancel_requested),
            )

    @staticmethod
    def _cancel_approval(s: Session, ses: SessionRow, run: RunRow, approval_id: str) -> None:
        approval = s.get(ApprovalRow, approval_id)
        if approval is not None and approval.status == "pending":
            approval.status = "cancelled"
            approval.decided_at = timestamps.now()
            append_event(
                s,
                ses,
                run.id,
                "approval.resolved",
                {"approval_id": approval_id, "decision": "cancelled"},
            )

    async def do_artifact(self, arg: str) -> None:
        name, _, rest = arg.partition(" ")
        name = _stored_name(name or "artifact.txt", "artifact")
        data = rest.strip().encode("utf-8")
        artifact_id = ids.new_id("art")
        locator = locator_for(self.session_id, artifact_id)

        def intend(s: Session, ses: SessionRow, run: RunRow) -> None:
            # Committed before the bytes exist: whatever happens next, a row names them.
            s.add(
                ObjectIntentRow(
                    locator=locator,
                    session_id=ses.id,
                    run_id=run.id,
                    created_at=timestamps.now(),
                )
            )

        await self.tx(intend)
        try:
            await asyncio.to_thread(self.m.store.put, locator, data)
        except OSError as exc:
            raise RunFailed(f"could not store the artifact ({type(exc).__name__})") from exc

        def record(s: Session, ses: SessionRow, run: RunRow) -> None:
            claimed = s.execute(delete(ObjectIntentRow).where(ObjectIntentRow.locator == locator))
            if getattr(claimed, "rowcount", 1) == 0:
                raise RunFailed("the artifact's write intent is gone")
            add_artifact(s, run, artifact_id, name, data, locator, timestamps.now())
            append_event(
                s, ses, run.id, "artifact.created", {"artifact_id": artifact_id, "name": name}
            )

        await self.tx(record)

    async def do_remember(self, arg: str) -> None:
        text = arg.strip()
        if not text:
            return
        words = await asyncio.to_thread(words_of, text)  # outside the write lock
        formed: list[tuple[MemoryRow, list[str]]] = []

        def form(s: Session, ses: SessionRow, run: RunRow) -> None:
            same_text = (
                select(MemoryRow)
                .where(
                    MemoryRow.tenant == run.tenant,
                    MemoryRow.principal == run.principal,
                    MemoryRow.text == text,
                )
                .order_by(MemoryRow.created_at, MemoryRow.id)
                .limit(1)
            )
            if s.get_bind().dialect.name == "postgresql":
                # A purge may be removing that memory: wait for it rather than update a row
                # it deletes (the update found no row and failed the run).
                same_text = same_text.with_for_update()
            existing = s.scalars(same_text.execution_options(populate_existing=True)).first()
            if existing is not None:
                existing.reinforcement_count += 1
                append_event(
                    s,
                    ses,
                    run.id,
                    "memory.formed",
                    {"memory_id": existing.id, "reinforced": True},
                )
                return
            memory = add_memory(s, run, ids.new_id("mem"), text, 0, timestamps.now(), index=False)
            rest = index_memory(s, memory, words, limit=RECALL_BATCH)
            formed.append((memory, rest))
            append_event(
                s, ses, run.id, "memory.formed", {"memory_id": memory.id, "reinforced": False}
            )

        await self.tx(form)
        for memory, rest in formed:
            if rest:  # a large memory: the rest of its words in short transactions
                await asyncio.to_thread(index_rest, self.m.db, memory, rest)

    async def do_skill(self, arg: str) -> None:
        name = _stored_name(arg.strip() or "skill", "skill")

        def publish(s: Session, ses: SessionRow, run: RunRow) -> None:
            now = timestamps.now()
            query = select(SkillRow).where(
                SkillRow.tenant == run.tenant,
                SkillRow.principal == run.principal,
                SkillRow.name == name,
            )
            if s.get_bind().dialect.name == "postgresql":
                # Two runs of one principal publishing the same skill at once (in two
                # sessions) both created the skill, or both took max(revision) + 1: a unique
                # violation that failed a run. Create it idempotently and lock its row, so
                # revision numbers are taken one at a time (lock order: session, then skill).
                s.execute(
                    postgresql.insert(SkillRow)
                    .values(
                        id=ids.new_id("skl"),
                        tenant=run.tenant,
                        principal=run.principal,
                        name=name,
                        created_at=now,
                    )
                    .on_conflict_do_nothing(index_elements=["tenant", "principal", "name"])
                )
                query = query.with_for_update()
            skill = s.scalars(query.execution_options(populate_existing=True)).first()
            if skill is None:
                skill = add_skill(s, run, ids.new_id("skl"), name, now)
            latest = s.scalar(
                select(func.max(SkillRevisionRow.revision)).where(
                    SkillRevisionRow.skill_id == skill.id
                )
            )
            revision = add_skill_revision(
                s, run, ids.new_id("rev"), skill.id, int(latest or 0) + 1, now
            )
            s.flush()
            append_event(
                s,
                ses,
                run.id,
                "skill.published",
                {"skill_id": skill.id, "revision_id": revision.id, "name": name},
            )

        await self.tx(publish)

    async def recall(self, text: str) -> set[str]:
        """The memories the message recalls, looked up before the write transaction (no
        lock held; the cost follows the message: server_stub.domain.recall)."""
        words = words_of(text)
        return await asyncio.to_thread(
            matching_memories, self.m.db, self.tenant, self.principal, words
        )

    def write_state(
        self, s: Session, run: RunRow, text: str, outcome: str, recalled: set[str]
    ) -> None:
        """Checkpoint, projection and recall trace of the run (before its terminal write)."""
        state = {"outcome": outcome, "input_chars": len(text)}
        trace = add_run_state(s, run, state, text[:200], timestamps.now())
        s.flush()
        if not recalled:
            return
        wanted = sorted(recalled)
        for start in range(0, len(wanted), 500):
            still = (
                select(MemoryRow.id, MemoryRow.source_session_id)
                .where(MemoryRow.id.in_(wanted[start : start + 500]))
                .order_by(MemoryRow.id)
            )
            if s.get_bind().dialect.name == "postgresql":
                # Key-share locks: a purge removing one of these memories waits for this
                # commit (and then sees the trace items), or this waits for the purge and
                # skips the deleted rows; never an item pointing at a memory being removed.
                # Both lock in id order, so they cannot deadlock.
                still = still.with_for_update(read=True, key_share=True)
            for memory_id, session_id in s.execute(still):
                s.add(
                    RecallTraceItemRow(
                        trace_id=trace.id, memory_id=memory_id, memory_session_id=session_id
                    )
                )
