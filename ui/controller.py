"""Wires the main window to the sync engine: the window's intents become engine calls, the
engine's events become model diffs, status words and pane updates.

Nothing here talks HTTP or SQL. Every coroutine is started through `spawn`, which logs a
failure and shows it as words in the status line, never as a traceback.

Which row is open is the pane's business, not the selection's: when a reconcile removes the
open conversation, Qt moves the current index to a neighbour, and the model reports that it
was applying an update, so the pane stays and says the conversation was deleted elsewhere.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import time
from collections.abc import Callable, Coroutine, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QObject, QTimer, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QFileDialog

from sync import (
    DeleteOutcome,
    EngineEvent,
    EngineState,
    EngineStatus,
    IndexChanged,
    NetworkError,
    NotFound,
    RunInProgress,
    ServerError,
    StatusChanged,
    SyncEngine,
    SyncError,
    TriggerReason,
    export_conversation,
    loggable,
    memory_texts,
    safe_name,
)
from ui.conversation_pane import ConversationPane
from ui.delete_flow import DeleteFlow
from ui.dialogs import ConnectionSettings, Prompts, run_dialog
from ui.foreground import ForegroundWatcher
from ui.grouping import is_header
from ui.main_window import EMPTY, LOADING, OFFLINE_DELETE_TIP, MainWindow
from ui.session_model import UNTITLED, SessionListModel, display_title
from ui.sidebar_refresher import RowSource, SidebarRefresher

log = logging.getLogger(__name__)

# Shown through MainWindow.set_status, which translates known sentences ("MainWindow").
SYNCING = str(QT_TRANSLATE_NOOP("MainWindow", "Syncing…"))
OFFLINE = str(QT_TRANSLATE_NOOP("MainWindow", "Offline – showing saved history"))
RETRY_OFFLINE_MS = (2_000, 5_000, 10_000, 30_000)
MARKDOWN_FILTER = "Markdown with files (*.md)"
JSON_FILTER = "JSON with files (*.json)"


def load_failure_words(error: SyncError) -> str:
    """Why a conversation could not be opened, in plain words (the technical message goes
    behind the status line's "Details")."""
    if isinstance(error, NetworkError):
        return (
            "Couldn't load this conversation: the server can't be reached. "
            "It loads by itself when the connection is back."
        )
    if isinstance(error, ServerError):
        return "Couldn't load this conversation: the server had a problem. Try again later."
    return "Couldn't load this conversation."


def plain_failure(what: str, error: SyncError) -> str:
    """ "Couldn't send the message: the server can't be reached." — the cause in plain
    words; the technical message goes behind the status line's "Details"."""
    if isinstance(error, NetworkError):
        return f"{what}: the server can't be reached. Your text is kept; try again."
    if isinstance(error, ServerError):
        return f"{what}: the server had a problem. Try again in a moment."
    return f"{what}. See Details in the status line."


def synced_words(last_success: float | None, now: float | None = None) -> str:
    """ "Synced just now", "Synced 3 min ago", …"""
    if last_success is None:
        return ""
    age = max(0.0, (now or time.time()) - last_success)
    if age < 60:
        return "Synced just now"
    if age < 3600:
        return f"Synced {int(age // 60)} min ago"
    return f"Synced {int(age // 3600)} h ago"


class WindowController(QObject):
    """The behaviour of the main window."""

    # Emitted after each sidebar refresh has been applied (tests wait on it through futures).
    rows_applied = Signal()
    settings_saved = Signal(object)  # ConnectionSettings
    preferences_changed = Signal()  # e.g. what Enter does in the composer

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
        self._unsubscribe: Callable[[], None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.sidebar = SidebarRefresher(
            self.model,
            spawn=self.spawn,
            on_applied=self._after_rows,
            group_by_date=group_by_date,
        )
        self.deleter = DeleteFlow(
            self.model,
            self.prompts,
            on_outcomes=self._after_deleted,
            say=window.set_status,
            report=lambda text, details, ok: window.set_status(text, error=not ok, details=details),
        )
        self._load_failed: str | None = None  # the open conversation could not be loaded
        self._neighbour: str | None = None  # selected after a delete
        self.deleter.exporter = self.export
        self._select_after_refresh: str | None = None
        self._open_token = 0
        self._last_seq = 0
        self._seen_updated_at: str | None = None  # the open row's activity the pane shows
        self._catching_up = False
        self._follow_task: asyncio.Task[None] | None = None
        self._following_run: str | None = None
        self._status = EngineStatus(EngineState.IDLE)
        self._offline_retry = 0
        self.offline_retry_ms: tuple[int, ...] = RETRY_OFFLINE_MS
        self._concluded = False  # a reconcile has concluded (or failed): emptiness is real

        application = app or QGuiApplication.instance()
        self.foreground: ForegroundWatcher | None = None
        if isinstance(application, QGuiApplication):
            self.foreground = ForegroundWatcher(application, foreground_debounce_ms, self)
            self.foreground.returned.connect(lambda: self._trigger(TriggerReason.FOREGROUND))

        self._status_timer = QTimer(self)
        self._status_timer.setInterval(30_000)
        self._status_timer.timeout.connect(self._refresh_status_words)
        self._status_timer.start()
        self._clock_timer = QTimer(self)
        self._clock_timer.setInterval(60_000)
        self._clock_timer.timeout.connect(window.list.viewport().update)
        self._clock_timer.timeout.connect(self._regroup_on_new_day)
        self._day = datetime.now().astimezone().date()
        self._clock_timer.start()
        self._offline_timer = QTimer(self)
        self._offline_timer.setSingleShot(True)
        self._offline_timer.timeout.connect(lambda: self._trigger(TriggerReason.CONNECT))

        window.refresh_requested.connect(lambda: self._trigger(TriggerReason.MANUAL))
        window.delete_requested.connect(lambda: self.spawn(self.delete_selected(), "delete"))
        window.new_requested.connect(self.new_conversation)
        window.settings_requested.connect(lambda: self.spawn(self.edit_settings(), "settings"))
        window.filter_changed.connect(self._on_filter)
        window.export_requested.connect(lambda sid: self.spawn(self.export(sid), "export"))
        window.copy_id_requested.connect(self.copy_id)
        window.current_changed.connect(self._on_current_changed)
        self.pane.send_requested.connect(lambda text: self.spawn(self.send(text), "send"))
        self.pane.stop_requested.connect(lambda: self.spawn(self.stop(), "stop the reply"))
        self.pane.approval_decided.connect(
            lambda aid, decision: self.spawn(self.decide(aid, decision), "send the decision")
        )
        self.pane.artifact_open_requested.connect(
            lambda aid, name: self.spawn(self.open_artifact(aid), f"open {name}")
        )
        self.pane.memories_shown.connect(
            lambda ids: self.spawn(self.describe_memories(ids), "read the memory")
        )
        self.pane.artifact_save_requested.connect(
            lambda aid, name: self.spawn(self.save_artifact(aid, name), f"save {name}")
        )

    # --- plumbing -----------------------------------------------------------------------

    def spawn(self, coro: Coroutine[Any, Any, Any], what: str) -> asyncio.Task[Any]:
        """Run `coro` on the loop; a failure is logged and shown as words."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)

        def done(t: asyncio.Task[Any]) -> None:
            self._tasks.discard(t)
            if t.cancelled():
                return
            exc = t.exception()
            if exc is None:
                return
            if isinstance(exc, SyncError):
                message = exc.message
            else:
                log.error("could not %s", what, exc_info=exc)
                message = "an internal error happened (details are in the log)"
            self.window.set_status(f"Couldn't {what}.", error=True, details=message)

        task.add_done_callback(done)
        return task

    async def wait_idle(self) -> None:
        """Wait for the tasks the controller started, except a live run being followed
        (which lasts as long as the run): for tests and scripts."""
        # Only unfinished tasks: a finished one stays in the set until its done-callback
        # runs, and awaiting it again never yields, so the callback would never run (a
        # busy loop that hung a test now and then).
        while pending := [t for t in self._tasks if t is not self._follow_task and not t.done()]:
            await asyncio.gather(*pending, return_exceptions=True)
        await asyncio.sleep(0)  # let the done-callbacks of the last ones run

    @property
    def _filter(self) -> str:
        return self.sidebar.filter_text

    def set_row_source(self, source: RowSource) -> None:
        """Where sidebar rows come from before an engine is attached (the mirror)."""
        self.sidebar.set_source(source)

    def attach(self, engine: SyncEngine, *, connect: bool = True) -> None:
        """Start using `engine`: listen, reconcile now (on connect), then on its timer and
        whenever its index watch sees a change on the server."""
        self.detach()
        self.engine = engine
        self.sidebar.set_source(engine.rows, lambda: engine.last_change_seq)
        self._unsubscribe = engine.subscribe(self._on_engine_event)
        self._show_status(engine.status)
        if connect:
            engine.trigger(TriggerReason.CONNECT)
        if self.sync_interval > 0:
            engine.start_timer(self.sync_interval)
        if self.watch:
            engine.start_watch()

    def detach(self) -> None:
        """Stop listening to the current engine (before it is closed)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self.engine is not None:
            self.engine.stop_timer()
            self.engine.cancel_watch()
            self.sidebar.set_source(None)  # the engine's mirror is about to close
        self._offline_timer.stop()
        self._stop_following()
        self.engine = None

    async def shutdown(self) -> None:
        """Cancel everything the controller runs; no timer fires after this."""
        self.detach()
        for timer in (self._status_timer, self._clock_timer, self._offline_timer):
            timer.stop()
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
            self._show_status(event.status)
            return
        if isinstance(event, IndexChanged):
            open_id = self.pane.session_id
            if (
                open_id is not None
                and open_id in event.removed
                and open_id not in self.deleter.deleting
            ):
                self._stop_following()
                self.pane.show_deleted_elsewhere()
            self.sidebar.index_changed(event)

    def _show_status(self, status: EngineStatus) -> None:
        previous, self._status = self._status, status
        if status.state is not EngineState.SYNCING and (
            status.last_success is not None or status.state is not EngineState.IDLE
        ):
            self._concluded = True
            self._update_placeholder()
        if status.state is EngineState.SYNCING and previous.state is EngineState.OFFLINE:
            self.window.set_status(f"{OFFLINE} · reconnecting…")  # no flicker while probing
        elif status.state is EngineState.SYNCING:
            self.window.set_status(SYNCING)
        elif status.state is EngineState.OFFLINE:
            self.window.set_status(OFFLINE, details=status.message)
            self.window.set_offline(True, status.message)
            self._schedule_offline_retry()
        elif status.state is EngineState.ERROR:
            self.window.set_status(status.message or "The server refused the request.", error=True)
        else:
            self.window.status.setToolTip("")
            self._refresh_status_words()
        if status.state is EngineState.IDLE and self.window.offline:
            self.window.set_offline(False)
            self._reload_after_reconnect()
        if status.state is EngineState.IDLE and previous.state in (
            EngineState.OFFLINE,
            EngineState.ERROR,
        ):
            self._offline_retry = 0
            self._offline_timer.stop()

    def _suspect_offline(self) -> None:
        """A request just failed on the network: check now (a reconcile pass says OFFLINE
        within a second or two) rather than at the next 30 s tick."""
        if self._status.state not in (EngineState.OFFLINE, EngineState.SYNCING):
            self._trigger(TriggerReason.MANUAL)

    def _reload_after_reconnect(self) -> None:
        """Back online: the conversation that could not be loaded loads now."""
        failed = self._load_failed
        if failed is not None and failed == self.pane.session_id:
            self.spawn(self.open_session(failed), "open the conversation")

    def _refresh_status_words(self) -> None:
        if self._status.state is EngineState.IDLE:
            words = synced_words(self._status.last_success)
            self.window.set_status(words or ("Connected" if self.engine else "Starting…"))

    def _schedule_offline_retry(self) -> None:
        """While offline, probe the server more often than the 30 s timer, so that the
        reconcile "when the server becomes reachable again" happens soon after it does."""
        delays = self.offline_retry_ms
        delay = delays[min(self._offline_retry, len(delays) - 1)]
        self._offline_retry += 1
        self._offline_timer.start(delay)

    # --- sidebar ------------------------------------------------------------------------

    def _regroup_on_new_day(self) -> None:
        """After midnight "Today" becomes "Yesterday": the sections are recomputed."""
        today = datetime.now().astimezone().date()
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
        self._update_placeholder()
        wanted = self._select_after_refresh
        if wanted is not None and self.window.select_session(wanted):
            self._select_after_refresh = None
        open_id = self.pane.session_id
        if open_id is not None:
            row = self.model.find(open_id)
            if row is not None:
                self.pane.update_header(display_title(row), row.updated_at)
                if row.active_run_id and row.active_run_id != self._following_run:
                    self._follow(open_id, row.active_run_id, self._last_seq)
                elif (
                    self._following_run is None
                    and row.updated_at != self._seen_updated_at
                    and not self._catching_up
                ):
                    # Activity from another device that ended between two reconciles.
                    self.spawn(self._catch_up(open_id, row.updated_at), "update the conversation")
        self.rows_applied.emit()

    async def _catch_up(self, session_id: str, updated_at: str) -> None:
        """Append the events the pane has not shown yet (sequence after the last shown)."""
        engine = self._require_engine()
        token = self._open_token
        self._catching_up = True
        try:
            events = await engine.transcript(session_id)
        except SyncError as exc:
            log.info("catch-up of %s failed: %s", session_id, loggable(exc))
            return
        finally:
            self._catching_up = False
        if token != self._open_token or self.pane.session_id != session_id:
            return
        for event in events:
            if event.sequence > self._last_seq:
                self._last_seq = event.sequence
                self.pane.append_event(event)
        self._seen_updated_at = updated_at

    def _update_placeholder(self) -> None:
        if self._filter:
            self.window.set_placeholder(f"No conversations match “{self._filter}”.")
        elif self._concluded:
            self.window.set_placeholder(EMPTY)
        else:
            self.window.set_placeholder(LOADING)

    def _on_filter(self, text: str) -> None:
        self.sidebar.set_filter(text)

    # --- opening a conversation ---------------------------------------------------------

    def _on_current_changed(self, session_id: str | None) -> None:
        if self.model.applying:
            return  # the model moved the current index; the pane keeps what it shows
        if session_id is None or session_id == self.pane.session_id:
            return
        self.spawn(self.open_session(session_id), "open the conversation")

    async def open_session(self, session_id: str) -> None:
        """Show a conversation's transcript, then follow its active run if there is one."""
        engine = self._require_engine()
        row = self.model.find(session_id)
        self._stop_following()
        self._open_token += 1
        token = self._open_token
        self._last_seq = 0
        title = display_title(row) if row else "Conversation"
        self.pane.show_session(session_id, title, row.updated_at if row else "")
        self.pane.show_banner("Loading…")
        try:
            events = await engine.transcript(session_id)
        except NotFound:
            if token == self._open_token:
                self.pane.show_deleted_elsewhere()
                engine.trigger(TriggerReason.MANUAL)
            return
        except SyncError as exc:
            if isinstance(exc, NetworkError):
                self._suspect_offline()
            if token == self._open_token:
                self._load_failed = session_id
                self.pane.show_banner(load_failure_words(exc))
                self.window.set_status(
                    "Couldn't load the conversation.", error=True, details=exc.message
                )
            return
        if token != self._open_token:
            return
        self._load_failed = None
        self.pane.show_banner("")
        self.pane.set_events(events)
        self._last_seq = events[-1].sequence if events else 0
        self._seen_updated_at = row.updated_at if row else None
        if row is not None and row.active_run_id:
            self._follow(session_id, row.active_run_id, self._last_seq)

    def new_conversation(self) -> None:
        self._stop_following()
        self._open_token += 1
        self.window.clear_selection()
        self.pane.show_new()

    # --- runs ---------------------------------------------------------------------------

    def _follow(self, session_id: str, run_id: str, after: int | None) -> None:
        self._stop_following()
        self._following_run = run_id
        self.pane.set_running(True)
        self._follow_task = self.spawn(
            self._follow_run(session_id, run_id, after), "follow the reply"
        )

    def _stop_following(self) -> None:
        if self._follow_task is not None and not self._follow_task.done():
            self._follow_task.cancel()  # cancel, never break out of the stream (PITFALLS §2)
        self._follow_task = None
        self._following_run = None
        self.pane.set_running(False)

    async def _follow_run(self, session_id: str, run_id: str, after: int | None) -> None:
        engine = self._require_engine()
        try:
            async for event in engine.stream_run(run_id, after=after or None):
                if self.pane.session_id != session_id:
                    return
                if event.sequence <= self._last_seq:
                    continue
                self._last_seq = event.sequence
                self.pane.append_event(event)
        except SyncError as exc:
            if isinstance(exc, NetworkError):
                self._suspect_offline()
            if self.pane.session_id == session_id:
                self.pane.show_banner("Lost the live reply. It continues on the server.")
                self.window.set_status("Lost the live reply.", error=True, details=exc.message)
        finally:
            if self._following_run == run_id:
                self._following_run = None
                self.pane.set_running(False)

    async def send(self, text: str) -> None:
        """Send the composer's text: a new conversation, or the next turn of the open one."""
        engine = self._require_engine()
        session_id = self.pane.session_id
        self.pane.set_composer_enabled(False)
        try:
            view, run = await engine.send_message(session_id, text)
        except RunInProgress:
            self.pane.show_banner("A reply is still running here. Stop it or wait for it to end.")
            return
        except SyncError as exc:
            self.pane.show_banner(plain_failure("Couldn't send the message", exc))
            self.window.set_status("Couldn't send the message.", error=True, details=exc.message)
            if isinstance(exc, NetworkError):
                self._suspect_offline()
            return
        finally:
            self.pane.set_composer_enabled(True)
        self.pane.clear_composer()
        self.pane.show_banner("")
        if session_id is None:
            self._open_token += 1
            self._last_seq = 0
            self.pane.show_session(view.id, view.title or UNTITLED, view.updated_at)
            self._select_after_refresh = view.id
            self.request_refresh()
        self._follow(view.id, run.id, None)

    async def stop(self) -> None:
        """Cancel the open conversation's run (cooperative: the stream ends it)."""
        engine = self._require_engine()
        run_id = self._following_run
        if run_id is None:
            return
        self.pane.stop_button.setEnabled(False)
        await engine.cancel_run(run_id)

    async def decide(self, approval_id: str, decision: str) -> None:
        engine = self._require_engine()
        try:
            await engine.decide_approval(approval_id, decision)
        except SyncError as exc:
            self.pane.show_banner(plain_failure("Couldn't send the decision", exc))
            self.window.set_status("Couldn't send the decision.", error=True, details=exc.message)

    async def describe_memories(self, memory_ids: list[str]) -> None:
        """Fill in what each memory under a reply says (best effort: a note stays as it is
        when the memory can't be read)."""
        if self.engine is None:
            return
        session_id = self.pane.session_id
        try:
            texts = await memory_texts(self.engine.api, memory_ids)
        except SyncError as exc:
            log.info("memory lookup failed: %s", loggable(exc))
            return
        if self.pane.session_id == session_id:
            for memory_id, text in texts.items():
                self.pane.set_memory_text(memory_id, text)

    async def open_artifact(self, artifact_id: str) -> None:
        path = await self._require_engine().artifact_file(artifact_id)
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))

    async def save_artifact(self, artifact_id: str, name: str) -> None:
        engine = self._require_engine()
        dialog = QFileDialog(self.window, f"Save {name}")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.selectFile(name)
        if await run_dialog(dialog) != QFileDialog.DialogCode.Accepted:
            return
        target = Path(dialog.selectedFiles()[0])
        source = await engine.artifact_file(artifact_id)
        await asyncio.to_thread(shutil.copyfile, source, target)
        self.window.set_status(f"Saved {target.name}")

    # --- export -------------------------------------------------------------------------

    async def export(self, session_id: str) -> None:
        """Ask where, then save the conversation as Markdown or JSON with its files."""
        self._require_engine()
        row = self.model.find(session_id)
        name = safe_name(display_title(row) if row else session_id, "conversation")
        dialog = QFileDialog(self.window, "Export conversation")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setNameFilters([MARKDOWN_FILTER, JSON_FILTER])
        dialog.setDefaultSuffix("md")
        dialog.filterSelected.connect(
            lambda chosen: dialog.setDefaultSuffix("json" if chosen == JSON_FILTER else "md")
        )
        dialog.selectFile(f"{name}.md")
        if await run_dialog(dialog) != QFileDialog.DialogCode.Accepted:
            return
        target = Path(dialog.selectedFiles()[0])
        fmt = "json" if dialog.selectedNameFilter() == JSON_FILTER else "markdown"
        await self.export_to(session_id, target, fmt)

    async def export_to(self, session_id: str, target: Path, fmt: str) -> Path:
        """Export without asking (the dialog's second half; scripts and tests)."""
        engine = self._require_engine()
        self.window.set_status(f"Exporting to {target.name}…")
        written = await export_conversation(engine, session_id, target, fmt)
        self.window.set_status(f"Exported to {written}")
        return written

    def copy_id(self, session_id: str) -> None:
        clipboard = QGuiApplication.clipboard()
        if clipboard is not None:
            clipboard.setText(session_id)
        self.window.set_status(f"Copied the conversation's id ({session_id}).")

    # --- delete (see ui.delete_flow) -----------------------------------------------------

    async def delete_selected(self) -> None:
        """Confirm, then delete the selected conversations server-first."""
        await self.delete(self.window.selected_ids())

    async def delete(self, ids: Sequence[str]) -> None:
        if self.window.offline:
            self.window.set_status(OFFLINE_DELETE_TIP, error=True)
            return
        self._neighbour = self._neighbour_of(ids)
        try:
            await self.deleter.run(self._require_engine(), ids)
        finally:
            self._neighbour = None

    def _neighbour_of(self, ids: Sequence[str]) -> str | None:
        """The row to select once `ids` are gone: the one below the last of them, else the
        one above the first (so the keyboard stays in the list, like a mail client)."""
        gone = set(ids)
        positions = [i for i in (self.model.index_of(x).row() for x in ids) if i >= 0]
        if not positions:
            return None
        rows = self.model.rows()
        for row in rows[max(positions) + 1 :]:
            if row.id not in gone and not is_header(row):
                return row.id
        for row in reversed(rows[: min(positions)]):
            if row.id not in gone and not is_header(row):
                return row.id
        return None

    def _after_deleted(self, outcomes: Sequence[DeleteOutcome]) -> None:
        if any(isinstance(o.error, NetworkError) for o in outcomes):
            self._suspect_offline()
        removed = {o.session_id for o in outcomes if o.removed}
        if self.pane.session_id in removed:
            self._stop_following()
            self.pane.show_nothing()
        if removed:
            if self._neighbour is not None and self._neighbour not in removed:
                self._select_after_refresh = self._neighbour
            self.request_refresh()

    # --- settings -----------------------------------------------------------------------

    async def edit_settings(self) -> None:
        result = await self.prompts.edit_settings(
            self.settings, self.in_use, enter_sends=self.pane.enter_sends
        )
        if result is None:
            return
        settings, enter_sends = result
        if enter_sends != self.pane.enter_sends:
            self.pane.set_enter_sends(enter_sends)
            self.preferences_changed.emit()
        if settings != self.settings:
            self.settings = settings
            self.settings_saved.emit(settings)
