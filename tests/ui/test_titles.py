"""Long, cut and right-to-left titles: elided, never widening the window, never cut
mid-word without an ellipsis."""

from __future__ import annotations

from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QApplication, QLabel

from app.loop import ConvergeEventLoop
from tests.ui.conftest import row
from ui.dialogs.dialogs import build_delete_box
from ui.sidebar.model import SessionListModel, shown_title
from ui.text.plain import plain_tooltip
from ui.window.elided_label import ElidedLabel, is_rtl
from ui.window.main_window import MainWindow

LONG = (
    "Rewrite the README introduction to be friendlier to first-time contributors, "
    "with the two commands first and the architecture after them"
)
# What the server stores for it: the first 64 code points, no ellipsis (CONTRACT).
CUT = LONG[:64]


def test_a_long_title_does_not_widen_the_window(loop: ConvergeEventLoop) -> None:
    window = MainWindow()
    window.resize(690, 600)
    window.show()
    before = window.minimumSizeHint().width()
    window.pane.show_session("ses_long", LONG, "2026-11-30T05:00:00.000000Z")
    QApplication.processEvents()
    assert window.minimumSizeHint().width() <= max(before, 690)
    assert window.width() == 690
    title = window.pane.title
    assert isinstance(title, ElidedLabel)
    shown = title.elided_text()
    assert shown.endswith("…") and len(shown) < len(LONG)
    assert title.toolTip() == plain_tooltip(LONG)  # the whole title stays one hover away
    window.close()


def test_a_title_cut_by_the_server_ends_with_an_ellipsis_at_a_word(qapp: object) -> None:
    assert CUT.endswith("first-time c")  # mid-word, as the server stores it
    shown = shown_title(CUT)
    assert shown == "Rewrite the README introduction to be friendlier to first-time…"
    model = SessionListModel()
    model.replace_now([row("ses_1", CUT), row("ses_2", "Short title")])
    assert model.index(0, 0).data() == shown
    assert model.index(1, 0).data() == "Short title"


def test_right_to_left_titles_elide_at_their_start(qapp: object) -> None:
    hebrew = "שכתוב ההקדמה של המסמך כדי שתהיה ידידותית יותר לתורמים חדשים ולמתחילים"
    assert is_rtl(hebrew) and not is_rtl(LONG) and is_rtl("«مرحبا» world")
    label = ElidedLabel(hebrew)
    label.resize(120, 30)
    shown = label.elided_text()
    # The title's beginning stays (drawn on the right); its logical end becomes "…".
    assert shown.endswith("…") and hebrew.startswith(shown[:-1])
    assert label.right_to_left()


def test_the_delete_headline_wraps_and_fits_its_label(qapp: object) -> None:
    box = build_delete_box(None, [LONG])
    box.show()
    QApplication.processEvents()
    label = box.findChild(QLabel, "qt_msgbox_label")
    assert label is not None and label.wordWrap()
    metrics = QFontMetrics(label.font())
    needed = metrics.boundingRect(
        label.contentsRect(), int(label.alignment()) | 0x1000, label.text()
    )  # 0x1000: Qt.TextWordWrap
    assert needed.height() <= label.contentsRect().height()
    assert needed.width() <= label.contentsRect().width()
    box.close()
