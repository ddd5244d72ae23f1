"""Arabic mirrors the whole window, the custom-painted rows too: your messages sit on the
end side (left in Arabic, right otherwise), the "● Running" badge follows the time from
the start side, and a row's title sits on the start side."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QApplication, QStyleOptionViewItem

from ui.pane.transcript_delegate import TranscriptDelegate
from ui.pane.transcript_model import Kind, TranscriptItem
from ui.sidebar.delegate import SessionDelegate, more_rect


@pytest.fixture
def right_to_left(qapp: QApplication) -> Iterator[None]:
    qapp.setLayoutDirection(Qt.LayoutDirection.RightToLeft)
    try:
        yield
    finally:
        qapp.setLayoutDirection(Qt.LayoutDirection.LeftToRight)


def _user_box() -> QRect:
    delegate = TranscriptDelegate()
    delegate.set_width(800)
    left, width = delegate.column()
    box = delegate.frame(TranscriptItem(Kind.USER, "hi"), QRect(0, 0, 800, 60), 100).box
    assert left <= box.left() and box.right() <= left + width
    return box


def test_your_messages_sit_on_the_right_left_to_right(qapp: QApplication) -> None:
    delegate = TranscriptDelegate()
    delegate.set_width(800)
    left, width = delegate.column()
    assert _user_box().right() == left + width - 1


def test_your_messages_sit_on_the_left_in_arabic(right_to_left: None) -> None:
    delegate = TranscriptDelegate()
    delegate.set_width(800)
    left, _width = delegate.column()
    assert _user_box().left() == left


def _badge(direction: Qt.LayoutDirection) -> list[tuple[str, QRect]]:
    option = QStyleOptionViewItem()
    option.direction = direction
    line = QRect(10, 30, 300, 16)
    return SessionDelegate().badge_rects(option, line, "2 min ago")


def test_the_running_badge_is_mirrored_under_right_to_left(qapp: QApplication) -> None:
    line = QRect(10, 30, 300, 16)
    ltr = dict(_badge(Qt.LayoutDirection.LeftToRight))
    rtl = dict(_badge(Qt.LayoutDirection.RightToLeft))
    assert ltr.keys() == rtl.keys()
    for part, box in ltr.items():
        mirrored = rtl[part]
        assert mirrored.size() == box.size()
        # The same distance from the other edge of the line.
        assert mirrored.left() - line.left() == line.right() - box.right()
    assert ltr["dot"].left() > line.left() + 20  # after the time, not over it
    assert rtl["dot"].right() < line.right() - 20


def test_the_rows_more_button_sits_on_the_end_side(qapp: QApplication) -> None:
    row = QRect(0, 0, 300, 44)
    assert more_rect(row).right() > 250
    qapp.setLayoutDirection(Qt.LayoutDirection.RightToLeft)
    try:
        mirrored = more_rect(row)
    finally:
        qapp.setLayoutDirection(Qt.LayoutDirection.LeftToRight)
    assert mirrored.left() < 50
    assert mirrored.size() == more_rect(row).size()
