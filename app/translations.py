"""Load the window's translation for the user's language, when one is installed.

Every string the window shows goes through Qt's translation functions (`self.tr()`, or
`QCoreApplication.translate("Dialogs", …)`), so adding a language is adding a file:
`ui/translations/converge_<lang>.qm` (made with `pyside6-lupdate` and `pyside6-lrelease`
from the sources). Qt's own strings (standard buttons, the file dialog) come from Qt's
`qtbase_<lang>.qm`.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QLibraryInfo, QLocale, QTranslator
from PySide6.QtWidgets import QApplication

FOLDER = Path(__file__).resolve().parent.parent / "ui" / "translations"


def install(app: QApplication, locale: QLocale | None = None) -> list[QTranslator]:
    """Install the translators found for `locale` (the system's by default)."""
    locale = locale or QLocale.system()
    installed: list[QTranslator] = []
    sources = (
        ("qtbase", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)),
        ("converge", str(FOLDER)),
    )
    for name, folder in sources:
        translator = QTranslator(app)
        if translator.load(locale, name, "_", folder):
            app.installTranslator(translator)
            installed.append(translator)
    return installed
