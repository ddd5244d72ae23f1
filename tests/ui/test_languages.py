"""The window in German and Arabic: the compiled translations load for a locale, dates and
relative times come from QLocale ("vor 2 Std.", Arabic-Indic digits, month names), Arabic
turns the layout right to left, and the language is a profile setting."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import QLocale, Qt
from PySide6.QtWidgets import QApplication, QDialog

from app import translations
from app.loop import ConvergeEventLoop
from sync.profile.token_store import TokenLocation
from tests.ui.conftest import run
from ui.dialogs.settings import SettingsDialog
from ui.dialogs.trust_rows import token_storage_words
from ui.sidebar.grouping import sections
from ui.sidebar.relative_time import full_time, relative_time
from ui.window.controller import WindowController
from ui.window.main_window import MainWindow

NOW = datetime(2026, 12, 2, 15, 0, tzinfo=UTC)


def _ago(delta: timedelta) -> str:
    return (NOW - delta).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def test_a_days_words_follow_a_change_of_language(qapp: QApplication) -> None:
    """The sidebar remembers how it worded each day (`calendar_words`): a language installed
    after a paint must still change the words, and uninstalling it change them back."""
    old, last_week = _ago(timedelta(days=40)), _ago(timedelta(days=3))
    english = relative_time(old, NOW), relative_time(last_week, NOW)
    assert english[0] == "23 Oct"
    installed = translations.install(qapp, QLocale("de"))
    try:
        assert relative_time(old, NOW) == "23. Okt."
        assert relative_time(last_week, NOW) != english[1]  # "Sonntag", not "Sunday"
    finally:
        translations.uninstall(qapp, installed)
    assert (relative_time(old, NOW), relative_time(last_week, NOW)) == english


@pytest.mark.parametrize("language", ["de"], indirect=True)
def test_german_words_and_dates(language: str) -> None:
    assert relative_time(_ago(timedelta(seconds=5)), NOW) == "Gerade eben"
    assert relative_time(_ago(timedelta(minutes=2)), NOW) == "vor 2 Min."
    assert relative_time(_ago(timedelta(hours=2)), NOW) == "vor 2 Std."
    assert relative_time(_ago(timedelta(days=40)), NOW) == "23. Okt."
    assert full_time("2025-03-04T10:00:00.000000Z").startswith("4. März 2025")
    labels = [label for _key, label, _start in sections(NOW, "2026-06")]
    assert labels[:5] == ["Heute", "Gestern", "Letzte 7 Tage", "Letzte 30 Tage", "November"]
    assert "Dezember 2025" in [label for _key, label, _start in sections(NOW, "2025-11")]
    window = MainWindow()
    assert window.new_action.text() == "Neue Unterhaltung"
    assert QApplication.layoutDirection() == Qt.LayoutDirection.LeftToRight
    window.close()


@pytest.mark.parametrize("language", ["ar"], indirect=True)
def test_arabic_words_digits_and_direction(language: str) -> None:
    assert relative_time(_ago(timedelta(minutes=5)), NOW) == "قبل ٥ دقائق"
    assert relative_time(_ago(timedelta(hours=2)), NOW) == "قبل ساعتين"
    assert relative_time(_ago(timedelta(days=40)), NOW) == "٢٣ أكتوبر"
    labels = [label for _key, label, _start in sections(NOW, "2026-06")]
    assert labels[:5] == ["اليوم", "أمس", "آخر ٧ أيام", "آخر ٣٠ يومًا", "نوفمبر"]
    assert QApplication.layoutDirection() == Qt.LayoutDirection.RightToLeft
    window = MainWindow()
    assert window.isRightToLeft()
    assert window.new_action.text() == "محادثة جديدة"
    window.close()


def test_english_is_the_source(qapp: QApplication) -> None:
    installed = translations.install(qapp, QLocale("en_GB"))
    try:
        assert installed == []
        assert relative_time(_ago(timedelta(hours=3)), NOW) == "3 h ago"
        assert relative_time(_ago(timedelta(minutes=1)), NOW) == "1 min ago"
    finally:
        translations.uninstall(qapp, installed)


def test_the_language_setting_is_kept_in_the_profile(tmp_path: Path) -> None:
    assert translations.read_choice(tmp_path) == ""
    translations.write_choice(tmp_path, "ar")
    assert translations.read_choice(tmp_path) == "ar"
    assert translations.locale_for("ar").language() == QLocale.Language.Arabic
    (tmp_path / translations.CHOICE_FILE).write_text("../../etc\n", encoding="utf-8")
    assert translations.read_choice(tmp_path) == ""  # anything else is the system's
    (tmp_path / translations.CHOICE_FILE).write_bytes(b"\xff" * 1_000_000)
    assert translations.read_choice(tmp_path) == ""  # read only as far as a code goes


def test_the_settings_dialog_chooses_the_language(loop: ConvergeEventLoop) -> None:
    window = MainWindow()
    controller = WindowController(window, sync_interval=0)
    controller.language = "de"
    chosen: list[str] = []
    controller.language_chosen.connect(chosen.append)

    def choose(dialog: QDialog) -> None:
        assert isinstance(dialog, SettingsDialog)
        combo = dialog.language.combo
        assert combo.currentData() == "de"
        assert [combo.itemText(i) for i in range(1, combo.count())] == [
            "English",
            "Deutsch",
            "العربية",
        ]
        combo.setCurrentIndex(combo.findData("ar"))
        dialog.accept()

    controller.prompts.shown.connect(choose)
    run(loop, controller.edit_settings())
    assert chosen == ["ar"]
    assert controller.language == "ar"
    run(loop, controller.shutdown())
    window.close()


def test_where_the_token_is_kept_says_the_command_lines_english(qapp: QApplication) -> None:
    for location in (TokenLocation("keychain", "a"), TokenLocation("file", path=Path("/p/t"))):
        assert token_storage_words(location) == location.describe()
    assert token_storage_words(None) == ""


@pytest.mark.parametrize("language", ["de"], indirect=True)
def test_a_bulk_deletes_result_is_worded_in_german(language: str) -> None:
    from ui.dialogs.dialogs import results_summary

    lines = [(f"Chat {i}", i % 50 != 0, "Gelöscht") for i in range(200)]
    text, body = results_summary(lines)
    assert text == "196 von 200 Unterhaltungen gelöscht. Die anderen bleiben erhalten."
    assert body.startswith("✓  196 gelöscht")
    text, _body = results_summary([("Eins", True, "Gelöscht")])
    assert text == "1 Unterhaltung überall gelöscht."


@pytest.mark.parametrize("language", ["de"], indirect=True)
def test_the_connection_in_use_is_worded_in_german(language: str) -> None:
    from ui.dialogs.settings import connection_in_use
    from ui.text.plain import isolate

    text = connection_in_use("http://127.0.0.1:8799", "alice", "/home/a/p", bundled=True)
    url, folder = isolate("http://127.0.0.1:8799"), isolate("/home/a/p")
    assert text == f"{url} als alice (der eingebaute Demo-Server)\nProfil {folder}"
