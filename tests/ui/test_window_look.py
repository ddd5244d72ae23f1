"""The window's 2026 look: tinted Lucide icons on the toolbar and in the row menu, slim
scrollbars still usable by mouse, Ctrl+Q, the shortcuts list, and a title naming the
account and profile once."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QSize, Qt
from PySide6.QtGui import QColor, QIcon, QImage, QKeySequence
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMainWindow, QToolButton

from tests.ui.conftest import row
from tests.ui.looks import look
from ui.dialogs.shortcuts import ShortcutsDialog
from ui.theme import icons
from ui.theme.stylesheet import SCROLLBAR_WIDTH
from ui.window.main_window import MainWindow
from ui.window.status_line import StatusLine

ROOT = Path(__file__).resolve().parents[2]


def _strongest(icon: QIcon, mode: QIcon.Mode, ratio: float = 1.0) -> QColor:
    """The most opaque pixel of the icon at 18 px (its stroke's colour)."""
    pixmap = icon.pixmap(QSize(18, 18), ratio, mode)
    image = pixmap.toImage().convertToFormat(QImage.Format.Format_ARGB32)
    best = QColor(0, 0, 0, 0)
    for y in range(image.height()):
        for x in range(image.width()):
            color = image.pixelColor(x, y)
            if color.alpha() > best.alpha():
                best = color
    return best


def _close(a: QColor, b: QColor) -> bool:
    return max(abs(a.red() - b.red()), abs(a.green() - b.green()), abs(a.blue() - b.blue())) <= 8


def test_every_bundled_icon_is_lucides_with_its_licence() -> None:
    svgs = sorted(icons.ICON_DIR.glob("*.svg"))
    assert svgs and (icons.ICON_DIR / "LICENSE").read_text().startswith("ISC License")
    for svg in svgs:
        text = svg.read_text(encoding="utf-8")
        assert "@license lucide-static" in text and 'stroke="currentColor"' in text
    spec = (ROOT / "packaging" / "converge.spec").read_text(encoding="utf-8")
    assert '"ui" / "icons" / "lucide"' in spec  # the bundle carries them


def test_toolbar_icons_follow_the_palette_normal_and_disabled(qapp: QApplication) -> None:
    for name in ("light", "dark"):
        with look(qapp, name):
            window = MainWindow()
            window.show()
            QApplication.processEvents()
            normal, disabled = icons.icon_colors(window.palette())
            for action in (window.new_action, window.refresh_action, window.settings_action):
                assert _close(_strongest(action.icon(), QIcon.Mode.Normal), normal), name
            assert not window.delete_action.isEnabled()  # nothing selected
            trash = _strongest(window.delete_action.icon(), QIcon.Mode.Disabled)
            assert _close(trash, disabled), (name, trash.name(), disabled.name())
            # Sharp on a 2x screen: a pixmap drawn for it, not one scaled up.
            hi = window.new_action.icon().pixmap(QSize(18, 18), 2.0)
            assert hi.width() == 36 and hi.devicePixelRatio() == 2.0
            window.close()


def test_toolbar_buttons_show_icon_and_text_and_keep_the_focus_ring(qapp: QApplication) -> None:
    window = MainWindow()
    window.show()
    QApplication.processEvents()
    new, _refresh, _delete, _settings, shortcuts = window.toolbar_buttons()
    assert isinstance(new, QToolButton) and isinstance(shortcuts, QToolButton)
    assert new.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonTextBesideIcon
    assert not new.icon().isNull() and new.text() == "New Conversation"
    assert shortcuts.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonIconOnly
    assert shortcuts.toolTip() and shortcuts.accessibleName() == "Keyboard Shortcuts"
    assert "#toolbar QToolButton:focus" in window.styleSheet()
    window.close()


def test_the_row_menu_shows_icons(qapp: QApplication) -> None:
    window = MainWindow()
    window.show()
    window.model.replace_now([row("ses_1", "One")])
    QApplication.processEvents()
    menu = window.row_menu(window.model.index(0, 0))
    shown = [a for a in menu.actions() if not a.isSeparator()]
    assert [a.text() for a in shown] == ["Export…", "Copy ID", "Delete"]
    assert all(not a.icon().isNull() and a.isIconVisibleInMenu() for a in shown)
    menu.close()
    window.close()


def test_scrollbars_are_slim_and_a_click_in_the_groove_scrolls(qapp: QApplication) -> None:
    window = MainWindow()
    window.resize(900, 500)
    window.show()
    window.model.replace_now([row(f"ses_{i:03}", f"Conversation {i}") for i in range(200)])
    QApplication.processEvents()
    bar = window.list.verticalScrollBar()
    assert bar.isVisible() and bar.width() <= SCROLLBAR_WIDTH
    assert window.pane.transcript.verticalScrollBar().sizeHint().width() <= SCROLLBAR_WIDTH
    assert bar.value() == 0
    QTest.mouseClick(bar, Qt.MouseButton.LeftButton, pos=QPoint(bar.width() // 2, bar.height() - 4))
    assert bar.value() > 0  # no arrow buttons, but the groove pages down
    window.close()


def test_ctrl_q_closes_the_window_as_its_close_button_does(qapp: QApplication) -> None:
    window = MainWindow()
    window.show()
    window.activateWindow()
    QApplication.processEvents()
    closed: list[bool] = []
    window.closed.connect(lambda: closed.append(True))
    assert any(
        key.matches(QKeySequence("Ctrl+Q")) == QKeySequence.SequenceMatch.ExactMatch
        for key in window.quit_action.shortcuts()
    )
    QTest.keySequence(window.filter, QKeySequence("Ctrl+Q"))
    assert closed == [True] and not window.isVisible()


def test_f1_and_ctrl_slash_list_every_shortcut_of_the_windows_actions(
    qapp: QApplication,
) -> None:
    window = MainWindow()
    window.show()
    window.activateWindow()
    QApplication.processEvents()
    for keys in ("F1", "Ctrl+/"):
        QTest.keySequence(window.filter, QKeySequence(keys))
        dialog = window.shortcuts_dialog
        assert isinstance(dialog, ShortcutsDialog) and dialog.isVisible(), keys
        shown = dict(dialog.rows())
        dialog.close()
    # Drawn from the actions: every action with a shortcut is there with its keys.
    assert shown["Quit"].startswith("Ctrl+Q") or "Ctrl+Q" in shown["Quit"]
    assert shown["Keyboard Shortcuts"] == "F1, Ctrl+/"
    assert shown["Refresh"] == "F5, Ctrl+R"
    assert {"New Conversation", "Delete", "Search", "Settings"} <= shown.keys()
    extra = window.addAction("Frobnicate")
    extra.setShortcut(QKeySequence("Ctrl+Shift+F"))
    assert dict(window.show_shortcuts().rows())["Frobnicate"] == "Ctrl+Shift+F"
    window.shortcuts_dialog.close()
    window.close()


def test_the_title_names_the_app_once_and_each_profile(qapp: QApplication) -> None:
    titles = []
    for profile in ("/home/me/.local/share/converge/work", "/home/me/laptop"):
        window = QMainWindow()
        StatusLine(window).set_where("alice", "example.com", profile)
        titles.append(window.windowTitle())
        window.close()
    assert titles[0] != titles[1]
    for title in titles:
        assert title.count("Converge") == 1, title
        assert "alice" in title and "example.com" in title
    assert "work" in titles[0] and "laptop" in titles[1]
    # Qt appends an application display name to every title: none is set.
    assert QApplication.applicationDisplayName() == QApplication.applicationName()


def test_an_icon_is_rendered_when_drawn_at_its_size_not_at_every_size_up_front(
    qapp: QApplication, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Building the window parses no icon's SVG (rendering every size and ratio up front was
    the longest part of building it, before its first paint); showing it parses each toolbar
    icon once per colour shown, and drawing again reuses what was drawn."""
    parsed: list[object] = []

    class CountingRenderer(QSvgRenderer):
        def __init__(self, *args: object) -> None:
            super().__init__(*args)  # type: ignore[call-overload]
            parsed.append(self)

    monkeypatch.setattr(icons, "QSvgRenderer", CountingRenderer)
    window = MainWindow()
    assert parsed == []
    window.show()
    QApplication.processEvents()
    shown = len(parsed)
    assert 0 < shown <= 2 * len(window.toolbar_buttons())
    window.update()
    QApplication.processEvents()
    assert len(parsed) == shown
    window.close()
