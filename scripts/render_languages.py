"""Render the window in German and Arabic to docs/screenshots/*_de.png and *_ar.png.

The same real scenes as `render_screenshots.py` (the demo server, the showcase
conversation, the dialogs), with the compiled translations installed and the locale set
(Arabic: right to left), so the docs show what a German or Arabic user sees. Only the
shots the docs show are kept: the main window, Settings, the delete confirmation and the
offline banner. Needs the compiled .qm files (`make`, the install stamp builds them).

    .venv/bin/python scripts/render_languages.py [OUTPUT_DIR]
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import render_screenshots  # this folder, beside this script
from PySide6.QtCore import QLocale

from app import translations
from app.loop import ConvergeEventLoop

LANGUAGES = ("de", "ar")
KEPT = ("main_window", "settings_dialog", "delete_dialog", "offline")


def main() -> int:
    app, out = render_screenshots.screenshot_app()
    loop = ConvergeEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        for code in LANGUAGES:
            installed = translations.install(app, QLocale(code))
            if len(installed) < 2:
                raise SystemExit(f"no compiled translation for {code}: run make first")
            try:
                with (
                    tempfile.TemporaryDirectory() as tmp,
                    render_screenshots.demo_server() as (
                        server,
                        folder,
                    ),
                ):
                    suffix = f"_{code}"
                    loop.run_until_complete(
                        render_screenshots.render(
                            app, server.url, folder, Path(tmp), suffix, server.stop
                        )
                    )
                    for name in KEPT:
                        shutil.copy(Path(tmp) / f"{name}{suffix}.png", out)
            finally:
                translations.uninstall(app, installed)
    finally:
        loop.shut_down()
    return 0


if __name__ == "__main__":
    sys.exit(main())
