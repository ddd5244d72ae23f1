"""Who the application is to the desktop: its id and its icon (decision 0201).

The id is the reverse-DNS name of the installed `.desktop` file and of the AppStream
component (`packaging/`); telling Qt the desktop file's name lets a Wayland compositor or a
dock match the window to its launcher. The icon is the SVG source's PNGs (rendered by
`scripts/render_icons.py`) shipped inside the `app` package, so a wheel, a pipx install and
the PyInstaller bundle all carry it; no SVG plugin is needed at run time.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QGuiApplication, QIcon

APP_ID = "io.converge.Converge"
ICONS = Path(__file__).resolve().parent / "icons"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def icon_path(size: int) -> Path:
    return ICONS / f"{APP_ID}-{size}.png"


def application_icon() -> QIcon:
    """The icon in every size that is there (an empty icon if none is: never an error)."""
    icon = QIcon()
    for size in SIZES:
        path = icon_path(size)
        if path.is_file():
            icon.addFile(str(path))
    return icon


def apply(app: QGuiApplication) -> None:
    """Set the window icon of every window, and the desktop file's name, on `app`."""
    app.setWindowIcon(application_icon())
    app.setDesktopFileName(APP_ID)
