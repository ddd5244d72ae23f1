"""The window's side of a damaged mirror: the banner shown, and Rebuild carried out.

`sync.repair` does the work (a new mirror walked from the server, the unconfirmed delete
marks salvaged, the damaged file deleted); this module only says what happened in the
window and loads that code on a worker thread (it brings the engine, SQLAlchemy and httpx),
so the UI thread never touches the file. `app.desktop.Desktop` closes its engine before
`rebuild` (the engine holds the file) and attaches a new one after it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from sync import Profile, SyncError

if TYPE_CHECKING:
    from sync.repair import RepairResult
    from ui.main_window import MainWindow


async def rebuild(window: MainWindow, profile: Profile) -> bool:
    """Rebuild `profile`'s mirror from the server (its engine already closed); returns
    whether it was rebuilt. A failure changed nothing: the banner says so and offers
    Rebuild again."""
    banner = window.damage_banner
    banner.set_rebuilding()
    repair = await asyncio.to_thread(load_repair)
    try:
        result = await repair(profile, force=True)
    except SyncError as exc:
        banner.set_failed(exc.message)
        window.set_status(banner.text.text(), error=True, details=exc.message)
        return False
    banner.hide()
    window.set_status(result.message)
    return True


def load_repair() -> Callable[..., Awaitable[RepairResult]]:
    """`sync.repair.repair_mirror`, imported on a worker thread like the engine."""
    from sync.repair import repair_mirror

    return repair_mirror
