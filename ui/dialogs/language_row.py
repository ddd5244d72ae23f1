"""The settings dialog's language row: System, English, Deutsch, العربية.

The choice is kept in the profile (`app.translations.write_choice`, through the controller)
and applies on the next start (decision 0207): the row says so. Each language is named in
its own words, so a user lost in a language they cannot read still finds theirs. No
reference leads back to the dialog (`tests/ui/test_dialog_lifetimes.py`).
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QWidget

#: (code, the language's own name); "" is the system's language.
CHOICES = (("en", "English"), ("de", "Deutsch"), ("ar", "العربية"))


class LanguageRow:
    """A combo box and its note, added to the dialog's form."""

    def __init__(self, form: QFormLayout, current: str, parent: QWidget | None = None) -> None:
        self.combo = QComboBox(parent)
        self.combo.setObjectName("languageChoice")
        self.combo.setAccessibleName(QCoreApplication.translate("LanguageRow", "Language"))
        self.combo.addItem(QCoreApplication.translate("LanguageRow", "System language"), "")
        for code, name in CHOICES:
            self.combo.addItem(name, code)
        index = self.combo.findData(current)
        self.combo.setCurrentIndex(max(index, 0))
        note = QLabel(
            QCoreApplication.translate(
                "LanguageRow", "A new language applies the next time Converge starts."
            )
        )
        note.setObjectName("languageNote")
        note.setWordWrap(True)
        note.setEnabled(False)
        form.addRow(QCoreApplication.translate("LanguageRow", "&Language:"), self.combo)
        form.addRow("", note)

    def code(self) -> str:
        """The chosen language: "" for the system's, else `en`, `de` or `ar`."""
        data = self.combo.currentData()
        return data if isinstance(data, str) else ""
