"""The conversation the pane shows, as one object: loading it, catching up with turns taken
elsewhere, following its live run, and the user's actions on it (send, stop, approve or
deny, what a memory says), each a window action (`ui.window.action`).

Every task it starts is its own, and `close()` cancels them together. The window closes the
open conversation before it shows another one, when it is deleted (here or elsewhere) and
when the window closes; so a transcript that arrives late, a stream still delivering, or a
catch-up of the previous conversation can never write into the pane, and a send that
returns after the user has moved on cannot take the pane back or cancel the other
conversation's live reply.

Two kinds of work outlive it on purpose. A request the user made (a message, Stop, a
decision) is never cut by a click elsewhere: the waiting is cancelled, not the request, so
it cannot be left half-done on the server (`_request`). Opening or saving one of its files
is started by the window (`ui.window.file_actions`), not here: it writes to disk, never into the
pane. Stop and "Replying…" follow the run's state (`run_state`): the run streamed, or the
row that says it is active, never the last delta.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sync import (
    EngineState,
    Event,
    NetworkError,
    NotFound,
    RunInProgress,
    SyncError,
    TlsError,
    TriggerReason,
    memory_texts,
)
from ui.pane.pane import ConversationPane
from ui.sidebar.model import display_title, untitled
from ui.sidebar.row import SidebarRow
from ui.window.action import ActionRunner, WindowAction
from ui.window.failure_words import Cause, describe
from ui.window.main_window import MainWindow
from ui.window.status_presenter import StatusPresenter, offline_words

if TYPE_CHECKING:
    from sync import MirroredTranscript, RunView, SessionView, SyncEngine

log = logging.getLogger(__name__)

type Spawn = Callable[[Coroutine[Any, Any, Any], str | None], asyncio.Task[Any]]


class OpenConversation:
    """One open conversation (`session_id` None: a new one, created by its first message)."""

    def __init__(
        self,
        session_id: str | None,
        *,
        window: MainWindow,
        engine: Callable[[], SyncEngine],
        presenter: StatusPresenter,
        actions: ActionRunner,
        spawn: Spawn,
        on_created: Callable[[str], None],
        on_reply_done: Callable[[str], None] | None = None,
    ) -> None:
        self.session_id = session_id
        self.window = window
        self.pane: ConversationPane = window.pane
        self.load_failed = False  # the transcript could not be read (reloaded on reconnect)
        self.following_run: str | None = None
        self.follow_task: asyncio.Task[None] | None = None
        self.active_run: str | None = None  # the run Stop stops (streamed or listed active)
        self._actions = actions  # every user action runs through it (ui.window.action)
        self._engine = engine
        self._presenter = presenter
        self._spawn = spawn  # the window's: logs a failure and shows it as words
        self._on_created = on_created
        self._on_reply_done = on_reply_done  # a streamed run reached its end (a notification)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False
        self._sending = False
        self._last_seq = 0  # the last event sequence the pane shows
        self._seen_updated_at: str | None = None  # the row's activity the pane shows
        self._catching_up = False
        self.saved: MirroredTranscript | None = None  # what the mirror last held of it

    # --- its tasks, as a unit -----------------------------------------------------------

    def spawn(self, coro: Coroutine[Any, Any, Any], what: str) -> asyncio.Task[Any]:
        """Run `coro` as one of this conversation's tasks (cancelled by `close`)."""
        task = self._spawn(coro, what)
        if self._closed:
            task.cancel()  # never starts: a closed conversation writes nothing
            return task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    @property
    def tasks(self) -> frozenset[asyncio.Task[Any]]:
        """Its unfinished tasks (a closed conversation's are all cancelled)."""
        return frozenset(self._tasks)

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Cancel everything this conversation runs; nothing of it touches the pane again."""
        if self._closed:
            return
        self.stop_following()
        self._closed = True
        if self._sending:
            self.pane.clear_composer()  # the text went with the message, which still goes
            self.pane.set_sending(False)
        for task in list(self._tasks):
            task.cancel()

    async def _request[T](self, coro: Coroutine[Any, Any, T], what: str) -> T:
        """Await a request the user made: closing cancels the waiting, not the request
        (the window still tracks it, so shutting down cancels it). If it fails after the
        user left, the status line still says so."""
        request = self._spawn(coro, None)
        try:
            return await asyncio.shield(request)
        except asyncio.CancelledError:
            request.add_done_callback(lambda done: self._failed_after_leaving(done, what))
            raise

    def _failed_after_leaving(self, request: asyncio.Task[Any], what: str) -> None:
        if request.cancelled():
            return  # the window closed
        error = request.exception()
        if error is not None:  # on the status line only: the pane shows another one now
            self._actions.fail(WindowAction(what, self._never, in_pane=lambda: False), error)

    # --- loading ------------------------------------------------------------------------

    async def load(self) -> None:
        """Show the mirrored transcript at once, ask the server for what is new, then
        follow the active run if there is one. Offline, the mirrored copy stays, and the
        banner says it is the copy saved on this device (`offline_words`)."""
        assert self.session_id is not None
        session_id = self.session_id
        engine = self._engine()
        row = self.window.model.find(session_id)
        self._last_seq = 0
        title = display_title(row) if row else "Conversation"
        self.pane.show_session(session_id, title, row.updated_at if row else "")
        self._seen_updated_at = row.updated_at if row else None
        mirrored = await engine.mirrored_transcript(session_id)
        if mirrored.state is None:  # not in the mirror (yet): the server's log, as before
            await self._load_from_server(session_id)
            return
        self.saved = mirrored
        self.pane.set_events(mirrored.events)
        self._last_seq = mirrored.events[-1].sequence if mirrored.events else 0
        offline = engine.status.state is EngineState.OFFLINE
        if offline:
            self.pane.show_banner(offline_words(mirrored))
        elif not mirrored.events and not mirrored.state.current:
            self.pane.show_banner("Loading…")  # only when the mirror has nothing to show
        if await self.refresh() and row is not None and row.active_run_id:
            self._follow(row.active_run_id, self._last_seq)

    async def refresh(self) -> bool:
        """Fetch what the mirror lacks of this conversation and append it; False (and the
        banner says why) when the server could not be asked."""
        assert self.session_id is not None
        engine, session_id = self._engine(), self.session_id
        fetched = await self._actions.run(
            self._load_action(lambda: engine.refresh_transcript(session_id))
        )
        if fetched is None:
            self.load_failed = True
            return False
        if not fetched and engine.status.state is EngineState.OFFLINE:
            self.load_failed = True  # the mirror had it all; the server is still unreached
            self.pane.show_banner(offline_words(self.saved))
            return False
        self.load_failed = False
        self.pane.clear_sentence()
        await self._append_mirrored()
        return True

    async def reconnected(self) -> None:
        """Back online after it could not be refreshed: catch up, or load it afresh when
        nothing of it was shown."""
        if self.saved is None:
            await self.load()
            return
        row = self.window.model.find(self.session_id) if self.session_id else None
        if await self.refresh() and row is not None and row.active_run_id:
            self._follow(row.active_run_id, self._last_seq)

    async def _load_from_server(self, session_id: str) -> None:
        self.pane.show_banner("Loading…")
        engine = self._engine()
        events = await self._actions.run(self._load_action(lambda: engine.transcript(session_id)))
        if events is None:
            self.load_failed = True
            return
        self.load_failed = False
        self.pane.clear_sentence()
        self._append(events)
        row = self.window.model.find(session_id)
        if row is not None and row.active_run_id:
            self._follow(row.active_run_id, self._last_seq)

    def _load_action[T](self, op: Callable[[], Coroutine[Any, Any, T]]) -> WindowAction[T]:
        """Reading the conversation: a 404 says it was deleted; offline, the banner says
        which copy is shown (`offline_words`), with Retry."""

        def handle(error: SyncError) -> bool:
            if isinstance(error, NotFound):
                self.pane.show_deleted_elsewhere()
                self._engine().trigger(TriggerReason.MANUAL)
                return True
            if not isinstance(error, NetworkError) or isinstance(error, TlsError):
                return False
            failure = describe(error, host=self._actions.host())
            lead = "" if failure.cause is Cause.OFFLINE else failure.words.rstrip(".")
            failure = replace(failure, words=offline_words(self.saved, lead))
            self.pane.show_failure(failure, self._actions.fixes(action), action.what)
            self._presenter.suspect_offline()
            return True

        action = WindowAction(
            "open the conversation",
            op,
            handle=handle,
            retry=self.retry_load,
            in_pane=self.shown,
            user=False,
        )
        return action

    def retry_load(self) -> None:
        """Retry: read the conversation again (a catch-up when some of it is shown)."""
        self.spawn(self.reconnected(), "open the conversation")

    def shown(self) -> bool:
        """The pane still shows this conversation."""
        return not self._closed

    def _append(self, events: list[Event]) -> None:
        """Append the events after the last one shown (each path may see some twice)."""
        for event in events:
            if event.sequence > self._last_seq:
                self._last_seq = event.sequence
                self.pane.append_event(event)

    async def _append_mirrored(self) -> None:
        """Pull only the events after the last one shown (the pane keeps the rest)."""
        assert self.session_id is not None
        mirrored = await self._engine().mirrored_transcript(self.session_id, self._last_seq)
        if mirrored.state is not None:
            kept = self.saved.events if self.saved is not None else []
            self.saved = replace(mirrored, events=[*kept, *mirrored.events])
        self._append(mirrored.events)

    def transcript_changed(self) -> None:
        """The mirror gained events of this conversation (a pass, another device's turn):
        append them from the mirror, without asking the server."""
        if not self._closed and self.session_id is not None:
            self.spawn(self._append_mirrored(), "update the conversation")

    def row_changed(self, row: SidebarRow) -> None:
        """The sidebar applied a pass that holds this conversation's row: a new title, a run
        started elsewhere to follow, or turns that ended between two passes to append."""
        if self._closed or row.id != self.session_id:
            return
        self.pane.update_header(display_title(row), row.updated_at)
        self.run_state(row)
        if (
            not row.active_run_id
            and self.following_run is None
            and row.updated_at != self._seen_updated_at
            and not self._catching_up
        ):
            # Activity from another device that ended between two reconciles.
            self.spawn(self._catch_up(row.updated_at), "update the conversation")

    async def _catch_up(self, updated_at: str) -> None:
        """Fetch what the mirror lacks (events after its last sequence) and append it."""
        self._catching_up = True
        try:
            if await self.refresh():
                self._seen_updated_at = updated_at
        finally:
            self._catching_up = False

    # --- its live run -------------------------------------------------------------------

    def _follow(self, run_id: str, after: int | None) -> None:
        """Stream `run_id` into the pane (once: a second call for the same run while its
        stream is open does nothing, so a pass that lists the run never restarts it)."""
        if run_id == self.following_run and self.follow_task and not self.follow_task.done():
            return
        self.stop_following()
        self.following_run = self.active_run = run_id
        self.pane.set_running(True)
        self.follow_task = self.spawn(self._follow_run(run_id, after), "follow the reply")

    def stop_following(self) -> None:
        """Stop streaming the live run (it goes on on the server)."""
        if self.follow_task is not None and not self.follow_task.done():
            self.follow_task.cancel()  # cancel, never break out of the stream (PITFALLS §2)
        self.follow_task = None
        if self._closed:
            return
        self.following_run = self.active_run = None
        self.pane.set_running(False)

    async def _follow_run(self, run_id: str, after: int | None) -> None:
        """Stream the run; Stop and "Replying…" stay for as long as the run is active
        (whatever it streams), and go only when it ended or nothing says it is active."""
        engine = self._engine()
        ended = False
        try:
            async for event in engine.stream_run(run_id, after=after or None):
                ended = ended or event.is_terminal
                if event.sequence <= self._last_seq:
                    continue
                self._last_seq = event.sequence
                self.pane.append_event(event)
            ended = True
        except SyncError as exc:
            action = WindowAction(
                "follow the live reply (it continues on the server)",
                self._never,
                retry=lambda: self._follow(run_id, self._last_seq),
                in_pane=self.shown,
            )
            self._actions.fail(action, exc)
        finally:
            if self.follow_task is asyncio.current_task() and not self._closed:
                self.following_run = None
                self.follow_task = None
                row = self.window.model.find(self.session_id) if self.session_id else None
                if ended or row is None or row.active_run_id != run_id:
                    self.active_run = None
                    self.pane.set_running(False)
                if ended and self._on_reply_done is not None and self.session_id is not None:
                    self._on_reply_done(self.session_id)

    async def _never(self) -> None:
        """The op of an action that only reports (`_follow_run`'s lost stream)."""

    def run_state(self, row: SidebarRow) -> None:
        """The run's state drives Stop: the row says a run is active, so the pane shows
        Stop (and follows it); the row says none and nothing streams, so Stop goes."""
        if row.active_run_id:
            if row.active_run_id != self.following_run:
                self._follow(row.active_run_id, self._last_seq)
        elif self.following_run is None and self.active_run is not None:
            self.active_run = None
            self.pane.set_running(False)

    # --- what the user does here --------------------------------------------------------

    async def send(self, text: str) -> None:
        """Send the composer's text: the next turn, or the message that creates it. The
        composer keeps its focus (read-only while the message goes, never disabled)."""
        engine = self._engine()
        session_id = self.session_id

        def busy(on: bool) -> None:
            self._sending = on
            if not self._closed:
                self.pane.set_sending(on)

        def still_running(error: SyncError) -> bool:
            if not isinstance(error, RunInProgress):
                return False
            self._actions.fail(action, error)  # "A reply is still running here. Stop it…"
            active = error.details.get("active_run_id")
            if isinstance(active, str) and not self._closed:
                self._follow(active, self._last_seq)  # …and Stop is there to do it
            return True

        def sent(result: tuple[SessionView, RunView]) -> None:
            view, run = result
            self.pane.clear_composer()
            self.pane.show_banner("")
            if session_id is None:
                self.session_id = view.id
                self._last_seq = 0
                self.pane.show_session(view.id, view.title or untitled(), view.updated_at)
                self._on_created(view.id)
            self._follow(run.id, None)

        action = WindowAction(
            "send the message",
            lambda: self._request(engine.send_message(session_id, text), "send the message"),
            success=sent,
            busy=busy,
            retry=lambda: self.spawn(self.send(text), "send"),
            handle=still_running,
            in_pane=self.shown,
        )
        await self._actions.run(action)

    async def stop(self) -> None:
        """Cancel the live run (cooperative: its stream ends it). Stop stays disabled until
        the run ends, unless the request failed (then it says why, with Retry)."""
        engine = self._engine()
        run_id = self.active_run
        if run_id is None:
            return
        self.pane.stop_button.setEnabled(False)
        action = WindowAction(
            "stop the reply",
            lambda: self._request(engine.cancel_run(run_id), "stop the reply"),
            retry=lambda: self.spawn(self.stop(), "stop the reply"),
            in_pane=self.shown,
        )
        if await self._actions.run(action) is None and self.active_run == run_id:
            self.pane.stop_button.setEnabled(not self._closed)

    async def decide(self, approval_id: str, decision: str) -> None:
        engine = self._engine()
        action = WindowAction(
            "send the decision",
            lambda: self._request(
                engine.decide_approval(approval_id, decision), "send the decision"
            ),
            retry=lambda: self.spawn(self.decide(approval_id, decision), "send the decision"),
            in_pane=self.shown,
        )
        await self._actions.run(action)

    async def describe_memories(self, memory_ids: list[str]) -> None:
        """Fill in what each memory under a reply says (best effort: a note stays as it is
        when the memory can't be read)."""
        engine = self._engine()

        def fill(texts: dict[str, str]) -> None:
            for memory_id, text in texts.items():
                self.pane.set_memory_text(memory_id, text)

        action = WindowAction(
            "read the memory", lambda: memory_texts(engine.api, memory_ids), success=fill
        )
        action.quiet = True
        await self._actions.run(action)
