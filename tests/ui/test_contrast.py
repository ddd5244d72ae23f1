"""Every text colour holds WCAG AA contrast (4.5:1 body, 3:1 large) in light, dark and a dark
GTK theme, measured on what is painted: the sidebar delegate's secondary line and date
headers, the transcript delegate's colours, banners, the status line, the empty states and
placeholders (decision 0205)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from PySide6.QtCore import QRect, QSize
from PySide6.QtGui import QColor, QImage, QPainter, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QStyle, QStyleOptionViewItem

from tests.ui.conftest import row
from tests.ui.looks import LOOKS, look, pixel_contrast, widget_contrast
from ui.dialogs.settings import ConnectionSettings, SettingsDialog
from ui.sidebar.grouping import group_rows
from ui.sidebar.model import SessionListModel
from ui.theme.palette_text import BODY, FOREGROUNDS, LARGE, painted_colours
from ui.theme.style import ACCENT, contrast, is_dark
from ui.window.main_window import MainWindow

NOW = datetime(2026, 12, 2, 15, 0, tzinfo=UTC)
TODAY = "2026-12-02T09:00:00.000000Z"
EARLIER = "2026-11-02T09:00:00.000000Z"


def _window(qapp: QApplication) -> MainWindow:
    window = MainWindow()
    window.resize(900, 600)
    window.show()
    QApplication.processEvents()
    return window


def _paint_row(window: MainWindow, row_number: int, selected: bool) -> QImage:
    """One sidebar row painted by the window's own delegate on the list's base (or the
    accent, selected), as the list paints it."""
    index = window.model.index(row_number, 0)
    option = QStyleOptionViewItem()
    option.initFrom(window.list.viewport())
    option.palette = window.list.palette()
    option.font = window.list.font()
    size = window.delegate.sizeHint(option, index)
    option.rect = QRect(0, 0, 300, size.height())
    option.state |= QStyle.StateFlag.State_Enabled | QStyle.StateFlag.State_Active
    if selected:
        option.state |= QStyle.StateFlag.State_Selected
    image = QImage(QSize(300, size.height()), QImage.Format.Format_RGB32)
    base = window.list.palette().color(QPalette.ColorRole.Base)
    image.fill(QColor(ACCENT) if selected else base)
    painter = QPainter(image)
    try:
        window.delegate.paint(painter, option, index)
    finally:
        painter.end()
    return image


def _second_line(image: QImage) -> QImage:
    return image.copy(0, image.height() // 2, image.width(), image.height() // 2)


@pytest.mark.parametrize("name", LOOKS)
def test_sidebar_secondary_text_and_date_headers_are_readable(
    qapp: QApplication, name: str
) -> None:
    with look(qapp, name):
        window = _window(qapp)
        rows_in = [row("ses_1", "Today's", TODAY), row("ses_2", "Old", EARLIER)]
        window.model.replace_now(group_rows(rows_in, NOW))
        QApplication.processEvents()
        headers = [
            r
            for r in range(window.model.rowCount())
            if window.model.index(r, 0).data(SessionListModel.HeaderRole)
        ]
        rows = [r for r in range(window.model.rowCount()) if r not in headers]
        assert headers and rows
        palette = window.list.palette()
        for selected in (False, True):
            quiet = window.delegate.quiet_color(palette, selected)
            back = QColor(ACCENT) if selected else palette.color(QPalette.ColorRole.Base)
            assert contrast(quiet, back) >= BODY, (name, selected, quiet.name())
            painted = pixel_contrast(_second_line(_paint_row(window, rows[0], selected)))
            assert painted >= BODY, (name, selected, painted)
        header = pixel_contrast(_paint_row(window, headers[0], False))
        assert header >= BODY, (name, header)  # small and quiet, so held to body text
        window.close()


@pytest.mark.parametrize("name", LOOKS)
def test_transcript_colours_hold_body_contrast_on_their_surfaces(
    qapp: QApplication, name: str
) -> None:
    with look(qapp, name):
        window = _window(qapp)
        palette = window.pane.palette()
        delegate_dark = window.pane.transcript.delegate.dark
        assert delegate_dark == is_dark(palette) == (name != "light")
        c = painted_colours(palette, delegate_dark)  # what the delegate paints with
        base = palette.color(QPalette.ColorRole.Base)
        for key, surfaces in FOREGROUNDS.items():
            for surface in surfaces:
                back = base if surface == "base" else QColor(c[surface])
                ratio = contrast(QColor(c[key]), back)
                assert ratio >= BODY, (name, key, surface, round(ratio, 2))
        assert contrast(QColor("white"), QColor(ACCENT)) >= BODY  # the user's bubble
        window.close()


@pytest.mark.parametrize("name", LOOKS)
def test_banners_status_line_and_empty_states_are_readable(qapp: QApplication, name: str) -> None:
    with look(qapp, name):
        window = _window(qapp)
        window.set_offline(True)
        window.set_insecure_warning("The connection to example.com is not encrypted.")
        window.set_status("Synced just now.")
        window.set_placeholder("No conversations yet.")
        QApplication.processEvents()
        checks: dict[str, QLabel] = {
            "offline banner": window.offline_banner,
            "insecure banner": window.insecure_banner,
            "status line": window.status,
            "sidebar placeholder": window.sidebar_empty,
        }
        for label in window.pane.findChildren(QLabel):
            if label.objectName() in ("emptyState", "paneSubtitle") and label.isVisible():
                checks[label.objectName()] = label
        assert "emptyState" in checks and "paneSubtitle" in checks
        for what, label in checks.items():
            assert label.isVisible(), what
            ratio = widget_contrast(label)
            assert ratio >= BODY, (name, what, round(ratio, 2))
        title = window.pane.title
        assert widget_contrast(title) >= LARGE
        window.close()


@pytest.mark.parametrize("name", LOOKS)
def test_placeholders_are_readable(qapp: QApplication, name: str) -> None:
    with look(qapp, name):
        window = _window(qapp)
        for editor in (window.filter, window.pane.composer):
            palette = editor.palette()
            placeholder = palette.color(QPalette.ColorRole.PlaceholderText)
            base = palette.color(QPalette.ColorRole.Base)
            assert contrast(placeholder, base) >= BODY, (name, editor.objectName())
        window.filter.clear()
        window.filter.clearFocus()
        QApplication.processEvents()
        assert widget_contrast(window.filter) >= BODY
        window.close()


@pytest.mark.parametrize("name", LOOKS)
def test_the_settings_dialogs_quiet_notes_are_readable(qapp: QApplication, name: str) -> None:
    with look(qapp, name):
        window = _window(qapp)
        dialog = SettingsDialog(window, ConnectionSettings("", ""), "x")
        dialog.show()
        QApplication.processEvents()
        notes = [label for label in dialog.findChildren(QLabel) if not label.isEnabled()]
        assert notes
        for label in notes:
            if label.isVisible() and label.text():
                ratio = widget_contrast(label)
                assert ratio >= BODY, (name, label.text(), round(ratio, 2))
        dialog.close()
        dialog.deleteLater()
        window.close()
