"""The window's size, position and sidebar width, what Enter does in the composer, and the
appearance (theme and font size, `ui.theme.theme`), remembered per profile.

Two profiles are two devices side by side, so each keeps its own geometry (in
`window.json` in the profile folder, next to its settings). Qt's own `saveGeometry()` bytes
are stored as base64; a damaged or missing file just means the default size. A restored
geometry is clamped to the screen's available geometry (`ui.window.screen_fit`): one saved on a
bigger screen, or at a smaller scale factor, must not open with the composer off-screen.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QByteArray, QCoreApplication

from sync import SyncError, write_private
from ui.theme.theme import Appearance, apply_appearance, current_appearance
from ui.window.main_window import MainWindow
from ui.window.screen_fit import fit_to_screen

log = logging.getLogger(__name__)

STATE_FILE = "window.json"


@dataclass(frozen=True)
class WindowState:
    geometry: bytes
    splitter: tuple[int, ...]
    enter_sends: bool = True
    appearance: Appearance = field(default_factory=Appearance)


def read_state(profile: Path) -> WindowState | None:
    try:
        raw = json.loads((profile / STATE_FILE).read_text(encoding="utf-8"))
        geometry = base64.b64decode(raw["geometry"], validate=True)
        splitter = tuple(int(size) for size in raw.get("splitter", []))
        enter_sends = raw.get("enter_sends", True) is not False
        appearance = Appearance.parse(raw.get("theme"), raw.get("font_size"))
    except (OSError, ValueError, KeyError, TypeError, AttributeError, binascii.Error):
        return None
    return WindowState(geometry, splitter, enter_sends, appearance)


def capture(window: MainWindow) -> WindowState:
    return WindowState(
        bytes(window.saveGeometry().data()),
        tuple(window.splitter.sizes()),
        window.pane.enter_sends,
        current_appearance(),
    )


def write_state(profile: Path, state: WindowState) -> None:
    data = {
        "geometry": base64.b64encode(state.geometry).decode("ascii"),
        "splitter": list(state.splitter),
        "enter_sends": state.enter_sends,
        "theme": state.appearance.theme.value,
        "font_size": state.appearance.font_size,
    }
    try:
        write_private(profile, STATE_FILE, json.dumps(data))  # 0700 folder, 0600 file
    except (OSError, SyncError):
        log.warning("could not save the window's size and position")


def restore(window: MainWindow, state: WindowState | None) -> bool:
    """Apply a saved state (before `show()`); False when there was none to apply. The
    appearance applies to the whole application (the window restyles itself)."""
    if state is None:
        return False
    apply_appearance(QCoreApplication.instance(), state.appearance)
    restored = window.restoreGeometry(QByteArray(state.geometry))
    fit_to_screen(window)
    if len(state.splitter) == 2 and all(size > 0 for size in state.splitter):
        window.splitter.setSizes(list(state.splitter))
    if window.has_pane:  # else the start sets it on the pane it builds (`app.desktop`)
        window.pane.set_enter_sends(state.enter_sends)
    return bool(restored)
