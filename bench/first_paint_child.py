"""The first-paint benchmark's child process: `converge` itself, watched from outside.

`python -m bench.first_paint_child PROFILE SPAWNED ROWS` runs what `converge` with no
subcommand runs (`app.main.main` → `app.desktop.run`) against PROFILE's mirror and an
unreachable server, and prints one JSON line of seconds since SPAWNED (the parent's
`time.time()` just before it started this process):

- `imports_s`: interpreter start and `import app.desktop` (the first thing `app.main` does);
- `first_paint_s`: the sidebar's viewport gets its first paint event with rows;
- `all_rows_s`: the sidebar holds ROWS rows; `engine_s`: the engine is attached;
- `rss_mb` then, and `heavy_at_paint`: which of `HEAVY` were loaded at the first paint
  (the start-up path promises none); `modules_at_paint`: how many modules were;
- `first_paint_cpu_s`, `rss_paint_mb`: the process's CPU time and RSS at the first paint;
  `rss_idle_mb`: its RSS `IDLE_S` after the engine was attached and the sidebar heard that
  the index changed, as after a first pass that changed it; `lexer_modules_at_idle`: how
  many of Pygments' lexer modules were loaded then (the code lexers wait for the first
  conversation opened).

Only the standard library is imported before the start-up path, so the clock measures that
path and nothing of the benchmark's own. The probe is a subclass of `Desktop` that installs an
event filter on the sidebar once the window exists; it changes nothing of the start-up.
"""

from __future__ import annotations

import json
import sys
import time

#: What the start-up path defers past the first paint: the engine's libraries, the
#: Markdown renderer's (markdown-it, Pygments), `regex` (search and the terminal's escaping
#: compile their patterns on first use), and the parts of the window the first paint does
#: not show or use (the conversation pane, the dialogs, the controller, and the engine's
#: modules they import: its events, the transcript's payloads, the mirror's writer).
HEAVY = (
    "sqlalchemy",
    "httpx",
    "markdown_it",
    "pygments",
    "regex",
    "ui.pane.pane",
    "ui.dialogs.dialogs",
    "ui.dialogs.settings",
    "ui.window.controller",
    "ui.text.rich_text",
    "sync.events",
    "sync.mirror.store",
    "sync.files.export",
)
#: The unreachable server (the discard port): start-up paints from the mirror, then goes
#: offline.
UNREACHABLE = "http://127.0.0.1:9"
#: The account's token: PROFILE's mirror is this account's (or the profile's top-level one,
#: which the first account opened adopts).
TOKEN = "bench"
#: A child that never sees its rows gives up rather than hang its parent: after this long, or
#: a second per `GIVE_UP_ROWS` rows if that is longer.
GIVE_UP_S = 60.0
GIVE_UP_ROWS = 5_000
#: How long the attached engine idles before the last RSS reading (it goes offline and the
#: sidebar follows an index change meanwhile).
IDLE_S = 1.5


def rss_mb() -> float:
    """This process's resident set (`/proc/self/statm`: no library to import)."""
    import os

    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return round(pages * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)


def main(argv: list[str]) -> int:
    profile, spawned, rows = argv[0], float(argv[1]), int(argv[2])
    import app.desktop

    imported = time.time()
    imported_cpu = time.process_time()
    marks: dict[str, float] = {}
    seen: dict[str, object] = {}

    from PySide6.QtCore import QEvent, QObject, QTimer

    class Probe(QObject):
        def __init__(self, desktop: app.desktop.Desktop) -> None:
            super().__init__(desktop.window)
            self.desktop = desktop
            desktop.window.list.viewport().installEventFilter(self)
            self.timer = QTimer(self)
            self.timer.setInterval(5)
            self.timer.timeout.connect(self.poll)
            self.timer.start()

        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            model = self.desktop.window.model
            if event.type() == QEvent.Type.Paint and "painted" not in marks and model.rowCount():
                marks["painted"] = time.time()
                seen["first_paint_cpu_s"] = round(time.process_time(), 3)
                seen["rss_paint_mb"] = rss_mb()
                seen["heavy_at_paint"] = sorted(m for m in HEAVY if m in sys.modules)
                seen["modules_at_paint"] = len(sys.modules)
            return False

        def poll(self) -> None:
            window = self.desktop.window
            if time.time() - spawned > max(GIVE_UP_S, rows / GIVE_UP_ROWS):
                self.timer.stop()
                window.close()
                return
            if "all_rows" not in marks and window.model.rowCount() >= rows:
                marks["all_rows"] = time.time()
            if "all_rows" in marks and self.desktop.engine is not None and "engine" not in marks:
                marks["engine"] = time.time()
                seen["rss_mb"] = rss_mb()
                # What a first pass that changed the index tells the sidebar (the server
                # here is unreachable, so no pass does): the list follows the mirror.
                from sync import IndexChanged

                self.desktop.controller.sidebar.index_changed(IndexChanged())
            if "engine" in marks and time.time() - marks["engine"] >= IDLE_S:
                seen["rss_idle_mb"] = rss_mb()
                seen["lexer_modules_at_idle"] = sum(
                    name.startswith("pygments.lexers.") and "._" not in name for name in sys.modules
                )
                self.timer.stop()
                window.close()

    class ProbedDesktop(app.desktop.Desktop):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            self.probe = Probe(self)

    app.desktop.Desktop = ProbedDesktop  # type: ignore[misc]
    from app.main import main as converge

    args = ["--profile", profile, "--server", UNREACHABLE, "--token", TOKEN]
    status = converge([*args, "--sync-interval", "0"])
    if status != 0 or "engine" not in marks:
        print(f"converge exited with {status}; seen: {sorted(marks)}", file=sys.stderr)
        return 1
    figures = {
        "imports_s": round(imported - spawned, 3),
        "imports_cpu_s": round(imported_cpu, 3),
        "first_paint_s": round(marks["painted"] - spawned, 3),
        "all_rows_s": round(marks["all_rows"] - spawned, 3),
        "engine_s": round(marks["engine"] - spawned, 3),
        "rows": rows,
        **seen,
    }
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
