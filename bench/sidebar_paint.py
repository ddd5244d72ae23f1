"""The sidebar's paint and layout in a window of `n` rows, before any asyncio loop runs (so
processing Qt's events here re-enters nothing): the repaint of the visible rows, and how long
the list shows no row after one insert (`QListView` lays every row out again, and paints none
until it is done: decision 0218)."""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PySide6.QtWidgets import QApplication

    from ui.window.main_window import MainWindow


def _ts(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _window(n: int) -> tuple[QApplication, MainWindow]:
    """A shown window whose sidebar holds `n` rows, laid out."""
    from PySide6.QtWidgets import QApplication

    from sync.wire.models import SessionView
    from ui.window.main_window import MainWindow

    app = QApplication.instance() or QApplication([sys.argv[0]])
    assert isinstance(app, QApplication)
    window = MainWindow()
    window.resize(1200, 800)
    window.show()
    base = datetime(2026, 1, 1, tzinfo=UTC)
    rows = [
        SessionView(f"ses_paint{i:08d}", f"Conversation {i}", at, at, None, None)
        for i in range(n - 1, -1, -1)
        for at in (_ts(base + timedelta(seconds=i)),)
    ]
    window.model.replace_now(rows)
    window.list.executeDelayedItemsLayout()
    for _ in range(n // 100 + 100):  # the batched layout's passes
        app.processEvents()
    return app, window


def bench_repaint(n: int, samples: int = 30) -> dict[str, Any]:
    """UI-thread CPU time of one repaint of the sidebar's visible rows (median), in a window
    of `n` rows whose layout has finished, before any asyncio loop runs (so processing Qt's
    events here re-enters nothing): what scrolling pays per frame, and a pass whenever rows
    land above the ones shown. Measured after the layout, because `QListView` paints no
    row while a batched layout is under way."""
    app, window = _window(n)
    times = []
    for _ in range(samples):
        window.list.viewport().update()
        started = time.thread_time()
        app.processEvents()
        times.append(time.thread_time() - started)
    visible = window.list.indexAt(window.list.viewport().rect().bottomLeft()).row() + 1
    window.close()
    return {"repaint_ms": round(sorted(times)[samples // 2] * 1000, 2), "rows_shown": visible}


def bench_blank_after_insert(n: int, inserts: int = 5) -> dict[str, Any]:
    """After one row is inserted at the top of `n`: the wall time until a row is shown
    again, and the longest UI-thread turn of the layout in between (worst of `inserts`)."""
    from PySide6.QtCore import QPoint

    from sync.wire.models import SessionView

    app, window = _window(n)
    top = QPoint(1, 1)
    blank = worst = 0.0
    for k in range(inserts):
        at = _ts(datetime(2027, 1, 1, tzinfo=UTC) + timedelta(seconds=k))
        row = SessionView(f"ses_insert{k:04d}", f"Inserted {k}", at, at, None, None)
        window.model.insert_row(0, row)
        started = time.perf_counter()
        while not window.list.indexAt(top).isValid():
            turn = time.thread_time()
            app.processEvents()
            worst = max(worst, time.thread_time() - turn)
        blank = max(blank, time.perf_counter() - started)
    window.close()
    return {"rows": n, "blank_ms": round(blank * 1000, 1), "worst_turn_ms": round(worst * 1000, 2)}
