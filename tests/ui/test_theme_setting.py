"""The theme (System, Light, Dark) and font-size settings: chosen in the settings dialog,
applied live to the open window (palette, stylesheet, icons, fonts), kept in the profile
and applied again at start-up."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QDialog

from app import window_state
from app.loop import ConvergeEventLoop
from tests.ui.conftest import run
from ui.dialogs.settings import ConnectionSettings, SettingsDialog
from ui.theme.style import is_dark
from ui.theme.theme import Appearance, Theme, apply_appearance, current_appearance
from ui.window.controller import WindowController
from ui.window.main_window import MainWindow


def _reset(qapp: QApplication, palette: QPalette) -> None:
    apply_appearance(qapp, Appearance())
    qapp.setPalette(palette)
    QApplication.processEvents()


def test_the_dialog_shows_and_returns_the_appearance(qapp: QApplication) -> None:
    dialog = SettingsDialog(None, ConnectionSettings("", ""), "x")
    rows = dialog.appearance
    assert rows.chosen() == current_appearance() == Appearance()
    assert [rows.theme.itemText(i) for i in range(rows.theme.count())] == [
        "System",
        "Light",
        "Dark",
    ]
    rows.theme.setCurrentIndex(rows.theme.findData("dark"))
    rows.font_size.setCurrentIndex(rows.font_size.findData(14))
    assert rows.chosen() == Appearance(Theme.DARK, 14)
    dialog.deleteLater()


def test_dark_and_a_font_size_apply_live_and_come_back_at_start_up(
    loop: ConvergeEventLoop, qapp: QApplication, tmp_path: Path
) -> None:
    original = QPalette(qapp.palette())
    window = MainWindow()
    window.show()
    controller = WindowController(window, sync_interval=0)
    light_sheet, light_icon = window.styleSheet(), window.actions_.icons.tinted_for
    light_title = window.pane.title.font().pointSizeF()
    assert not is_dark()

    def choose(dialog: QDialog) -> None:
        assert isinstance(dialog, SettingsDialog)
        dialog.appearance.theme.setCurrentIndex(dialog.appearance.theme.findData("dark"))
        dialog.appearance.font_size.setCurrentIndex(dialog.appearance.font_size.findData(16))
        QTimer.singleShot(0, dialog.accept)

    saved: list[bool] = []
    controller.preferences_changed.connect(lambda: saved.append(True))
    controller.prompts.shown.connect(choose)
    try:
        run(loop, controller.edit_settings())
        QApplication.processEvents()
        assert saved  # the profile's file is written (app.desktop listens)
        assert is_dark()
        assert window.palette().color(QPalette.ColorRole.Window).lightness() < 128
        assert window.styleSheet() != light_sheet and "#2b2f38" in window.styleSheet()
        assert window.actions_.icons.tinted_for != light_icon  # icons re-tinted light
        assert window.font().pointSize() == 16
        assert window.pane.title.font().pointSizeF() > light_title  # relative to the body
        window_state.write_state(tmp_path, window_state.capture(window))
        stored = json.loads((tmp_path / window_state.STATE_FILE).read_text())
        assert stored["theme"] == "dark" and stored["font_size"] == 16
        run(loop, controller.shutdown())
        window.close()

        _reset(qapp, original)  # a fresh start: the platform's look until the profile loads
        assert not is_dark()
        again = MainWindow()
        window_state.restore(again, window_state.read_state(tmp_path))
        again.show()
        QApplication.processEvents()
        assert is_dark() and current_appearance() == Appearance(Theme.DARK, 16)
        assert "#2b2f38" in again.styleSheet()
        assert again.font().pointSize() == 16
        again.close()
    finally:
        _reset(qapp, original)


def test_light_wins_over_a_dark_system_and_system_follows_it_again(
    qapp: QApplication,
) -> None:
    from tests.ui.looks import adwaita_dark

    original = QPalette(qapp.palette())
    window = MainWindow()
    try:
        qapp.setPalette(adwaita_dark())  # the system's theme is dark
        QApplication.processEvents()
        assert is_dark() and "#2b2f38" in window.styleSheet()
        apply_appearance(qapp, Appearance(Theme.LIGHT))
        QApplication.processEvents()
        assert not is_dark() and "#eef0f4" in window.styleSheet()
        assert qapp.palette().color(QPalette.ColorRole.Window).lightness() >= 128
        apply_appearance(qapp, Appearance(Theme.SYSTEM))
        QApplication.processEvents()
        assert is_dark()
    finally:
        window.close()
        _reset(qapp, original)


def test_a_damaged_or_hostile_setting_means_the_default(tmp_path: Path) -> None:
    state = {"geometry": "", "splitter": [], "theme": "<b>neon</b>", "font_size": 400}
    (tmp_path / window_state.STATE_FILE).write_text(json.dumps(state))
    read = window_state.read_state(tmp_path)
    assert read is not None and read.appearance == Appearance()
    assert Appearance.parse("dark", True) == Appearance(Theme.DARK, 0)  # a bool is no size


def test_dark_then_light_restyles_in_light(qapp: QApplication) -> None:
    original = QPalette(qapp.palette())
    window = MainWindow()
    try:
        apply_appearance(qapp, Appearance(Theme.DARK))
        QApplication.processEvents()
        assert "#2b2f38" in window.styleSheet()
        apply_appearance(qapp, Appearance(Theme.LIGHT))
        QApplication.processEvents()
        assert "#eef0f4" in window.styleSheet() and not window.pane.transcript.delegate.dark
    finally:
        window.close()
        _reset(qapp, original)
