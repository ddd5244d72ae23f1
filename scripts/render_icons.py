"""Render the application icon's PNGs (hicolor sizes) from its SVG source with QSvgRenderer.

`python scripts/render_icons.py` rewrites `app/icons/io.converge.Converge-<size>.png`;
`tests/packaging/test_icons.py` checks the committed PNGs are what this makes.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ICONS = Path(__file__).resolve().parent.parent / "app" / "icons"
APP_ID = "io.converge.Converge"
SOURCE = ICONS / f"{APP_ID}.svg"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def png_path(size: int) -> Path:
    return ICONS / f"{APP_ID}-{size}.png"


def render(size: int, source: Path = SOURCE) -> QImage:
    """The icon at `size`×`size` pixels, premultiplied ARGB on transparent."""
    renderer = QSvgRenderer(str(source))
    if not renderer.isValid():
        raise ValueError(f"{source} is not an SVG QSvgRenderer can draw")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    return image.convertToFormat(QImage.Format.Format_ARGB32)


def main() -> int:
    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    for size in SIZES:
        path = png_path(size)
        if not render(size).save(str(path), "PNG"):
            print(f"could not write {path}", file=sys.stderr)
            return 1
        print(path.relative_to(ICONS.parent.parent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
