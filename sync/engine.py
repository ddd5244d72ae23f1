"""`SyncEngine`: the one object the window and the command line talk to.

It owns the API client and the profile's mirror, runs reconcile passes (one at a time,
triggers coalesced) and their content phase (`sync.reconcile.content`), deletes server-first,
opens, searches and follows conversations. Listeners get `IndexChanged` ("the mirror changed
up to N": they pull with `changes_since`), `TranscriptChanged` and `StatusChanged` on the
event loop's thread, and should be quick. No Qt here; the events (`sync.events`), the
triggers (`sync.reconcile.triggers`) and the delete outcomes are plain values the window
imports before this module (and httpx) is loaded.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

import httpx

from sync import wording
from sync.api.bounds import DEFAULT_BOUNDS, Bounds
from sync.api.client import PAGE_LIMIT, ApiClient
from sync.api.conversation import follow_run, transcript
from sync.api.tls import client_context
from sync.delete.outcome import DeleteOutcome, DeleteStatus
from sync.delete.service import DeleteService
from sync.errors import (
    MessageTooLong,
    MirrorError,
    NotFound,
    SyncError,
    Unauthenticated,
    Unavailable,
    loggable,
)
from sync.events import (
    EngineEvents,
    EngineState,
    EngineStatus,
    Listener,
    StatusChanged,
    TriggerReason,
    state_after,
)
from sync.files.cache import ArtifactCache
from sync.mirror.file_index import CachedFile
from sync.mirror.reader import MirrorChanges
from sync.mirror.search import SEARCH_LIMIT, SearchHit
from sync.mirror.store import Mirror
from sync.mirror.transcripts import MirroredTranscript
from sync.profile.profile import Profile
from sync.reconcile.content import WATCHING_PACE, ContentSync
from sync.reconcile.reconciler import Coalescer, Reconciler, ReconcileReport
from sync.reconcile.triggers import DEFAULT_TIMER_INTERVAL, EngineWatch, PassTimer
from sync.reconcile.walk import PageHook
from sync.reconcile.watch import DEFAULT_WAIT, IndexWatch, WatchState
from sync.wire.models import (
    MAX_MESSAGE_CHARACTERS,
    Approval,
    Event,
    RunView,
    SessionView,
    text_message,
)

log = logging.getLogger(__name__)


class SyncEngine:
    """The facade of `docs/architecture.md`; construct with `await SyncEngine.open(profile)`."""

    def __init__(
        self,
        profile: Profile,
        api: ApiClient,
        mirror: Mirror,
        *,
        page_limit: int = PAGE_LIMIT,
        use_etag: bool = True,
        timer_interval: float = DEFAULT_TIMER_INTERVAL,
        page_hook: PageHook | None = None,
        delete_concurrency: int = 4,
        bounds: Bounds = DEFAULT_BOUNDS,
    ) -> None:
        self.profile = profile
        self.api = api
        self.mirror = mirror
        self._events = EngineEvents()
        self._deleted: set[str] = set()
        self._status = EngineStatus(EngineState.IDLE)
        self.reconciler = Reconciler(
            api,
            mirror,
            cache_dir=profile.cache_dir,
            page_limit=page_limit,
            use_etag=use_etag,
            skip=self._deleted.__contains__,
            page_hook=page_hook,
            on_report=self._events.announce_pass,
            bounds=bounds,
        )
        self._coalescer = Coalescer(self._run_pass)
        self._deleter = DeleteService(
            api,
            mirror,
            profile.cache_dir,
            on_removed=self._deleted.add,
            concurrency=delete_concurrency,
            on_applied=self._events.announce_write,
        )
        self._cache = ArtifactCache(api, mirror, profile.cache_dir)
        announce = self._events.announce_transcripts
        self.content = ContentSync(api, mirror, profile.cache_dir, profile.content_budget, announce)
        self._timer = PassTimer(self.trigger, timer_interval)
        self._watch = EngineWatch(api, mirror, self._coalescer, lambda: self._closed, page_limit)
        self._pass_listeners: list[Callable[[ReconcileReport], None]] = []
        self._background: set[asyncio.Task[object]] = set()
        self._closed = False
        self._loop = asyncio.get_running_loop()  # `open`'s, where deferred triggers run

    @classmethod
    async def open(
        cls,
        profile: Profile,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        page_limit: int = PAGE_LIMIT,
        use_etag: bool = True,
        timer_interval: float = DEFAULT_TIMER_INTERVAL,
        retry_attempts: int = 3,
        page_hook: PageHook | None = None,
        bounds: Bounds = DEFAULT_BOUNDS,
        mirror_path: Path | None = None,
    ) -> SyncEngine:
        """Open the profile's mirror (migrating it) and the API client.

        Raises ProfileError (no server or token), MirrorTooNew, MirrorDamaged, MirrorError.
        Makes no request: call `trigger(TriggerReason.CONNECT)` once the window is up.
        `mirror_path` (default the profile's) is where `sync.repair` builds a new mirror.
        """
        server, token = profile.require_connection()
        tls = client_context(profile.ca_bundle)  # a bad CA bundle is named before anything
        await asyncio.to_thread(profile.ensure_dirs)
        mirror = await asyncio.to_thread(Mirror.open, mirror_path or profile.mirror_path)
        await asyncio.to_thread(mirror.bind_identity, profile.connection_identity)
        api = ApiClient(
            server,
            token,
            transport=transport,
            retry_attempts=retry_attempts,
            tls=tls,
            bounds=bounds,
        )
        return cls(
            profile,
            api,
            mirror,
            page_limit=page_limit,
            use_etag=use_etag,
            timer_interval=timer_interval,
            page_hook=page_hook,
            bounds=bounds,
        )

    # -- events -----------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add a listener; returns the function that removes it."""
        return self._events.subscribe(listener)

    @property
    def status(self) -> EngineStatus:
        return self._status

    def _set_status(self, status: EngineStatus) -> None:
        if status != self._status:
            self._status = status
            self._events.emit(StatusChanged(status))

    # -- the mirror -------------------------------------------------------------------------

    async def rows(self, filter_text: str = "") -> list[SessionView]:
        """Sidebar rows (updated_at DESC, id DESC), read off the event loop thread."""
        return await asyncio.to_thread(self.mirror.rows, filter_text)

    async def changes_since(
        self, since: int | None, filter_text: str = "", limit: int | None = None
    ) -> MirrorChanges:
        """`Mirror.changes_since` off the event loop thread: what a view of
        `rows(filter_text)` at change sequence `since` applies to show the mirror now."""
        return await asyncio.to_thread(self.mirror.changes_since, since, filter_text, limit)

    async def row(self, session_id: str) -> SessionView | None:
        return await asyncio.to_thread(self.mirror.get, session_id)

    # -- reconcile --------------------------------------------------------------------------

    def trigger(self, reason: TriggerReason) -> None:
        """Ask for a pass (during a pass, all fold into exactly one more). With no loop running
        (a Qt timer in `processEvents()` between two runs) it is deferred to `open`'s loop."""
        if self._closed:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            if not self._loop.is_closed():
                self._loop.call_soon(self.trigger, reason)
            return
        future = self._coalescer.request(reason)
        future.add_done_callback(_consume_future)

    async def reconcile(self, reason: TriggerReason = TriggerReason.MANUAL) -> ReconcileReport:
        """Run (or join) a pass that starts no earlier than this call, and return its report.

        Never raises for network or server conditions: see `report.error` (nothing pruned;
        the walk's pages stay) and `report.point_read_error` (written, some rows kept).
        """
        return await asyncio.shield(self._coalescer.request(reason))

    @property
    def passes_started(self) -> int:
        return self._coalescer.passes_started

    def add_pass_listener(self, listener: Callable[[ReconcileReport], None]) -> None:
        """`listener(report)` after every pass, changed or not (`converge watch` prints)."""
        self._pass_listeners.append(listener)

    async def _run_pass(self, reason: TriggerReason) -> ReconcileReport:
        report = await self._run_pass_inner(reason)
        for listener in list(self._pass_listeners):
            try:
                listener(report)
            except Exception:
                log.exception("pass listener failed")
        return report

    async def _run_pass_inner(self, reason: TriggerReason) -> ReconcileReport:
        last_success = self._status.last_success
        self._set_status(EngineStatus(EngineState.SYNCING, "Synchronizing…", last_success))
        try:
            report = await self.reconciler.run_pass(reason)  # its IndexChanged is already out
        except MirrorError as exc:  # a read of the mirror failed (damaged): nothing written
            report = ReconcileReport(reason=reason, error=exc)
        # The rows are committed: content follows, never before. A pass that wrote no row
        # (a 304, a prune) leaves no transcript behind: it starts no phase unless one is due.
        if report.error is None and (report.inserted or report.updated or self.content.behind):
            self.content.kick()
        problem = report.problem
        if problem is None:
            self._set_status(EngineStatus(EngineState.IDLE, "", time.time()))
            self._watch.kick()
            return report
        message = problem.message
        if report.error is None:  # the walk was written; some point reads were inconclusive
            message = wording.unconfirmed(
                len(report.kept), message, token_refused=isinstance(problem, Unauthenticated)
            )
        elif isinstance(problem, Unavailable):
            message = wording.will_try_again(message)
        self._set_status(EngineStatus(state_after(problem), message, last_success, problem))
        return report

    @property
    def timer_interval(self) -> float:
        return self._timer.interval

    @timer_interval.setter
    def timer_interval(self, interval: float) -> None:
        self._timer.interval = interval

    def start_timer(self, interval: float | None = None) -> None:
        """Trigger TIMER every `interval` seconds (default 30) until `stop_timer`/`close`."""
        self._timer.start(interval)

    def stop_timer(self) -> None:
        self._timer.stop()

    # -- the index watch (CONTRACT §9.1) ---------------------------------------------------

    def start_watch(self, wait: int = DEFAULT_WAIT) -> None:
        """Keep one watch open on the index until `stop_watch`/`close`: a change on the
        server triggers a pass at once. The other triggers are unaffected; against a server
        that does not hold watches this ends by itself (`watch_state` UNSUPPORTED)."""
        if self._closed or not self.reconciler.use_etag:
            return
        self.content.pace = WATCHING_PACE  # a pass per change: content follows at a pace
        self._watch.start(wait)

    async def stop_watch(self) -> None:
        """Cancel the open watch (its request is closed) and wait until it has ended."""
        self.cancel_watch()
        await self._watch.stop()

    def cancel_watch(self) -> None:
        """`stop_watch` for synchronous callers (a window detaching): cancelled, not awaited."""
        self.content.pace = 0.0  # no pass per change any more: content at once
        self._watch.cancel()

    @property
    def server_clock_offset(self) -> float:
        """Seconds the server's clock is ahead of this machine's (`sync.api.server_clock`):
        relative dates add it to "now", so a wrong local clock does not say "Just now"."""
        return self.api.clock.offset

    @property
    def watch_state(self) -> WatchState:
        return self._watch.state

    @property
    def watch(self) -> IndexWatch | None:
        return self._watch.watch

    # -- delete -----------------------------------------------------------------------------

    async def delete(self, session_id: str) -> DeleteOutcome:
        """Server-first delete of one session; see `DeleteOutcome.status`."""
        outcome = await self._deleter.delete(session_id)  # its IndexChanged is already out
        if outcome.status is DeleteStatus.ACTIVE_RUN:
            await self._refresh_one(session_id)
        return outcome

    async def mark_delete_unconfirmed(self, session_id: str) -> None:
        """Mark a row whose delete was sent but never answered (a caller's own deadline)."""
        await asyncio.to_thread(self.mirror.mark_unconfirmed, session_id)

    async def unconfirmed_deletes(self) -> set[str]:
        """Rows whose delete may or may not have happened, until a retry or a sync settles."""
        return await asyncio.to_thread(self.mirror.unconfirmed_deletes)

    async def delete_many(self, ids: Sequence[str]) -> list[DeleteOutcome]:
        """One outcome per id, in order (bounded concurrency)."""
        outcomes = await self._deleter.delete_many(ids)
        for outcome in outcomes:
            if outcome.status is DeleteStatus.ACTIVE_RUN:
                await self._refresh_one(outcome.session_id)
        return outcomes

    async def stop_run_and_delete(
        self, session_id: str, *, run_id: str | None = None, timeout: float = 30.0
    ) -> DeleteOutcome:
        """The explicit second action after a 409: cancel, observe the end, then delete."""
        return await self._deleter.stop_run_and_delete(session_id, run_id=run_id, timeout=timeout)

    async def _refresh_one(self, session_id: str) -> SessionView | None:
        """Point-read one session into the mirror (best effort; prune on 404)."""
        try:
            view = await self.api.get_session(session_id)
        except NotFound:
            view = None
        except SyncError as exc:
            log.info("refresh of %s failed: %s", session_id, loggable(exc))
            return None
        upserts, removals = ([view], []) if view is not None else ([], [session_id])
        applied = await asyncio.to_thread(
            self.mirror.apply, upserts, removals, skip=self._deleted.__contains__
        )
        self._events.announce_write(applied)
        return view

    # -- conversations ----------------------------------------------------------------------

    async def transcript(self, session_id: str) -> list[Event]:
        """All pages of the session's events from the server, in sequence order."""
        return await transcript(self.api, session_id)

    async def mirrored_transcript(self, session_id: str, after: int = 0) -> MirroredTranscript:
        """The mirror's copy of a conversation (after sequence `after`): at once, offline."""
        return await asyncio.to_thread(self.mirror.mirrored_transcript, session_id, after)

    async def refresh_transcript(self, session_id: str) -> bool:
        """Fetch what the mirror lacks of one conversation (all of it when evicted); True
        when events were added (`TranscriptChanged` is emitted too). Raises SyncError."""
        return await self.content.refresh(session_id)

    async def search(self, query: str, limit: int = SEARCH_LIMIT) -> list[SearchHit]:
        """Conversations matching `query`, in activity order (`sync.mirror.search`)."""
        return await asyncio.to_thread(self.mirror.search, query, limit)

    async def stream_run(self, run_id: str, after: int | None = None) -> AsyncIterator[Event]:
        """The run's events after `after`, live, resuming over dropped connections; ends
        after the terminal event (then the session's row is refreshed). Cancel the consuming
        task to stop early (PITFALLS §2)."""
        async for event in follow_run(self.api, run_id, after=after):
            yield event
            if event.is_terminal:
                await self._refresh_one(event.session_id)

    async def send_message(self, session_id: str | None, text: str) -> tuple[SessionView, RunView]:
        """Start a run with `text` (in a new session when `session_id` is None). Raises
        `MessageTooLong` before any request for a text past `MAX_MESSAGE_CHARACTERS`."""
        if len(text) > MAX_MESSAGE_CHARACTERS:
            raise MessageTooLong(len(text), MAX_MESSAGE_CHARACTERS)
        if session_id is None:
            created = await self.api.create_session()
            session_id = created.id
        run = await self.api.start_run(session_id, text_message(text))
        view = await self._refresh_one(session_id)
        if view is None:
            view = await self.api.get_session(session_id)
        return view, run

    async def cancel_run(self, run_id: str) -> RunView:
        return await self.api.cancel_run(run_id)

    async def get_run(self, run_id: str) -> RunView:
        return await self.api.get_run(run_id)

    async def decide_approval(self, approval_id: str, decision: str) -> Approval:
        """`decision` is "approve" or "deny"."""
        return await self.api.decide_approval(approval_id, decision)

    async def artifact_file(self, artifact_id: str) -> Path:
        """The artifact's bytes as a cached, sha256-verified file."""
        return await self._cache.file(artifact_id)

    async def held_artifact(self, artifact_id: str) -> tuple[CachedFile, Path] | None:
        """The cached metadata and verified bytes if held here; never a request."""
        return await self._cache.held(artifact_id)

    # -- lifetime ---------------------------------------------------------------------------

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.stop_timer()
        await self.stop_watch()
        await self._coalescer.aclose()
        await self.content.aclose()
        await self.api.aclose()
        await asyncio.to_thread(self.mirror.close)

    async def __aenter__(self) -> SyncEngine:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _consume_future(future: asyncio.Future[ReconcileReport]) -> None:
    """Retrieve a fire-and-forget pass's outcome so asyncio never warns about it."""
    if future.cancelled():
        return
    exc = future.exception()
    if exc is not None:
        log.error("reconcile pass failed: %r", exc)
