"""Visible keyboard focus everywhere, and the toolbar in the Tab order.

Each widget a keyboard user reaches draws its focus ring: the test grabs it with and
without the focus and counts the ring colour's pixels (`ui.theme.style.focus_ring`, a 2 px ring
whose colour has 3:1 against the surfaces it sits on, light and dark).
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPalette
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QPushButton, QWidget

from app.loop import ConvergeEventLoop
from tests.ui.conftest import row
from ui.dialogs.dialogs import build_error_box
from ui.theme.style import (
    ACCENT,
    FOCUS_CONTRAST,
    contrast,
    dark_palette,
    focus_ring,
    row_focus_ring,
)
from ui.window.main_window import MainWindow


def _window() -> MainWindow:
    window = MainWindow()
    window.show()
    window.model.replace_now([row(f"ses_{i}", f"Conversation {i}") for i in range(3)])
    window.select_session("ses_1")
    QApplication.processEvents()
    return window


def _count(image: QImage, color: QColor, area: QRect | None = None) -> int:
    """Pixels of exactly `color` in `area` of `image` (device pixels)."""
    area = area or image.rect()
    want = color.rgb()
    return sum(
        1
        for y in range(area.top(), area.bottom() + 1)
        for x in range(area.left(), area.right() + 1)
        if image.pixel(x, y) == want
    )


def _ring_pixels(widget: QWidget, focused: bool, color: QColor, area: QRect | None = None) -> int:
    if focused:
        widget.setFocus(Qt.FocusReason.TabFocusReason)
    else:
        widget.clearFocus()
    QApplication.processEvents()
    assert widget.hasFocus() == focused
    return _count(widget.grab().toImage(), color, area)


def _walk(window: MainWindow, start: QWidget, steps: int) -> list[QWidget]:
    start.setFocus(Qt.FocusReason.TabFocusReason)
    seen = []
    for _ in range(steps):
        widget = QApplication.focusWidget()
        assert widget is not None
        seen.append(widget)
        QTest.keyClick(widget, Qt.Key.Key_Tab)
        QApplication.processEvents()
    return seen


def test_tab_walks_toolbar_search_list_pane_buttons_composer_and_send(
    loop: ConvergeEventLoop,
) -> None:
    window = _window()
    # A button the pane shows for a conversation (an approval's, an artifact's), added
    # later, as the pane adds them.
    pane_button = QPushButton("Allow", window.pane)
    pane_button.show()
    QApplication.processEvents()
    new, refresh, delete, settings, shortcuts = window.toolbar_buttons()
    order = [new, refresh, delete, settings, shortcuts, window.filter, window.list, pane_button]
    tail = [window.pane.composer, window.pane.send_button]
    seen = _walk(window, new, 15)
    names = [w.accessibleName() or w.objectName() or type(w).__name__ for w in seen]
    assert seen[: len(order)] == order, names
    rest = seen[len(order) :]
    assert window.pane.composer in rest, names
    at = rest.index(window.pane.composer)
    assert rest[at : at + 2] == tail, names  # the transcript may come before the composer
    assert new in rest[at + 2 :], names  # and round again to the toolbar
    # Shift+Tab goes back the same way.
    window.filter.setFocus(Qt.FocusReason.TabFocusReason)
    QTest.keyClick(window.filter, Qt.Key.Key_Backtab)
    assert QApplication.focusWidget() is shortcuts
    window.close()


@pytest.mark.parametrize("which", ["toolbar", "search", "composer", "send", "pane button"])
def test_each_focused_widget_draws_its_focus_ring(loop: ConvergeEventLoop, which: str) -> None:
    window = _window()
    pane_button = QPushButton("Allow", window.pane)
    pane_button.show()
    widget = {
        "toolbar": window.toolbar_buttons()[0],
        "search": window.filter,
        "composer": window.pane.composer,
        "send": window.pane.send_button,
        "pane button": pane_button,
    }[which]
    ring = focus_ring(QGuiApplication.palette())
    without = _ring_pixels(widget, False, ring)
    with_ring = _ring_pixels(widget, True, ring)
    size = widget.grab().toImage().size()
    perimeter = 2 * (size.width() + size.height())
    assert with_ring - without >= perimeter, (which, without, with_ring, perimeter)
    window.close()


def test_the_sidebar_current_row_draws_its_ring_while_the_list_has_focus(
    loop: ConvergeEventLoop,
) -> None:
    window = _window()
    index = window.model.index_of("ses_1")
    rect = window.list.visualRect(index)
    ring = row_focus_ring(QGuiApplication.palette(), selected=True)
    # In the viewport's grab; the list grabs the same pixels offset by its frame.
    viewport = window.list.viewport()
    window.list.clearFocus()
    QApplication.processEvents()
    without = _count(viewport.grab().toImage(), ring, rect)
    window.list.setFocus(Qt.FocusReason.TabFocusReason)
    QApplication.processEvents()
    assert window.current_id() == "ses_1"
    with_ring = _count(viewport.grab().toImage(), ring, rect)
    perimeter = 2 * (rect.width() + rect.height())
    assert with_ring - without >= perimeter * 0.8, (without, with_ring, perimeter)
    window.close()


def test_dialog_buttons_draw_the_focus_ring(loop: ConvergeEventLoop) -> None:
    window = _window()
    box = build_error_box(window, "Could not send", "The server refused the message.")
    box.open()
    QApplication.processEvents()
    button = box.buttons()[0]
    ring = focus_ring(QGuiApplication.palette())
    without = _ring_pixels(button, False, ring)
    with_ring = _ring_pixels(button, True, ring)
    size = button.grab().toImage().size()
    assert with_ring - without >= 2 * (size.width() + size.height())
    box.done(0)
    window.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_ring_colour_has_three_to_one_against_what_it_sits_on(scheme: str) -> None:
    palette = QPalette() if scheme == "light" else dark_palette()
    roles = QPalette.ColorRole
    ring = focus_ring(palette)
    for role in (roles.Window, roles.Base, roles.Button):
        assert contrast(ring, palette.color(role)) >= FOCUS_CONTRAST, role
    on_selected = row_focus_ring(palette, selected=True)
    assert contrast(on_selected, QColor(ACCENT)) >= FOCUS_CONTRAST
    on_row = row_focus_ring(palette, selected=False)
    assert contrast(on_row, palette.color(roles.Base)) >= FOCUS_CONTRAST


def test_a_faint_highlight_falls_back_to_a_colour_with_enough_contrast() -> None:
    palette = QPalette()
    palette.setColor(QPalette.ColorRole.Highlight, QColor("#d8e6f5"))  # pale blue on white
    palette.setColor(QPalette.ColorRole.Window, QColor("#ffffff"))
    ring = focus_ring(palette)
    assert ring != QColor("#d8e6f5")
    assert contrast(ring, QColor("#ffffff")) >= FOCUS_CONTRAST


@pytest.mark.parametrize("moved", [False, True])
def test_a_pane_built_after_the_first_paint_takes_the_focus_a_whole_window_gave_it(
    loop: ConvergeEventLoop, moved: bool
) -> None:
    """Shown whole, the window gives its focus to the composer (its first widget that takes
    one). Shown before its pane (the start, `app.desktop`), it gave it to the toolbar's first
    button: the pane takes it once built, unless the user moved it meanwhile."""
    whole = MainWindow()
    whole.show()
    QApplication.processEvents()
    assert whole.focusWidget() is whole.pane.composer
    window = MainWindow(pane=False)
    window.show()
    QApplication.processEvents()
    if moved:
        window.filter.setFocus(Qt.FocusReason.MouseFocusReason)
    window.add_pane()
    QApplication.processEvents()
    assert window.focusWidget() is (window.filter if moved else window.pane.composer)
    whole.close()
    window.close()
