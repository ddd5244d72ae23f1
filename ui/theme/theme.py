"""The appearance settings: a theme (System, Light, Dark) and a font size, applied to the
whole application, live and at start-up (decision 0204).

System leaves the palette to the platform (the system's colour scheme, as before: a dark
GTK or KDE theme gives a dark palette and `ui.theme.style.is_dark` follows it); Light and Dark set
the application palette (the style's standard light palette, or `ui.theme.style.dark_palette`)
and name the choice in an application property, so the stylesheet and the delegates pick
the matching variant whatever the system says. The font size is the application font's
point size (0: the system's). Every window restyles itself on the palette and font change
events this sends (`MainWindow.apply_color_scheme`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QFont, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from ui.theme.style import THEME_PROPERTY, dark_palette

FONT_SIZE_PROPERTY = "convergeFontSize"


class Theme(StrEnum):
    SYSTEM = "system"
    LIGHT = "light"
    DARK = "dark"


#: The font sizes offered, in points; 0 is the system's own size.
FONT_SIZES = (0, 9, 10, 11, 12, 13, 14, 16, 18, 20)


@dataclass(frozen=True)
class Appearance:
    theme: Theme = Theme.SYSTEM
    font_size: int = 0

    @classmethod
    def parse(cls, theme: object, font_size: object) -> Appearance:
        """From a settings file's values, whatever they are: unknown ones are defaults."""
        chosen = Theme(theme) if theme in {t.value for t in Theme} else Theme.SYSTEM
        size = font_size if isinstance(font_size, int) and font_size in FONT_SIZES else 0
        return cls(chosen, size)


@dataclass
class _SystemLook:
    """The platform's palette and font, as they were when a choice last replaced them."""

    palette: QPalette | None = None
    font: QFont | None = None


_system = _SystemLook()


def light_palette(app: QGuiApplication) -> QPalette:
    if isinstance(app, QApplication):
        return app.style().standardPalette()
    return QPalette()


def apply_appearance(app: QCoreApplication | None, appearance: Appearance) -> None:
    """Make `appearance` the application's (each window restyles itself on the change).
    Leaving System keeps the platform's palette (and font) to go back to."""
    if not isinstance(app, QGuiApplication):
        return
    before = current_appearance(app)
    # Named first: the palette change restyles every window, which reads the choice.
    app.setProperty(THEME_PROPERTY, appearance.theme.value)
    if appearance.theme != Theme.SYSTEM:
        if before.theme == Theme.SYSTEM:
            _system.palette = QPalette(app.palette())
        app.setPalette(dark_palette() if appearance.theme == Theme.DARK else light_palette(app))
    elif before.theme != Theme.SYSTEM and _system.palette is not None:
        app.setPalette(_system.palette)
    if before.font_size == 0 or _system.font is None:
        _system.font = QFont(app.font())
    font = QFont(_system.font)
    if appearance.font_size > 0:
        font.setPointSize(appearance.font_size)
    app.setProperty(FONT_SIZE_PROPERTY, appearance.font_size)
    if font != app.font():
        app.setFont(font)


def current_appearance(app: QCoreApplication | None = None) -> Appearance:
    """What `apply_appearance` last made the application's (the defaults before)."""
    app = app or QCoreApplication.instance()
    if app is None:
        return Appearance()
    return Appearance.parse(app.property(THEME_PROPERTY), app.property(FONT_SIZE_PROPERTY))
