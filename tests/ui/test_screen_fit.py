"""The window fits the screen at any scale factor: the first size, and a saved geometry
larger than the screen or off it, are clamped to the available geometry."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QRect
from PySide6.QtWidgets import QApplication

from app import window_state
from ui.window.main_window import MainWindow
from ui.window.screen_fit import DEFAULT_SIZE, fit, initial_size

ROOT = Path(__file__).resolve().parents[2]
SCREEN = QRect(0, 0, 960, 540)  # 1920×1080 at QT_SCALE_FACTOR=2

CHILD = """
import json, sys
from pathlib import Path
from PySide6.QtWidgets import QApplication
application = QApplication([])
from app import window_state
from ui.window.main_window import MainWindow
window = MainWindow()
profile = Path(sys.argv[1])
window_state.restore(window, window_state.read_state(profile))
window.show()
application.processEvents()
available = window.screen().availableGeometry()
frame = window.frameGeometry()
print(json.dumps({
    "ratio": window.devicePixelRatio(),
    "available": [available.x(), available.y(), available.width(), available.height()],
    "frame": [frame.x(), frame.y(), frame.width(), frame.height()],
    "fits": available.contains(frame),
}))
window.close()
"""


@pytest.mark.parametrize(
    ("frame", "expected"),
    [
        (QRect(100, 50, 1100, 720), QRect(0, 0, 960, 540)),  # larger than the screen
        (QRect(2500, 900, 800, 400), QRect(160, 140, 800, 400)),  # off its bottom right
        (QRect(-300, -40, 500, 300), QRect(0, 0, 500, 300)),  # off its top left
        (QRect(10, 20, 400, 300), QRect(10, 20, 400, 300)),  # already on it
    ],
)
def test_a_frame_is_shrunk_and_moved_onto_the_available_geometry(
    frame: QRect, expected: QRect
) -> None:
    assert fit(frame, SCREEN) == expected
    assert SCREEN.contains(fit(frame, SCREEN))


def test_the_first_size_leaves_room_on_a_small_screen() -> None:
    assert initial_size(QRect(0, 0, 3840, 2160)) == DEFAULT_SIZE
    size = initial_size(SCREEN)
    assert size.width() <= 960 and size.height() <= 540


def test_a_saved_geometry_larger_than_the_screen_is_clamped(
    qapp: QApplication, tmp_path: Path
) -> None:
    big = MainWindow()
    available = big.screen().availableGeometry()
    big.setGeometry(available.adjusted(-200, -100, 2000, 1500))  # as saved on a bigger screen
    window_state.write_state(tmp_path, window_state.capture(big))
    big.close()
    window = MainWindow()
    window_state.restore(window, window_state.read_state(tmp_path))
    window.show()
    QApplication.processEvents()
    assert available.contains(window.frameGeometry()), (window.frameGeometry(), available)
    window.close()


def _child(tmp_path: Path, scale: str, state: Path) -> dict[str, object]:
    config = tmp_path / "screens.json"
    screen = {"name": "laptop", "x": 0, "y": 0, "width": 1920, "height": 1080}
    config.write_text(json.dumps({"windowFrameMargins": True, "screens": [screen]}))
    env = dict(
        os.environ,
        QT_QPA_PLATFORM=f"offscreen:configfile={config}",
        QT_SCALE_FACTOR=scale,
        PYTHONPATH=str(ROOT),
    )
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(state)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    answer: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return answer


@pytest.mark.parametrize("scale", ["1.5", "2"])
def test_at_a_high_scale_factor_the_window_fits_its_screen(
    qapp: QApplication, tmp_path: Path, scale: str
) -> None:
    fresh = _child(tmp_path, scale, tmp_path / "no-profile")  # the first start
    assert fresh["ratio"] == float(scale)
    assert fresh["fits"], fresh
    # A geometry saved at scale 1 on this screen (1600×1000 there) opens at this scale.
    saved = tmp_path / "profile"
    saved.mkdir()
    window = MainWindow()
    window.setGeometry(QRect(200, 40, 1600, 1000))
    window_state.write_state(saved, window_state.capture(window))
    window.close()
    again = _child(tmp_path, scale, saved)
    assert again["fits"], again
