"""One way to run a window action, in the shape of Anki's `CollectionOp`: what it is (words
for the user), the coroutine, what to do on success, and ONE failure path.

Every action of `ui.pane.open_conversation` and the controller is a `WindowAction` given to
`ActionRunner.run`, so that all of them fail the same way (offline checked, the cause shown
where the user looks, not only behind the status line's Details). `ActionRunner.run`

- marks the action busy (`busy(True)`) and always resets it (`busy(False)`, in `finally`);
- on success clears a failure the pane still shows, then calls `success(result)`;
- on failure words it once (`ui.window.failure_words.describe`: the cause and its fixes), puts the
  headline on the status line with the technical Details, names the cause in the pane with
  its buttons (Open Settings, Retry, Save…) when the action still belongs to the pane, and
  checks for offline at once when the network may be why (`StatusPresenter.suspect_offline`);
- lets an action take an error it understands first (`handle`: a 409 "run in progress"
  that shows Stop, a 404 that says the conversation was deleted).

Cancellation is never a failure: a closed conversation's actions end quietly (a request
the user made is shielded by `OpenConversation._request`, which reports it if it fails
later). A bug (not a `SyncError`) is logged with its traceback and shown as words.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sync import SyncError, loggable
from ui.window.action_words import couldnt
from ui.window.failure_words import Failure, Fix, describe

if TYPE_CHECKING:
    from ui.window.main_window import MainWindow
    from ui.window.status_presenter import StatusPresenter

log = logging.getLogger(__name__)


def _always() -> bool:
    return True


@dataclass
class WindowAction[T]:
    """An action of the window: `what` completes "Couldn't …" ("send the message")."""

    what: str
    op: Callable[[], Awaitable[T]]
    success: Callable[[T], None] | None = None
    busy: Callable[[bool], None] | None = None
    #: What Retry and Save… do when the failure offers them (None: the button is not shown).
    retry: Callable[[], object] | None = None
    save: Callable[[], object] | None = None
    #: An error the action understands itself (True: handled, nothing more is shown).
    handle: Callable[[SyncError], bool] | None = None
    #: Whether the pane still shows what the action was about (else: the status line only).
    in_pane: Callable[[], bool] = _always
    #: Best effort: a failure is logged, never shown (what a memory says).
    quiet: bool = False
    #: The user's own action: its success clears any failure the pane shows. A background
    #: one (a catch-up) clears only its own, so a failed send's cause stays.
    user: bool = True


class ActionRunner:
    """Runs `WindowAction`s for one window: the one place a failure becomes words."""

    def __init__(
        self,
        window: MainWindow,
        presenter: StatusPresenter,
        *,
        host: Callable[[], str],
        open_settings: Callable[[], None],
    ) -> None:
        self.window = window
        self._presenter = presenter
        self._host = host
        self._open_settings = open_settings
        self.last_failure: Failure | None = None

    def host(self) -> str:
        """The server's host, as the words name it ("Can't reach chat.example.org")."""
        return self._host()

    async def run[T](self, action: WindowAction[T]) -> T | None:
        """Run `action`; its result, or None when it failed (the failure is shown)."""
        if action.busy is not None:
            action.busy(True)
        try:
            result = await action.op()
        except SyncError as exc:
            if action.handle is not None and action.handle(exc):
                return None
            log.info("could not %s: %s", action.what, loggable(exc))
            self.fail(action, exc)
            return None
        except Exception as exc:  # a bug: words for the user, the traceback for the log
            log.error("could not %s", action.what, exc_info=exc)
            self.fail(action, exc)
            return None
        finally:
            if action.busy is not None:
                action.busy(False)
        if action.in_pane():
            self.window.pane.clear_failure(None if action.user else action.what)
        if action.success is not None:
            action.success(result)
        return result

    def fail(self, action: WindowAction[Any], error: BaseException) -> None:
        """Show that `action` failed with `error` (also for a failure noticed later)."""
        if action.quiet:
            return
        failure = describe(error, couldnt(action.what), self._host())
        self.last_failure = failure
        self.window.set_status(f"{couldnt(action.what)}.", error=True, details=failure.details)
        if not action.in_pane():
            return  # reported on the status line only, where a pass would replace it at once
        self.window.pane.show_failure(failure, self.fixes(action), action.what)
        if failure.network:
            self._presenter.suspect_offline()

    def fixes(self, action: WindowAction[Any]) -> dict[Fix, Callable[[], object]]:
        """What the notice's buttons do for `action`."""
        actions: dict[Fix, Callable[[], object]] = {Fix.SETTINGS: self._open_settings}
        if action.retry is not None:
            actions[Fix.RETRY] = action.retry
        if action.save is not None:
            actions[Fix.SAVE] = action.save
        return actions
