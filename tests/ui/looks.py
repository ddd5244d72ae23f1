"""The three looks the contrast and icon tests run under, and a pixel measure of contrast.

"gtk-dark" is the hard case: the app's theme is System and the platform hands
it a dark palette in the manner of Adwaita-dark under a GTK platform theme, whose `Mid`
and `Dark` roles are near the window colour and whose placeholder text is faint (text
drawn in `palette(mid)` all but vanishes).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtGui import QColor, QImage, QPalette
from PySide6.QtWidgets import QApplication, QWidget

from ui.theme.style import contrast
from ui.theme.theme import Appearance, Theme, apply_appearance

LOOKS = ("light", "dark", "gtk-dark")


def adwaita_dark() -> QPalette:
    palette = QPalette()
    roles = QPalette.ColorRole
    for role, color in (
        (roles.Window, "#242424"),
        (roles.WindowText, "#ffffff"),
        (roles.Base, "#1e1e1e"),
        (roles.AlternateBase, "#2a2a2a"),
        (roles.Text, "#ffffff"),
        (roles.Button, "#303030"),
        (roles.ButtonText, "#ffffff"),
        (roles.Highlight, "#3584e4"),
        (roles.HighlightedText, "#ffffff"),
        (roles.PlaceholderText, "#4a4a4a"),
        (roles.Light, "#303030"),
        (roles.Midlight, "#2c2c2c"),
        (roles.Mid, "#2a2a2a"),
        (roles.Dark, "#1a1a1a"),
        (roles.Shadow, "#000000"),
        (roles.Link, "#78aeed"),
        (roles.ToolTipBase, "#303030"),
        (roles.ToolTipText, "#ffffff"),
    ):
        palette.setColor(role, QColor(color))
    disabled = QPalette.ColorGroup.Disabled
    for role in (roles.WindowText, roles.Text, roles.ButtonText):
        palette.setColor(disabled, role, QColor("#6e6e6e"))
    return palette


@contextmanager
def look(qapp: QApplication, name: str) -> Iterator[None]:
    """The application under one look, put back as it was afterwards."""
    original = QPalette(qapp.palette())
    try:
        if name == "light":
            apply_appearance(qapp, Appearance(Theme.LIGHT))
        elif name == "dark":
            apply_appearance(qapp, Appearance(Theme.DARK))
        else:
            apply_appearance(qapp, Appearance(Theme.SYSTEM))
            qapp.setPalette(adwaita_dark())
        QApplication.processEvents()
        yield
    finally:
        apply_appearance(qapp, Appearance())
        qapp.setPalette(original)
        QApplication.processEvents()


def pixel_contrast(image: QImage) -> float:
    """The contrast of the strongest pixel against the most common one (the surface): what
    a fully covered stroke of the text has against its background."""
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    counts: Counter[int] = Counter()
    for y in range(image.height()):
        for x in range(image.width()):
            counts[image.pixel(x, y)] += 1
    surface = QColor.fromRgb(counts.most_common(1)[0][0])
    return max(contrast(QColor.fromRgb(value), surface) for value in counts)


def widget_contrast(widget: QWidget) -> float:
    return pixel_contrast(widget.grab().toImage())
