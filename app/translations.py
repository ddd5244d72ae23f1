"""Load the window's translation for the chosen language (the system's by default).

Every string the window shows goes through Qt's translation functions (`self.tr()`, or
`QCoreApplication.translate("Dialogs", …)`), so adding a language is adding a source:
`ui/translations/converge_<lang>.ts`, refreshed from the code by `make translations`
(`pyside6-lupdate`) and compiled to `.qm` by the install stamp (`pyside6-lrelease`; the
`.qm` files are build output, never committed). Qt's own strings (standard buttons, the
file dialog) come from Qt's `qtbase_<lang>.qm`.

The language is a profile setting (`language` in the profile folder: empty for the
system's, or `en`, `de`, `ar`), read once at start-up: a change applies on the next start
(decision 0207). Arabic turns the whole window right to left.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QLibraryInfo, QLocale, Qt, QTranslator
from PySide6.QtWidgets import QApplication

from sync import write_private
from ui.sidebar.relative_time import forget_words

log = logging.getLogger(__name__)

FOLDER = Path(__file__).resolve().parent.parent / "ui" / "translations"
CHOICE_FILE = "language"
#: The languages the window ships, as (code, the language's own name); "" is the system's.
LANGUAGES = (("en", "English"), ("de", "Deutsch"), ("ar", "العربية"))
CODES = frozenset(code for code, _name in LANGUAGES)


def read_choice(profile: Path) -> str:
    """The profile's language setting: "" (the system's) or one of `CODES`."""
    try:
        with (profile / CHOICE_FILE).open("rb") as file:
            code = file.read(16).decode("utf-8").strip()  # a code is 2 bytes: read no more
    except (OSError, UnicodeDecodeError):
        return ""
    return code if code in CODES else ""


def write_choice(profile: Path, code: str) -> None:
    """Keep the language setting in the profile (applies on the next start)."""
    try:
        write_private(profile, CHOICE_FILE, code if code in CODES else "")
    except OSError as error:
        log.warning("could not save the language setting: %s", error)


def locale_for(code: str) -> QLocale:
    """The locale the window uses for a setting: the system's for ""."""
    return QLocale(code) if code in CODES else QLocale.system()


def install(app: QApplication, locale: QLocale | None = None) -> list[QTranslator]:
    """Install the translators found for `locale` (the system's by default), make it the
    default locale (dates and numbers go through `QLocale()`), and set the window's layout
    direction from it (right to left for Arabic)."""
    locale = locale or QLocale.system()
    QLocale.setDefault(locale)
    forget_words()
    installed: list[QTranslator] = []
    if locale.language() not in (QLocale.Language.English, QLocale.Language.C):
        sources = (
            ("qtbase", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)),
            ("converge", str(FOLDER)),
        )
        for name, folder in sources:
            translator = QTranslator(app)
            if translator.load(locale, name, "_", folder):
                app.installTranslator(translator)
                installed.append(translator)
    app.setLayoutDirection(
        Qt.LayoutDirection.RightToLeft
        if locale.textDirection() == Qt.LayoutDirection.RightToLeft
        else Qt.LayoutDirection.LeftToRight
    )
    return installed


def uninstall(app: QApplication, installed: list[QTranslator]) -> None:
    """Undo `install` (tests, and a window rebuilt in another language)."""
    for translator in installed:
        app.removeTranslator(translator)
    QLocale.setDefault(QLocale("en_US"))
    forget_words()
    app.setLayoutDirection(Qt.LayoutDirection.LeftToRight)
