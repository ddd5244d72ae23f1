"""The toolbar's and menus' icons: Lucide's SVGs (ISC licence, `ui/icons/lucide/`, decision
0203), tinted to the palette when they are drawn.

Lucide draws with `stroke="currentColor"`; each icon is rendered through `QSvgRenderer` with
that word replaced by the palette's button-text colour (Normal mode) and its disabled
button-text colour (Disabled mode), at the sizes a toolbar and a menu ask for and at every
device-pixel ratio of the screens (plus 1 and 2), so nothing is scaled up blurry. A theme or
palette change re-tints them (`ActionIcons.tint`).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QAction, QColor, QGuiApplication, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer

ICON_DIR = Path(__file__).resolve().parent.parent / "icons" / "lucide"
SIZES = (16, 18, 20, 24)  # menus, the toolbar, and a little headroom
TOOLBAR_SIZE = 18


def icon_path(name: str) -> Path:
    return ICON_DIR / f"{name}.svg"


def svg_text(name: str, color: QColor) -> str:
    """The icon's SVG with its stroke in `color` (an opaque #rrggbb)."""
    return icon_path(name).read_text(encoding="utf-8").replace("currentColor", color.name())


def device_ratios() -> tuple[float, ...]:
    ratios = {1.0, 2.0}
    if QGuiApplication.instance() is not None:
        ratios.update(screen.devicePixelRatio() for screen in QGuiApplication.screens())
    return tuple(sorted(ratios))


def render(name: str, color: QColor, size: int, ratio: float = 1.0) -> QPixmap:
    """One pixmap of the icon, `size` device-independent pixels square at `ratio`."""
    renderer = QSvgRenderer(QByteArray(svg_text(name, color).encode("utf-8")))
    pixels = max(1, round(size * ratio))
    pixmap = QPixmap(pixels, pixels)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    try:
        renderer.render(painter, QRectF(0, 0, pixels, pixels))
    finally:
        painter.end()
    pixmap.setDevicePixelRatio(ratio)
    return pixmap


def icon_colors(palette: QPalette) -> tuple[QColor, QColor]:
    """(normal, disabled) stroke colours: the palette's button text in each group."""
    role = QPalette.ColorRole.ButtonText
    normal = palette.color(QPalette.ColorGroup.Active, role)
    disabled = palette.color(QPalette.ColorGroup.Disabled, role)
    return QColor(normal), QColor(disabled)


def tinted_icon(name: str, palette: QPalette) -> QIcon:
    """The icon in the palette's colours, Normal and Disabled, at every size and ratio."""
    normal, disabled = icon_colors(palette)
    icon = QIcon()
    for ratio in device_ratios():
        for size in SIZES:
            icon.addPixmap(render(name, normal, size, ratio), QIcon.Mode.Normal)
            icon.addPixmap(render(name, disabled, size, ratio), QIcon.Mode.Disabled)
    return icon


class ActionIcons:
    """Which action wears which icon; `tint` (re)draws them all in a palette's colours, and
    `icon` gives a menu's one-off actions the same tint."""

    def __init__(self) -> None:
        self._named: list[tuple[QAction, str]] = []
        self._cache: dict[str, QIcon] = {}
        self.tinted_for: tuple[str, str] | None = None  # (normal, disabled) of the last tint

    def add(self, action: QAction, name: str) -> None:
        if not icon_path(name).is_file():
            raise FileNotFoundError(icon_path(name))
        self._named.append((action, name))

    def named(self) -> list[tuple[QAction, str]]:
        return list(self._named)

    def tint(self, palette: QPalette) -> None:
        """Draw every icon in `palette`'s colours (nothing to do when they are the same)."""
        key = tuple(color.name() for color in icon_colors(palette))
        if key == self.tinted_for:
            return
        self._cache.clear()
        self.tinted_for = (key[0], key[1])
        for action, name in self._named:
            action.setIcon(self.icon(name, palette))

    def icon(self, name: str, palette: QPalette) -> QIcon:
        if name not in self._cache:
            self._cache[name] = tinted_icon(name, palette)
        return self._cache[name]
