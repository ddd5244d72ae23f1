"""The toolbar's and menus' icons: Lucide's SVGs (ISC licence, `ui/icons/lucide/`, decision
0203), tinted to the palette when they are drawn.

Lucide draws with `stroke="currentColor"`; each icon is rendered through `QSvgRenderer` with
that word replaced by the palette's button-text colour (Normal mode) and its disabled
button-text colour (Disabled mode), at the size and device-pixel ratio a toolbar or a menu
asks for, so nothing is scaled up blurry. It is rendered when first asked for
(`TintedIconEngine`), not at every size and ratio up front: those renders were the longest
part of building the window, before its first paint. A theme or palette change re-tints
them (`ActionIcons.tint`).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QRect, QRectF, QSize, Qt
from PySide6.QtGui import (
    QAction,
    QColor,
    QIcon,
    QIconEngine,
    QPainter,
    QPalette,
    QPixmap,
)
from PySide6.QtSvg import QSvgRenderer

ICON_DIR = Path(__file__).resolve().parent.parent / "icons" / "lucide"
SIZES = (16, 18, 20, 24)  # menus, the toolbar, and a little headroom
TOOLBAR_SIZE = 18


def icon_path(name: str) -> Path:
    return ICON_DIR / f"{name}.svg"


def svg_text(name: str, color: QColor) -> str:
    """The icon's SVG with its stroke in `color` (an opaque #rrggbb)."""
    return icon_path(name).read_text(encoding="utf-8").replace("currentColor", color.name())


def _draw(renderer: QSvgRenderer, size: QSize, ratio: float) -> QPixmap:
    """The icon `size` device-independent pixels big at `ratio`."""
    width, height = max(1, round(size.width() * ratio)), max(1, round(size.height() * ratio))
    pixmap = QPixmap(width, height)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    try:
        renderer.render(painter, QRectF(0, 0, width, height))
    finally:
        painter.end()
    pixmap.setDevicePixelRatio(ratio)
    return pixmap


class TintedIconEngine(QIconEngine):
    """An icon drawn in two colours (Normal; Disabled), each pixmap rendered from the SVG
    when first asked for, at exactly the size and ratio asked, and kept."""

    def __init__(self, name: str, normal: QColor, disabled: QColor) -> None:
        super().__init__()
        self._name = name
        self._colors = (QColor(normal), QColor(disabled))
        self._renderers: dict[bool, QSvgRenderer] = {}
        self._pixmaps: dict[tuple[int, int, bool, float], QPixmap] = {}

    def _renderer(self, disabled: bool) -> QSvgRenderer:
        renderer = self._renderers.get(disabled)
        if renderer is None:
            svg = svg_text(self._name, self._colors[disabled]).encode("utf-8")
            renderer = self._renderers[disabled] = QSvgRenderer(QByteArray(svg))
        return renderer

    def scaledPixmap(
        self, size: QSize, mode: QIcon.Mode, state: QIcon.State, scale: float
    ) -> QPixmap:
        disabled = mode == QIcon.Mode.Disabled
        key = (size.width(), size.height(), disabled, scale)
        pixmap = self._pixmaps.get(key)
        if pixmap is None:
            pixmap = self._pixmaps[key] = _draw(self._renderer(disabled), size, scale)
        return pixmap

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        return self.scaledPixmap(size, mode, state, 1.0)

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        ratio = painter.device().devicePixelRatioF() if painter.device() is not None else 1.0
        painter.drawPixmap(rect, self.scaledPixmap(rect.size(), mode, state, ratio))

    def availableSizes(
        self, mode: QIcon.Mode = QIcon.Mode.Normal, state: QIcon.State = QIcon.State.Off
    ) -> list[QSize]:
        return [QSize(size, size) for size in SIZES]

    def clone(self) -> QIconEngine:
        return TintedIconEngine(self._name, *self._colors)


def icon_colors(palette: QPalette) -> tuple[QColor, QColor]:
    """(normal, disabled) stroke colours: the palette's button text in each group."""
    role = QPalette.ColorRole.ButtonText
    normal = palette.color(QPalette.ColorGroup.Active, role)
    disabled = palette.color(QPalette.ColorGroup.Disabled, role)
    return QColor(normal), QColor(disabled)


def tinted_icon(name: str, palette: QPalette) -> QIcon:
    """The icon in the palette's colours, Normal and Disabled, at any size and ratio."""
    return QIcon(TintedIconEngine(name, *icon_colors(palette)))


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
