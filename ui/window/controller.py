"""The window's composition: wires the main window, the engine, the sidebar refresher, the
status presenter and the open conversation together, and keeps the window-wide actions
(delete, export, copy the id, settings).

Nothing here talks HTTP or SQL. Every coroutine is started through `spawn`, which logs a
failure and shows it as words in the status line, never as a traceback. What the engine's
status means in words is `ui.window.status_presenter`; everything about the conversation the
pane shows (loading, catching up, its live run, send/stop/decide) is one
`ui.pane.open_conversation.OpenConversation`, closed as a unit before another one opens.

Which row is open is the pane's business, not the selection's: when a reconcile removes the
open conversation, Qt moves the current index to a neighbour, and the model reports that it
was applying an update, so the pane stays and says the conversation was deleted elsewhere.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QGuiApplication

from sync import (
    DeleteOutcome,
    EngineEvent,
    IndexChanged,
    NetworkError,
    StatusChanged,
    SyncError,
    TranscriptChanged,
    TriggerReason,
)
from ui.dialogs.dialogs import Prompts
from ui.dialogs.settings import ConnectionSettings
from ui.pane.open_conversation import OpenConversation
from ui.pane.pane import ConversationPane
from ui.sidebar.model import SessionListModel, display_title
from ui.sidebar.refresher import ChangeSource, RowSource, SidebarRefresher
from ui.sidebar.relative_time import server_now, set_server_offset
from ui.sidebar.search import SidebarSearch
from ui.text.plain import isolate
from ui.theme.theme import apply_appearance, current_appearance
from ui.window.action import ActionRunner, WindowAction
from ui.window.delete_flow import DeleteFlow, neighbour_of
from ui.window.failure_words import host_of
from ui.window.file_actions import FileActions
from ui.window.foreground import ForegroundWatcher
from ui.window.main_window import OFFLINE_DELETE_TIP, MainWindow
from ui.window.notifier import DesktopNotifier
from ui.window.status_presenter import StatusPresenter

if TYPE_CHECKING:
    from sync import SyncEngine

log = logging.getLogger(__name__)
DELETE_WHAT = "delete the conversation"  # `ui.window.action_words` has its sentence


async def _nothing() -> None:
    """The op of an action that only reports a failure noticed elsewhere."""


class WindowController(QObject):
    """The behaviour of the main window."""

    # Emitted after each sidebar refresh has been applied (tests wait on it through futures).
    rows_applied = Signal()
    settings_saved = Signal(object)  # ConnectionSettings
    preferences_changed = Signal()  # e.g. what Enter does in the composer
    language_chosen = Signal(str)  # "" (the system's), "en", "de", "ar": for the next start

    def __init__(
        self,
        window: MainWindow,
        *,
        app: QGuiApplication | None = None,
        prompts: Prompts | None = None,
        sync_interval: float = 30.0,
        foreground_debounce_ms: int = 500,
        group_by_date: bool = True,
        watch: bool = True,
    ) -> None:
        super().__init__(window)
        self.window = window
        self.model: SessionListModel = window.model
        self.pane: ConversationPane = window.pane
        self.prompts = prompts or Prompts(window)
        self.sync_interval = sync_interval
        self.watch = watch  # keep an index watch open while attached (CONTRACT §9.1)
        self.engine: SyncEngine | None = None
        self.settings = ConnectionSettings("", "")
        self.in_use = ""  # the server the engine talks to, in words (Settings shows it)
        self.token_storage = ""  # where the saved token is kept, in words (Settings shows it)
        self.demo_token = ""  # the built-in demo server's token when it is in use
        # What gave the token in use when it overrides the saved one ("CONVERGE_TOKEN").
        self.token_override = ""
        self.language = ""  # the profile's language setting (app.translations)
        self._unsubscribe: Callable[[], None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._lexers: asyncio.Task[None] | None = None  # `_warm_lexers`
        self.sidebar = SidebarRefresher(
            self.model,
            spawn=self.spawn,
            on_applied=self._after_rows,
            group_by_date=group_by_date,
        )
        self.presenter = StatusPresenter(
            window,
            trigger=self._trigger,
            connected=lambda: self.engine is not None,
            filter_text=lambda: self.sidebar.filter_text,
            on_reconnected=self._reload_after_reconnect,
            parent=self,
        )
        self.deleter = DeleteFlow(
            self.model,
            self.prompts,
            on_outcomes=self._after_deleted,
            say=window.set_status,
            report=lambda text, details, ok: window.set_status(
                text, error=not ok, details=details, hold=ok
            ),
            fail=self._delete_failed,
        )
        # Every action of the window fails one way (ui.window.action, decision 0180).
        self.actions = ActionRunner(
            window,
            self.presenter,
            host=lambda: host_of(self.engine.api.base_url if self.engine else self.in_use),
            open_settings=window.settings_requested.emit,
        )
        self.files = FileActions(window, self.actions, self._require_engine, self.spawn)
        self.deleter.exporter = self.files.export
        self.presenter.pane_fixes = self.actions.fixes
        self.presenter.host = self.actions.host
        self.notifier = DesktopNotifier(window)  # while the window is not in front
        self._neighbour: str | None = None  # selected after a delete
        self._select_after_refresh: str | None = None
        self.conversation = self._conversation(None)

        application = app or QGuiApplication.instance()
        self.foreground: ForegroundWatcher | None = None
        if isinstance(application, QGuiApplication):
            self.foreground = ForegroundWatcher(application, foreground_debounce_ms, self)
            self.foreground.returned.connect(lambda: self._trigger(TriggerReason.FOREGROUND))

        self._clock_timer = QTimer(self)
        self._clock_timer.setInterval(60_000)
        self._clock_timer.timeout.connect(window.list.viewport().update)
        self._clock_timer.timeout.connect(self._regroup_on_new_day)
        self._day = server_now().astimezone().date()
        self._clock_timer.start()

        window.refresh_requested.connect(lambda: self._trigger(TriggerReason.MANUAL))
        window.delete_requested.connect(lambda: self.spawn(self.delete_selected(), "delete"))
        window.new_requested.connect(self.new_conversation)
        window.settings_requested.connect(lambda: self.spawn(self.edit_settings(), "settings"))
        self.search = SidebarSearch(self.sidebar, window.filter, window.list, self)
        self.presenter.search_refused = lambda: self.search.refused
        window.delegate.snippet_of = self.search.snippet_of
        window.sidebar_keys.results = self.search  # Down waits for a pending search
        window.filter_changed.connect(self.search.settled)
        window.export_requested.connect(lambda sid: self.spawn(self.files.export(sid), "export"))
        window.copy_id_requested.connect(self.copy_id)
        window.current_changed.connect(self._on_current_changed)
        # The pane's intents go to the conversation open at the time, as its own tasks.
        pane = self.pane
        pane.send_requested.connect(self._send)
        pane.stop_requested.connect(
            lambda: self.conversation.spawn(self.conversation.stop(), "stop the reply")
        )
        pane.approval_decided.connect(
            lambda aid, decision: self.conversation.spawn(
                self.conversation.decide(aid, decision), "send the decision"
            )
        )
        pane.memories_shown.connect(
            lambda ids: self.conversation.spawn(
                self.conversation.describe_memories(ids), "read the memory"
            )
        )
        pane.artifact_open_requested.connect(
            lambda aid, name: self.spawn(self.files.open(aid, name), f"open {name}")
        )
        pane.artifact_save_requested.connect(
            lambda aid, name: self.spawn(self.files.save(aid, name), f"save {name}")
        )

    # --- plumbing -----------------------------------------------------------------------

    def spawn(self, coro: Coroutine[Any, Any, Any], what: str | None) -> asyncio.Task[Any]:
        """Run `coro` on the loop; a failure is logged and shown as words (`what` None: the
        caller awaits it and says what went wrong itself)."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)

        def done(t: asyncio.Task[Any]) -> None:
            self._tasks.discard(t)
            if t.cancelled():
                return
            exc = t.exception()
            if exc is not None and what is not None:  # the status line: the pane moved on
                self.actions.fail(WindowAction(what, _nothing, in_pane=lambda: False), exc)

        task.add_done_callback(done)
        return task

    async def wait_idle(self) -> None:
        """Wait for the tasks the controller started, except a live run being followed
        (which lasts as long as the run): for tests and scripts."""
        # Only unfinished tasks: a finished one stays in the set until its done-callback
        # runs, and awaiting it again never yields (a busy loop that hung a test).
        while pending := [
            t for t in self._tasks if t is not self.conversation.follow_task and not t.done()
        ]:
            await asyncio.gather(*pending, return_exceptions=True)
        await asyncio.sleep(0)  # let the done-callbacks of the last ones run

    def set_row_source(self, source: RowSource, changes: ChangeSource | None = None) -> None:
        """Where sidebar rows come from before an engine is attached (the mirror), and what
        changed in it since a change sequence."""
        self.sidebar.set_source(source, changes)

    def attach(
        self, engine: SyncEngine, *, connect: bool = True, same_mirror: bool = False
    ) -> None:
        """Start using `engine`: listen, reconcile now (on connect), then on its timer and
        whenever its index watch sees a change on the server. `same_mirror`: the sidebar
        shows the file the engine opened (the first paint's), so the engine only says what
        changed since, rather than every row again."""
        self.detach(keep_rows=same_mirror)
        self.engine = engine
        changes = self.search.changes(engine)
        self.sidebar.set_source(self.search.source(engine), changes, keep_seq=same_mirror)
        self._unsubscribe = engine.subscribe(self._on_engine_event)
        self.presenter.show(engine.status)
        if connect:
            engine.trigger(TriggerReason.CONNECT)
        if self.sync_interval > 0:
            engine.start_timer(self.sync_interval)
        if self.watch:
            engine.start_watch()

    def detach(self, *, keep_rows: bool = False) -> None:
        """Stop listening to the current engine (before it is closed). `keep_rows`: the
        next source goes on from the rows shown (`attach`'s `same_mirror`)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self.engine is not None:
            self.engine.stop_timer()
            self.engine.cancel_watch()
            if not keep_rows:
                self.sidebar.set_source(None)  # the engine's mirror is about to close
        self.presenter.stop_retrying()
        self.conversation.stop_following()
        set_server_offset(0.0)  # the next server's clock is unknown until it answers
        self.engine = None

    async def shutdown(self) -> None:
        """Cancel everything the controller runs; no timer fires after this."""
        self.detach()
        self.conversation.close()
        self.presenter.stop()
        self.notifier.stop()
        self._clock_timer.stop()
        if self.foreground is not None:
            self.foreground.stop()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def _trigger(self, reason: TriggerReason) -> None:
        if self.engine is not None:
            self.engine.trigger(reason)

    def _require_engine(self) -> SyncEngine:
        if self.engine is None:
            raise SyncError("not connected to a server yet")
        return self.engine

    # --- engine events ------------------------------------------------------------------

    def _on_engine_event(self, event: EngineEvent) -> None:
        if isinstance(event, StatusChanged):
            if self.engine is not None:  # a pass answered: relative dates on its clock
                set_server_offset(self.engine.server_clock_offset)
            self.presenter.show(event.status)
            return
        if isinstance(event, TranscriptChanged):
            if self.pane.session_id in event.session_ids:
                self.conversation.transcript_changed()
            return
        if isinstance(event, IndexChanged):
            open_id = self.pane.session_id
            if (
                open_id is not None
                and open_id in event.removed
                and open_id not in self.deleter.deleting
            ):
                row = self.model.find(open_id)
                self.conversation.close()
                self.pane.show_deleted_elsewhere()
                title = isolate(display_title(row)) if row is not None else ""
                self.notifier.notify(
                    self.tr("Conversation deleted"),
                    self.tr("“{0}” was deleted on another device.").format(title)
                    if title
                    else self.tr("The open conversation was deleted on another device."),
                )
            self.sidebar.index_changed(event)

    def _reload_after_reconnect(self) -> None:
        """Back online: the conversation that could not be loaded catches up now."""
        conversation = self.conversation
        if conversation.load_failed and conversation.session_id == self.pane.session_id:
            conversation.spawn(conversation.reconnected(), "open the conversation")

    # --- sidebar ------------------------------------------------------------------------

    def _regroup_on_new_day(self) -> None:
        """After midnight "Today" becomes "Yesterday": the sections are recomputed."""
        today = server_now().astimezone().date()
        if today != self._day:
            self._day = today
            self.request_refresh()

    def request_refresh(self) -> None:
        """Re-read the mirror and diff the sidebar (coalesced: one read at a time)."""
        self.sidebar.request_full()

    async def refresh_now(self) -> None:
        """Refresh and wait until the sidebar shows the mirror (tests, start-up)."""
        await self.sidebar.refresh_now()

    def _after_rows(self) -> None:
        self.presenter.update_placeholder()
        wanted = self._select_after_refresh
        if wanted is not None and self.window.select_session(wanted):
            self._select_after_refresh = None
        open_id = self.pane.session_id
        if open_id is not None:
            row = self.model.find(open_id)
            if row is not None:
                self.conversation.row_changed(row)
        self.rows_applied.emit()

    # --- the open conversation ----------------------------------------------------------

    def _conversation(self, session_id: str | None) -> OpenConversation:
        return OpenConversation(
            session_id,
            window=self.window,
            engine=self._require_engine,
            presenter=self.presenter,
            actions=self.actions,
            spawn=self.spawn,
            on_created=self._created,
            on_reply_done=self._reply_done,
        )

    def _replace(self, session_id: str | None) -> OpenConversation:
        """Close the open conversation (all its tasks) and make `session_id` the open one."""
        self.conversation.close()
        self.conversation = self._conversation(session_id)
        return self.conversation

    def _on_current_changed(self, session_id: str | None) -> None:
        if self.model.applying:
            return  # the model moved the current index; the pane keeps what it shows
        if session_id is None or session_id == self.pane.session_id:
            return
        self._open(session_id)

    def _open(self, session_id: str) -> asyncio.Task[None]:
        if self.engine is None:  # nothing changes; the status line says why
            return self.spawn(self._not_connected(), "open the conversation")
        self._warm_lexers()
        conversation = self._replace(session_id)
        return conversation.spawn(conversation.load(), "open the conversation")

    def _send(self, text: str) -> None:
        if self.engine is not None:
            self._warm_lexers()
        self.conversation.spawn(self.conversation.send(text), "send")

    def _warm_lexers(self) -> None:
        """The code lexers, loaded and compiled on a worker thread when the first
        conversation is opened or the first message sent, with the engine attached (so the
        renderer, and Pygments with it, is loaded already: `app.desktop.load_engine_class`).
        Not at start: a window used only to browse never needs them, and they are the
        largest part of what the renderer holds. Until a block's lexer is in, the block
        shows uncoloured (decision 0223)."""
        if self._lexers is None:
            self._lexers = self.spawn(self._load_lexers(), "load the code lexers")

    async def _load_lexers(self) -> None:
        """Each lexer on a worker thread, those a shown block waits for first; once all
        those are in, the transcript renders its waiting rows again in colour."""
        from ui.text import code_highlight

        while (name := code_highlight.pending()) is not None:
            await asyncio.to_thread(code_highlight.load, name)
            if code_highlight.recolour_due():
                self.pane.transcript.recolour()

    async def _not_connected(self) -> None:
        self._require_engine()

    async def open_session(self, session_id: str) -> None:
        """Show a conversation's transcript, then follow its active run if there is one
        (returns when it has loaded or failed to; a failure is shown, not raised)."""
        await asyncio.wait([self._open(session_id)])

    def new_conversation(self) -> None:
        self._replace(None)
        self.window.clear_selection()
        self.pane.show_new()

    def _reply_done(self, session_id: str) -> None:
        """A reply the pane streamed has ended: say so on the desktop if the user is away."""
        row = self.model.find(session_id)
        title = isolate(display_title(row)) if row is not None else ""
        self.notifier.notify(
            self.tr("Reply finished"),
            self.tr("The reply in “{0}” has finished.").format(title)
            if title
            else self.tr("The reply has finished."),
        )

    def _created(self, session_id: str) -> None:
        """The first message created the open conversation: select its row once listed."""
        self._select_after_refresh = session_id
        self.request_refresh()

    # --- copy the id ------------------------------------------------------------------

    def copy_id(self, session_id: str) -> None:
        clipboard = QGuiApplication.clipboard()
        if clipboard is not None:
            clipboard.setText(session_id)
        self.window.set_status(f"Copied the conversation's id ({session_id}).")

    # --- delete (see ui.window.delete_flow) -----------------------------------------------------

    async def delete_selected(self) -> None:
        """Confirm, then delete the selected conversations server-first."""
        await self.delete(self.window.selected_ids())

    async def delete(self, ids: Sequence[str]) -> None:
        if self.window.offline:
            self.window.set_status(OFFLINE_DELETE_TIP, error=True)
            return
        self._neighbour = neighbour_of(self.model, ids)
        try:
            await self.deleter.run(self._require_engine(), ids)
        finally:
            self._neighbour = None

    def _delete_failed(self, session_id: str, error: SyncError) -> None:
        """A refused delete, worded and fixed where a refused send is (the pane's notice)."""
        retry = lambda: self.spawn(self.delete([session_id]), "delete")  # noqa: E731
        self.actions.fail(WindowAction(DELETE_WHAT, _nothing, retry=retry), error)

    def _after_deleted(self, outcomes: Sequence[DeleteOutcome]) -> None:
        if any(isinstance(o.error, NetworkError) for o in outcomes):
            self.presenter.suspect_offline()
        removed = {o.session_id for o in outcomes if o.removed}
        if self.pane.session_id in removed:
            self._replace(None)
            self.pane.show_nothing()
        if removed:
            if self._neighbour is not None and self._neighbour not in removed:
                self._select_after_refresh = self._neighbour
            self.request_refresh()

    # --- settings -----------------------------------------------------------------------

    async def edit_settings(self) -> None:
        result = await self.prompts.edit_settings(
            self.settings,
            self.in_use,
            enter_sends=self.pane.enter_sends,
            token_storage=self.token_storage,
            demo_token=self.demo_token,
            language=self.language,
            token_override=self.token_override,
        )
        if result is None:
            return
        settings, enter_sends, appearance, language = result
        if language != self.language:
            self.language = language
            self.language_chosen.emit(language)
        changed = appearance != current_appearance()
        if changed:  # the open window restyles itself on the palette and font change
            apply_appearance(QGuiApplication.instance(), appearance)
        if enter_sends != self.pane.enter_sends:
            self.pane.set_enter_sends(enter_sends)
            changed = True
        if changed:
            self.preferences_changed.emit()
        if settings != self.settings:
            self.settings = settings
            self.settings_saved.emit(settings)
