"""The window's side of a damaged mirror: the banner shown, and Rebuild carried out.

`sync.repair` does the work (a new mirror walked from the server, the unconfirmed delete
marks salvaged, the damaged file deleted); this module only says what happened in the
window and loads that code on a worker thread (it brings the engine and httpx),
so the UI thread never touches the file. `app.desktop.Desktop` closes its engine before
`rebuild` (the engine holds the file) and attaches a new one after it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from sync import Profile, SyncError

if TYPE_CHECKING:
    from sync import RepairResult
    from ui.window.main_window import MainWindow

log = logging.getLogger(__name__)

#: The reason shown for a failure that is not a `SyncError` (its traceback is in the log).
UNEXPECTED = "Something unexpected stopped it; the details are in the log."


async def rebuild(window: MainWindow, profile: Profile) -> bool:
    """Rebuild `profile`'s mirror from the server (its engine already closed); returns
    whether it was rebuilt. A failure changed nothing: the banner says so and offers
    Rebuild again."""
    banner = window.damage_banner
    banner.set_rebuilding()
    repair = await asyncio.to_thread(load_repair)
    try:
        result = await repair(profile, force=True)
    except Exception as exc:  # any failure (an OSError replacing the file too) resets it
        if isinstance(exc, SyncError):
            reason = exc.message
        else:
            log.exception("the rebuild of %s failed", profile.root)
            reason = UNEXPECTED
        banner.set_failed(reason)
        window.set_status(banner.text.text(), error=True, details=reason)
        return False
    banner.hide()
    window.set_status(result.message)
    return True


def load_repair() -> Callable[..., Awaitable[RepairResult]]:
    """`sync.repair.repair_mirror`, imported on a worker thread like the engine."""
    from sync import repair_mirror

    return repair_mirror
