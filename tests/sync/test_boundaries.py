"""docs/architecture.md's arrows hold: `sync` needs neither the window, the composition
root, the QA harness nor the server, and never loads Qt."""

from __future__ import annotations

import subprocess
import sys

FORBIDDEN = ("ui", "app", "qa", "server_stub", "PySide6", "qasync")


def test_importing_every_sync_module_loads_no_ui_app_qa_server_or_qt() -> None:
    code = (
        "import importlib, pkgutil, sys, sync\n"
        "for m in pkgutil.walk_packages(sync.__path__, 'sync.'):\n"
        "    importlib.import_module(m.name)\n"
        f"bad = sorted(n for n in sys.modules if n.split('.')[0] in {FORBIDDEN!r})\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == ""
