"""The conversation the pane shows, as one object: loading it, catching up with turns taken
elsewhere, following its live run, and the user's actions on it (send, stop, approve or
deny, what a memory says, its files).

Every task it starts is its own, and `close()` cancels them together. The window closes the
open conversation before it shows another one, when it is deleted (here or elsewhere) and
when the window closes; so a transcript that arrives late, a stream still delivering, or a
catch-up of the previous conversation can never write into the pane (before this object,
each path compared a load token or the pane's session id after every await, and a send
that returned after the user had moved on took the pane back and cancelled the other
conversation's live reply).

Two kinds of work outlive it on purpose. A request the user made (a message, Stop, a
decision) is never cut by a click elsewhere: the waiting is cancelled, not the request, so
it cannot be left half-done on the server (`_request`). Opening or saving one of its files
is started by the window, not here: it writes to disk, never into the pane.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QFileDialog

from sync import (
    EngineState,
    Event,
    NetworkError,
    NotFound,
    RunInProgress,
    SyncError,
    TriggerReason,
    copy_private,
    loggable,
    memory_texts,
    safe_file_name,
)
from ui.conversation_pane import ConversationPane
from ui.dialogs import run_dialog
from ui.main_window import MainWindow
from ui.plain import isolate
from ui.session_model import UNTITLED, SidebarRow, display_title
from ui.status_presenter import (
    StatusPresenter,
    load_failure_words,
    offline_words,
    plain_failure,
)

if TYPE_CHECKING:
    from sync import SyncEngine
    from sync.transcripts import MirroredTranscript

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
        spawn: Spawn,
        on_created: Callable[[str], None],
    ) -> None:
        self.session_id = session_id
        self.window = window
        self.pane: ConversationPane = window.pane
        self.load_failed = False  # the transcript could not be read (reloaded on reconnect)
        self.following_run: str | None = None
        self.follow_task: asyncio.Task[None] | None = None
        self._engine = engine
        self._presenter = presenter
        self._spawn = spawn  # the window's: logs a failure and shows it as words
        self._on_created = on_created
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
        if isinstance(error, SyncError):
            self._presenter.failed(f"Couldn't {what}.", error)
        elif error is not None:
            log.error("could not %s", what, exc_info=error)

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
        engine = self._engine()
        try:
            fetched = await engine.refresh_transcript(self.session_id)
        except NotFound:
            self.pane.show_deleted_elsewhere()
            engine.trigger(TriggerReason.MANUAL)
            return False
        except SyncError as exc:
            self.load_failed = True
            if isinstance(exc, NetworkError):
                self._presenter.suspect_offline()
                self.pane.show_banner(offline_words(self.saved))
            else:
                self.pane.show_banner(load_failure_words(exc))
                self._presenter.failed("Couldn't load the conversation.", exc)
            return False
        if not fetched and engine.status.state is EngineState.OFFLINE:
            self.load_failed = True  # the mirror had it all; the server is still unreached
            self.pane.show_banner(offline_words(self.saved))
            return False
        self.load_failed = False
        self.pane.show_banner("")
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
        try:
            events = await self._engine().transcript(session_id)
        except NotFound:
            self.pane.show_deleted_elsewhere()
            self._engine().trigger(TriggerReason.MANUAL)
            return
        except SyncError as exc:
            if isinstance(exc, NetworkError):
                self._presenter.suspect_offline()
            self.load_failed = True
            self.pane.show_banner(load_failure_words(exc))
            self._presenter.failed("Couldn't load the conversation.", exc)
            return
        self.load_failed = False
        self.pane.show_banner("")
        self._append(events)
        row = self.window.model.find(session_id)
        if row is not None and row.active_run_id:
            self._follow(row.active_run_id, self._last_seq)

    def _append(self, events: list[Event]) -> None:
        """Append the events after the last one shown (each path may see some twice)."""
        for event in events:
            if event.sequence > self._last_seq:
                self._last_seq = event.sequence
                self.pane.append_event(event)

    async def _append_mirrored(self) -> None:
        assert self.session_id is not None
        mirrored = await self._engine().mirrored_transcript(self.session_id)
        if mirrored.state is not None:
            self.saved = mirrored
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
        if row.active_run_id and row.active_run_id != self.following_run:
            self._follow(row.active_run_id, self._last_seq)
        elif (
            self.following_run is None
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
        self.stop_following()
        self.following_run = run_id
        self.pane.set_running(True)
        self.follow_task = self.spawn(self._follow_run(run_id, after), "follow the reply")

    def stop_following(self) -> None:
        """Stop streaming the live run (it goes on on the server)."""
        if self.follow_task is not None and not self.follow_task.done():
            self.follow_task.cancel()  # cancel, never break out of the stream (PITFALLS §2)
        self.follow_task = None
        if self._closed:
            return
        self.following_run = None
        self.pane.set_running(False)

    async def _follow_run(self, run_id: str, after: int | None) -> None:
        engine = self._engine()
        try:
            async for event in engine.stream_run(run_id, after=after or None):
                if event.sequence <= self._last_seq:
                    continue
                self._last_seq = event.sequence
                self.pane.append_event(event)
        except SyncError as exc:
            if isinstance(exc, NetworkError):
                self._presenter.suspect_offline()
            self.pane.show_banner("Lost the live reply. It continues on the server.")
            self._presenter.failed("Lost the live reply.", exc)
        finally:
            if self.following_run == run_id and not self._closed:
                self.following_run = None
                self.pane.set_running(False)

    # --- what the user does here --------------------------------------------------------

    async def send(self, text: str) -> None:
        """Send the composer's text: the next turn, or the message that creates it."""
        engine = self._engine()
        session_id = self.session_id
        self.pane.set_composer_enabled(False)
        self._sending = True
        try:
            view, run = await self._request(
                engine.send_message(session_id, text), "send the message"
            )
        except RunInProgress:
            self.pane.show_banner("A reply is still running here. Stop it or wait for it to end.")
            return
        except SyncError as exc:
            self.pane.show_banner(plain_failure("Couldn't send the message", exc))
            self._presenter.failed("Couldn't send the message.", exc)
            if isinstance(exc, NetworkError):
                self._presenter.suspect_offline()
            return
        finally:
            self._sending = False
            if not self._closed:
                self.pane.set_composer_enabled(True)
        self.pane.clear_composer()
        self.pane.show_banner("")
        if session_id is None:
            self.session_id = view.id
            self._last_seq = 0
            self.pane.show_session(view.id, view.title or UNTITLED, view.updated_at)
            self._on_created(view.id)
        self._follow(run.id, None)

    async def stop(self) -> None:
        """Cancel the live run (cooperative: its stream ends it)."""
        engine = self._engine()
        run_id = self.following_run
        if run_id is None:
            return
        self.pane.stop_button.setEnabled(False)
        await self._request(engine.cancel_run(run_id), "stop the reply")

    async def decide(self, approval_id: str, decision: str) -> None:
        engine = self._engine()
        try:
            await self._request(engine.decide_approval(approval_id, decision), "send the decision")
        except SyncError as exc:
            self.pane.show_banner(plain_failure("Couldn't send the decision", exc))
            self._presenter.failed("Couldn't send the decision.", exc)

    async def describe_memories(self, memory_ids: list[str]) -> None:
        """Fill in what each memory under a reply says (best effort: a note stays as it is
        when the memory can't be read)."""
        try:
            engine = self._engine()
        except SyncError:
            return
        try:
            texts = await memory_texts(engine.api, memory_ids)
        except SyncError as exc:
            log.info("memory lookup failed: %s", loggable(exc))
            return
        for memory_id, text in texts.items():
            self.pane.set_memory_text(memory_id, text)

    async def open_artifact(self, artifact_id: str) -> None:
        path = await self._engine().artifact_file(artifact_id)
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))

    async def save_artifact(self, artifact_id: str, name: str) -> None:
        """Ask where, then write a 0600 copy of the file the user chose there. The dialog is
        pre-filled with the name made safe (a name from content is never a path: one Enter
        on `../../.config/autostart/x.desktop` must not save outside the folder shown); the
        folder the user picks is theirs to pick, and the write lands exactly on the file
        chosen, never through a symlink planted at its name."""
        engine = self._engine()
        suggested = safe_file_name(name)
        dialog = QFileDialog(self.window, f"Save {isolate(suggested)}")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.selectFile(suggested)
        if await run_dialog(dialog) != QFileDialog.DialogCode.Accepted:
            return
        target = Path(dialog.selectedFiles()[0])
        source = await engine.artifact_file(artifact_id)
        written = await asyncio.to_thread(copy_private, source, target.parent, target.name)
        self.window.set_status(f"Saved {isolate(written.name)}")
