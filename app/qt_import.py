"""PySide6, imported without its per-module source scan.

Importing `PySide6.QtCore` replaces Python's `__import__` with one that serves PySide's
`from __feature__ import snake_case, true_property`. After every later import it decides
whether that module "uses PySide" by reading the module's whole source
(`inspect.getsource`), and `linecache` keeps every line it read for the life of the
process: the CPU of reading the source of every module the window imports before its first
paint, and the memory of every line of every module loaded after (the engine's, the
renderer's, Pygments' lexers), held for nothing.

Converge selects no `__feature__` anywhere, so the scan can only answer "no feature" for
each module. `app.desktop` imports this module before any module of its own
(`tests/app/test_qt_import.py`); it skips the scan by answering that directly. Should a later
PySide6 rename that hook, nothing is patched and the test says so.
"""

from __future__ import annotations

import sys
from types import ModuleType

import PySide6.QtCore  # noqa: F401  (installs the import hook whose scan is skipped)

#: PySide's module holding the scan, and the scan's name in it.
FEATURE_MODULE = "shibokensupport.feature"
SCAN = "_mod_uses_pyside"


def _selects_no_feature(module: ModuleType) -> bool:
    """PySide's question "does this module use PySide?", answered without its source: the
    answer only matters to a module that selects a `__feature__`, and none here does."""
    return False


def skip_source_scan() -> bool:
    """Replace PySide's scan; False when this PySide6 has no such scan to replace."""
    feature = sys.modules.get(FEATURE_MODULE)
    if feature is None or not callable(getattr(feature, SCAN, None)):
        return False
    setattr(feature, SCAN, _selects_no_feature)
    return True


skip_source_scan()
