"""Dialogs wrap: a 300-character title and a 200-character unbroken word
wrap inside the dialog, never cut and never wider than the screen."""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QLabel

from ui.dialogs.dialogs import breakable, build_delete_box, build_error_box

LONG_TITLE = " ".join(["Quarterly planning notes for the northern region"] * 6)[:300]
LONG_WORD = "x" * 200


def _labels(box: object) -> list[QLabel]:
    return [
        label
        for name in ("qt_msgbox_label", "qt_msgbox_informativelabel")
        if (label := box.findChild(QLabel, name)) is not None  # type: ignore[attr-defined]
    ]


def test_a_long_title_and_a_long_word_wrap_within_the_screen(qapp: QApplication) -> None:
    screen = QGuiApplication.primaryScreen().availableGeometry()
    for box in (
        build_delete_box(None, [LONG_TITLE + " " + LONG_WORD]),
        build_error_box(None, LONG_TITLE, f"{LONG_TITLE} {LONG_WORD}", f"Cause: {LONG_WORD}"),
    ):
        box.show()
        qapp.processEvents()
        assert box.width() <= screen.width()
        for label in _labels(box):
            assert label.wordWrap()
            assert label.width() <= 480  # the readable width of BOX_STYLE (plus a margin)
            # Wrapped at the label's width, every line fits: nothing is clipped at its edge.
            room = QRect(0, 0, label.width(), 100_000)
            flags = int(Qt.TextFlag.TextWordWrap)
            assert label.fontMetrics().boundingRect(room, flags, label.text()).width() <= (
                label.width()
            )
        box.close()
        box.deleteLater()


def test_breakable_leaves_words_alone_and_breaks_only_long_runs() -> None:
    assert breakable("Delete “Trip plans”?") == "Delete “Trip plans”?"
    broken = breakable(LONG_WORD)
    assert broken.replace("\u200b", "") == LONG_WORD
    assert max(len(part) for part in broken.split("\u200b")) <= 25
