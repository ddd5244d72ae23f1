"""`app.desktop` imports PySide6 without its per-module source scan (`app.qt_import`): no
module the window imports has its source read and kept in `linecache`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_no_module_of_the_window_has_its_source_read_at_import() -> None:
    code = (
        "import json, linecache, sys\n"
        "import app.desktop\n"
        "import app.qt_import\n"
        "print(json.dumps({'kept': sorted(linecache.cache), 'skipped': "
        "app.qt_import.skip_source_scan(), 'modules': len(sys.modules)}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=ROOT,
        env={"QT_QPA_PLATFORM": "offscreen", "PATH": ""},
    )
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["skipped"], "this PySide6 has no source scan by that name: see app.qt_import"
    ours = [f for f in seen["kept"] if f.startswith(str(ROOT)) and "site-packages" not in f]
    assert ours == []
    assert len(seen["kept"]) < 20  # of several hundred modules imported
    assert seen["modules"] > 300
