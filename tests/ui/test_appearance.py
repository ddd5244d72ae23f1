"""The window follows the system's light or dark palette."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from ui.theme.style import dark_palette, is_dark
from ui.window.main_window import MainWindow


def test_a_dark_system_palette_gives_the_dark_styles_and_back(qapp: QApplication) -> None:
    window = MainWindow()
    light = qapp.palette()
    assert not is_dark()
    assert "#eef0f4" in window.styleSheet()  # light assistant bubbles
    try:
        qapp.setPalette(dark_palette())
        QApplication.processEvents()
        assert is_dark()
        assert "#2b2f38" in window.styleSheet()  # dark assistant bubbles
    finally:
        qapp.setPalette(light)
        QApplication.processEvents()
    assert "#eef0f4" in window.styleSheet()
    window.close()
