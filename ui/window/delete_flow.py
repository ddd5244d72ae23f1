"""Deleting from the window: confirm, mark rows pending, and handle every answer in words.

Server-first (ADR-0050 §8, CONTRACT §7): the engine removes a row from the mirror only after
204 or the contract's 404; until then the row shows "Deleting…". On 409 the user may choose
"Stop Run and Delete", a separate, explicit action (a delete never cancels a run by itself).
With no connection or a 5xx nothing was deleted; a request sent whose answer was lost was
"not confirmed" (§9.2). Both offer Retry (the delete is idempotent). Any other refusal (a
refused or read-only token, a certificate) goes where a failed send goes: the pane's notice,
with its cause, the buttons that fix it and Details (`ui.window.action`), not a modal box
that only says it failed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from sync import DeleteOutcome, DeleteStatus, NetworkError, ServerError, SyncError
from ui.dialogs.dialogs import Prompts, results_summary
from ui.sidebar.grouping import is_header
from ui.sidebar.model import SessionListModel, display_title
from ui.text.plain import isolate
from ui.window import delete_words

if TYPE_CHECKING:
    from sync import SyncEngine


class DeleteFlow:
    """One window's deletes; `deleting` holds the ids whose request is out."""

    def __init__(
        self,
        model: SessionListModel,
        prompts: Prompts,
        *,
        on_outcomes: Callable[[Sequence[DeleteOutcome]], None],
        say: Callable[[str], None],
        report: Callable[[str, str, bool], None] | None = None,
        fail: Callable[[str, SyncError], None] | None = None,
    ) -> None:
        self.model = model
        self.prompts = prompts
        self.deleting: set[str] = set()
        self._on_outcomes = on_outcomes
        self._say = say
        # Keeps a copy of one conversation before it is deleted (the "Export…" button).
        self.exporter: Callable[[str], Awaitable[None]] | None = None
        # (headline, details, all removed?): the status line with "Details", not a modal.
        self._report = report or (lambda text, _details, _ok: say(text))
        # (session id, error): a refusal worded like any failed window action.
        self._fail = fail

    async def run(self, engine: SyncEngine, ids: Sequence[str]) -> None:
        """Confirm, then delete `ids` (one: with the 409 and retry dialogs; many: a report)."""
        ids = [i for i in dict.fromkeys(ids) if i not in self.deleting]
        if not ids:
            return
        shown = self.model.find_many(ids)
        titles = [display_title(shown[i]) if i in shown else i for i in ids]
        running = shown[ids[0]].active_run_id if len(ids) == 1 and ids[0] in shown else None
        if running:
            # Known to be running: offer the one delete that can work in the first dialog.
            if await self.prompts.confirm_delete_running(titles[0], running):
                await self._one(engine, ids[0], titles[0], stop_first=True)
            return
        while True:
            offer_export = self.exporter is not None and len(ids) == 1
            choice = await self.prompts.choose_delete(titles, export=offer_export)
            if choice == "export" and self.exporter is not None:
                try:
                    await self.exporter(ids[0])  # then the same question again
                except (SyncError, OSError) as exc:
                    # No copy was kept: say so, and ask again (the user may cancel).
                    message = exc.message if isinstance(exc, SyncError) else str(exc)
                    self._say(f"Couldn't export the conversation: {message}")
                continue
            if choice != "delete":
                return
            break
        if len(ids) == 1:
            await self._one(engine, ids[0], titles[0])
            return
        self._mark(ids, True)
        try:
            outcomes = await engine.delete_many(ids)
        finally:
            self._mark(ids, False)
        self._on_outcomes(outcomes)
        lines = [
            (title, outcome.removed, result_words(outcome))
            for title, outcome in zip(titles, outcomes, strict=True)
        ]
        headline, details = results_summary(lines)
        self._report(headline, details, all(outcome.removed for outcome in outcomes))

    async def _one(
        self, engine: SyncEngine, session_id: str, title: str, *, stop_first: bool = False
    ) -> None:
        while True:
            self._mark([session_id], True)
            try:
                if stop_first:
                    outcome = await engine.stop_run_and_delete(session_id)
                else:
                    outcome = await engine.delete(session_id)
            finally:
                self._mark([session_id], False)
            self._on_outcomes([outcome])
            if outcome.removed:
                self._report(delete_words.deleted(isolate(title)), "", True)
                return
            if outcome.status is DeleteStatus.ACTIVE_RUN:
                if not await self.prompts.offer_stop_and_delete(title, outcome.active_run_id):
                    return
                stop_first = True
                continue
            if outcome.status is DeleteStatus.SERVER_ONLY:
                await self.prompts.show_error("Deleted on the server", outcome.message)
                return
            unconfirmed = outcome.status is DeleteStatus.UNCONFIRMED
            if (
                unconfirmed
                or isinstance(outcome.error, (NetworkError, ServerError))
                or outcome.error is None
            ):
                reason = outcome.error.message if outcome.error else ""
                if not await self.prompts.offer_retry([title], reason, unconfirmed=unconfirmed):
                    return
                continue
            if self._fail is not None and outcome.error is not None:
                self._fail(session_id, outcome.error)
            else:
                await self.prompts.show_error("Delete failed", outcome.message)
            return

    def _mark(self, ids: Sequence[str], pending: bool) -> None:
        if pending:
            self.deleting.update(ids)
        else:
            self.deleting.difference_update(ids)
        self.model.set_pending_delete(ids, pending)


def result_words(outcome: DeleteOutcome) -> str:
    """One conversation's line in a bulk delete's report."""
    if outcome.status is DeleteStatus.DELETED:
        return "Deleted"
    if outcome.status is DeleteStatus.ALREADY_GONE:
        return "Already gone from the server"
    if outcome.status is DeleteStatus.ACTIVE_RUN:
        return "Not deleted: a run is in progress (stop it first)"
    if outcome.status is DeleteStatus.UNCONFIRMED:
        return "Not confirmed: the answer was lost (it may be deleted); retry to be sure"
    if outcome.status is DeleteStatus.SERVER_ONLY:
        return "Deleted on the server; this device catches up at the next sync"
    if isinstance(outcome.error, (NetworkError, ServerError)):
        return "Not deleted: couldn't reach the server"
    return f"Not deleted: {outcome.error.message if outcome.error else outcome.message}"


def neighbour_of(model: SessionListModel, ids: Sequence[str]) -> str | None:
    """The row to select once `ids` are gone: the one below the last of them, else the
    one above the first (so the keyboard stays in the list, like a mail client)."""
    gone = set(ids)
    positions = [i for i in (model.index_of(x).row() for x in ids) if i >= 0]
    if not positions:
        return None
    rows = model.rows()
    for row in rows[max(positions) + 1 :]:
        if row.id not in gone and not is_header(row):
            return row.id
    for row in reversed(rows[: min(positions)]):
        if row.id not in gone and not is_header(row):
            return row.id
    return None
