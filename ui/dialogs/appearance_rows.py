"""The settings dialog's appearance rows: Theme (System, Light, Dark) and Font size.

They only edit: `chosen()` is what Save applies (`ui.theme.theme.apply_appearance`, through the
controller) and keeps in the profile. Like every row of the dialog they hold no Python
reference back to it (`tests/ui/test_dialog_lifetimes.py`).
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QComboBox, QFormLayout

from ui.theme.theme import FONT_SIZES, Appearance, Theme


class AppearanceRows:
    """Two combo boxes added to `form`, showing `current`."""

    def __init__(self, form: QFormLayout, current: Appearance) -> None:
        self.theme = QComboBox()
        self.theme.setObjectName("themeChoice")
        self.theme.setAccessibleName(QCoreApplication.translate("AppearanceRows", "Theme"))
        for theme, words in (
            (Theme.SYSTEM, QCoreApplication.translate("AppearanceRows", "System")),
            (Theme.LIGHT, QCoreApplication.translate("AppearanceRows", "Light")),
            (Theme.DARK, QCoreApplication.translate("AppearanceRows", "Dark")),
        ):
            self.theme.addItem(words, theme.value)
        self.theme.setCurrentIndex(max(0, self.theme.findData(current.theme.value)))
        self.font_size = QComboBox()
        self.font_size.setObjectName("fontSizeChoice")
        self.font_size.setAccessibleName(QCoreApplication.translate("AppearanceRows", "Font size"))
        for size in FONT_SIZES:
            words = (
                QCoreApplication.translate("AppearanceRows", "System default")
                if size == 0
                else QCoreApplication.translate("AppearanceRows", "{0} pt").format(size)
            )
            self.font_size.addItem(words, size)
        self.font_size.setCurrentIndex(max(0, self.font_size.findData(current.font_size)))
        form.addRow(QCoreApplication.translate("AppearanceRows", "T&heme:"), self.theme)
        form.addRow(QCoreApplication.translate("AppearanceRows", "&Font size:"), self.font_size)

    def chosen(self) -> Appearance:
        return Appearance.parse(self.theme.currentData(), self.font_size.currentData())
