"""The appearance settings: a theme (System, Light, Dark) and a font size, applied to the
whole application, live and at start-up (decision 0204).

System leaves the palette to the platform (the system's colour scheme, as before: a dark
GTK or KDE theme gives a dark palette and `ui.style.is_dark` follows it); Light and Dark set
the application palette (the style's standard light palette, or `ui.style.dark_palette`)
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

from ui.style import THEME_PROPERTY, dark_palette

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
    """The platform's palette and font as they were before any choice replaced them."""

    palette: QPalette
    font: QFont


_system: _SystemLook | None = None


def system_look(app: QGuiApplication) -> _SystemLook:
    global _system
    if _system is None:
        _system = _SystemLook(QPalette(app.palette()), QFont(app.font()))
    return _system


def light_palette(app: QGuiApplication) -> QPalette:
    if isinstance(app, QApplication):
        return app.style().standardPalette()
    return QPalette()


def apply_appearance(app: QCoreApplication | None, appearance: Appearance) -> None:
    """Make `appearance` the application's (each window restyles itself on the change)."""
    if not isinstance(app, QGuiApplication):
        return
    system = system_look(app)
    current = app.property(THEME_PROPERTY) or Theme.SYSTEM.value
    app.setProperty(THEME_PROPERTY, appearance.theme.value)
    if appearance.theme == Theme.DARK:
        app.setPalette(dark_palette())
    elif appearance.theme == Theme.LIGHT:
        app.setPalette(light_palette(app))
    elif current != Theme.SYSTEM.value:  # back to the platform's palette
        app.setPalette(system.palette)
    app.setProperty(FONT_SIZE_PROPERTY, appearance.font_size)
    font = QFont(system.font)
    if appearance.font_size > 0:
        font.setPointSize(appearance.font_size)
    if font != app.font():
        app.setFont(font)


def current_appearance(app: QCoreApplication | None = None) -> Appearance:
    """What `apply_appearance` last made the application's (the defaults before)."""
    app = app or QCoreApplication.instance()
    if app is None:
        return Appearance()
    return Appearance.parse(app.property(THEME_PROPERTY), app.property(FONT_SIZE_PROPERTY))
