"""The first-paint benchmark's floor: the least a Qt list can do to show the same mirror.

`python -m bench.bare_list_child MIRROR SPAWNED ROWS` is a process that imports only the
standard library's `sqlite3` and PySide6's widgets, reads the titles the sidebar shows (every
row, in the sidebar's order) from MIRROR read-only, puts them in a `QStringListModel` behind a
`QListView` and shows it. It prints one JSON line in the same terms as
`bench/first_paint_child.py`, so that `python -m bench ui` can run the two interleaved and
compare them start by start:

- `imports_s`: interpreter start and the imports; `first_paint_s`: the list's viewport gets
  its first paint event with rows; `first_paint_cpu_s`: the process's CPU time then;
- `rss_mb` then, with all ROWS rows held.

No model of our own, no delegate, no translation, no asyncio loop: what is left is the
interpreter, Qt and SQLite, the part of a start Converge cannot cut.
"""

from __future__ import annotations

import json
import os
import sys
import time


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return round(pages * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)


def main(argv: list[str]) -> int:
    mirror, spawned, rows = argv[0], float(argv[1]), int(argv[2])
    import sqlite3

    from PySide6.QtCore import QEvent, QObject, QStringListModel, QTimer
    from PySide6.QtWidgets import QApplication, QListView

    imported = time.time()
    imported_cpu = time.process_time()
    app = QApplication([sys.argv[0]])
    conn = sqlite3.connect(f"file:{mirror}?mode=ro", uri=True)
    try:
        cursor = conn.execute("SELECT title FROM sessions ORDER BY updated_at DESC, id DESC")
        titles = [title or "Untitled conversation" for (title,) in cursor]
    finally:
        conn.close()
    model = QStringListModel(titles)
    view = QListView()
    view.setUniformItemSizes(True)
    view.setModel(model)
    marks: dict[str, float] = {}

    class Probe(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint and "painted" not in marks and model.rowCount():
                marks["painted"] = time.time()
                marks["painted_cpu"] = time.process_time()
                QTimer.singleShot(0, app.quit)
            return False

    probe = Probe()
    view.viewport().installEventFilter(probe)
    view.resize(1000, 700)
    view.show()
    app.exec()
    if "painted" not in marks or model.rowCount() != rows:
        print(f"no paint of {rows} rows: {model.rowCount()}", file=sys.stderr)
        return 1
    figures = {
        "imports_s": round(imported - spawned, 3),
        "imports_cpu_s": round(imported_cpu, 3),
        "first_paint_s": round(marks["painted"] - spawned, 3),
        "first_paint_cpu_s": round(marks["painted_cpu"], 3),
        "rss_mb": _rss_mb(),
        "rows": rows,
    }
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
