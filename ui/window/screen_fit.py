"""The window fits its screen at any scale factor: the first size, a restored geometry saved
on another screen or at another scale, and the frame once the window manager has drawn it
are all kept inside the screen's available geometry (panels and docks excluded).

At `QT_SCALE_FACTOR=2` a 1920×1080 screen is 960×540 device-independent pixels: a fixed
size bigger than that would put the composer and the status bar off the bottom edge.
"""

from __future__ import annotations

from PySide6.QtCore import QMargins, QPoint, QRect, QSize
from PySide6.QtGui import QGuiApplication, QScreen
from PySide6.QtWidgets import QWidget

DEFAULT_SIZE = QSize(1100, 720)
SHARE = 0.9  # of the available geometry, at most, for the first size


def fit(frame: QRect, available: QRect) -> QRect:
    """`frame` shrunk to fit `available` and moved onto it, as little as needed."""
    width = min(frame.width(), available.width())
    height = min(frame.height(), available.height())
    left = min(max(frame.left(), available.left()), available.right() + 1 - width)
    top = min(max(frame.top(), available.top()), available.bottom() + 1 - height)
    return QRect(left, top, width, height)


def initial_size(available: QRect) -> QSize:
    """The first size: the default, or less on a small (or much scaled) screen."""
    return DEFAULT_SIZE.boundedTo(
        QSize(int(available.width() * SHARE), int(available.height() * SHARE))
    )


def screen_of(widget: QWidget) -> QScreen | None:
    """The screen under the widget's centre, else its own, else the primary one."""
    centre = widget.frameGeometry().center()
    return QGuiApplication.screenAt(centre) or widget.screen() or QGuiApplication.primaryScreen()


def frame_margins(widget: QWidget) -> QMargins:
    frame, inner = widget.frameGeometry(), widget.geometry()
    return QMargins(
        inner.left() - frame.left(),
        inner.top() - frame.top(),
        frame.right() - inner.right(),
        frame.bottom() - inner.bottom(),
    )


def fit_to_screen(widget: QWidget) -> bool:
    """Resize and move `widget` so that its frame lies within its screen's available
    geometry; True when it had to change."""
    screen = screen_of(widget)
    if screen is None or widget.isMaximized() or widget.isFullScreen():
        return False
    margins = frame_margins(widget)
    frame = widget.frameGeometry()
    fitted = fit(frame, screen.availableGeometry())
    if fitted == frame:
        return False
    inner = fitted.marginsRemoved(margins)
    widget.resize(inner.size().expandedTo(QSize(1, 1)))
    widget.move(QPoint(fitted.left(), fitted.top()))
    return True
