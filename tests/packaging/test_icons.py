"""The application icon: PNGs in the hicolor sizes that are what the SVG source renders to,
set as every window's icon with the desktop file's id."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from PySide6.QtCore import QSize
from PySide6.QtGui import QIcon, QImage
from PySide6.QtWidgets import QApplication

from app import identity

ROOT = Path(__file__).resolve().parents[2]
HICOLOR_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def _render_icons() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "render_icons", ROOT / "scripts" / "render_icons.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_sizes_are_the_hicolor_ones() -> None:
    assert identity.SIZES == HICOLOR_SIZES
    assert _render_icons().SIZES == HICOLOR_SIZES


@pytest.mark.parametrize("size", HICOLOR_SIZES)
def test_each_png_is_what_the_script_renders_from_the_svg(qapp: QApplication, size: int) -> None:
    """Edit the SVG and forget `python scripts/render_icons.py`: this fails."""
    script = _render_icons()
    committed = QImage(str(identity.icon_path(size)))
    assert not committed.isNull(), f"{identity.icon_path(size)} is missing"
    assert committed.size() == QSize(size, size)
    fresh = script.render(size)
    committed = committed.convertToFormat(QImage.Format.Format_ARGB32)
    worst = 0
    for y in range(size):
        for x in range(size):
            a, b = committed.pixelColor(x, y), fresh.pixelColor(x, y)
            worst = max(
                worst,
                abs(a.red() - b.red()),
                abs(a.green() - b.green()),
                abs(a.blue() - b.blue()),
                abs(a.alpha() - b.alpha()),
            )
    # A couple of levels for antialiasing that moves between Qt releases; a changed drawing
    # differs by far more.
    assert worst <= 3, f"{size} px: regenerate with `python scripts/render_icons.py`"


def test_the_icon_is_not_blank_and_has_a_transparent_margin(qapp: QApplication) -> None:
    image = QImage(str(identity.icon_path(256)))
    assert image.pixelColor(0, 0).alpha() == 0  # the corner outside the rounded tile
    assert image.pixelColor(128, 40).alpha() == 255  # the tile itself


def test_every_window_gets_the_icon_and_the_desktop_id(qapp: QApplication) -> None:
    before_icon, before_name = qapp.windowIcon(), qapp.desktopFileName()
    try:
        identity.apply(qapp)
        icon = qapp.windowIcon()
        assert {s.width() for s in icon.availableSizes()} == set(HICOLOR_SIZES)
        assert qapp.desktopFileName() == "io.converge.Converge"
    finally:
        qapp.setWindowIcon(before_icon if not before_icon.isNull() else QIcon())
        qapp.setDesktopFileName(before_name)


def test_the_icons_are_package_data_so_a_wheel_carries_them() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"app" = ["icons/*.svg", "icons/*.png"]' in text
    assert '"ui" = ["icons/lucide/*.svg", "icons/lucide/LICENSE"]' in text
