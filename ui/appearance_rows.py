"""The settings dialog's appearance rows: Theme (System, Light, Dark) and Font size.

They only edit: `chosen()` is what Save applies (`ui.theme.apply_appearance`, through the
controller) and keeps in the profile. Like every row of the dialog they hold no Python
reference back to it (`tests/ui/test_dialog_lifetimes.py`).
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QComboBox, QFormLayout

from ui.theme import FONT_SIZES, Appearance, Theme


def _tr(text: str) -> str:
    return QCoreApplication.translate("AppearanceRows", text)


class AppearanceRows:
    """Two combo boxes added to `form`, showing `current`."""

    def __init__(self, form: QFormLayout, current: Appearance) -> None:
        self.theme = QComboBox()
        self.theme.setObjectName("themeChoice")
        self.theme.setAccessibleName(_tr("Theme"))
        for theme, words in (
            (Theme.SYSTEM, _tr("System")),
            (Theme.LIGHT, _tr("Light")),
            (Theme.DARK, _tr("Dark")),
        ):
            self.theme.addItem(words, theme.value)
        self.theme.setCurrentIndex(max(0, self.theme.findData(current.theme.value)))
        self.font_size = QComboBox()
        self.font_size.setObjectName("fontSizeChoice")
        self.font_size.setAccessibleName(_tr("Font size"))
        for size in FONT_SIZES:
            words = _tr("System default") if size == 0 else _tr("{0} pt").format(size)
            self.font_size.addItem(words, size)
        self.font_size.setCurrentIndex(max(0, self.font_size.findData(current.font_size)))
        form.addRow(_tr("T&heme:"), self.theme)
        form.addRow(_tr("&Font size:"), self.font_size)

    def chosen(self) -> Appearance:
        return Appearance.parse(self.theme.currentData(), self.font_size.currentData())
