"""Uncaught errors: the whole of them to the log, one sentence to the user.

An error no code path expected (a bug, or a `SyncError` an action forgot to word) must not
end the window or print a traceback at the user: `sys.excepthook` takes what escapes a Qt
slot and the loop's exception handler what escapes a task.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from sync import SyncError, loggable

if TYPE_CHECKING:  # app/ imports Qt only in loop, desktop and first_paint
    from ui.window.main_window import MainWindow

log = logging.getLogger(__name__)


def install(window: MainWindow, log_path: Path | None, loop: asyncio.AbstractEventLoop) -> None:
    """Uncaught errors go to the log; the user sees one sentence in the status line."""

    def tell_user() -> None:
        where = f" Details are in {log_path}." if log_path else ""
        window.set_status(f"Something went wrong.{where}", error=True)

    def excepthook(
        kind: type[BaseException], value: BaseException, tb: TracebackType | None
    ) -> None:
        if isinstance(value, SyncError):
            window.set_status(value.message, error=True)
            log.warning("unhandled %s", loggable(value))
            return
        log.error("uncaught exception", exc_info=(kind, value, tb))
        tell_user()

    def loop_handler(_loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        log.error("event loop: %s", context.get("message"), exc_info=exc)
        if exc is not None and not isinstance(exc, (ConnectionError, asyncio.CancelledError)):
            tell_user()

    sys.excepthook = excepthook
    loop.set_exception_handler(loop_handler)
