"""Keep the garbage collector's full passes away from the moments the user is looking.

With 100,000 sidebar rows the process holds a few hundred thousand tracked objects, and a
full (generation 2) collection of that heap takes 100–250 ms on these machines: longer
than any slice of work the window allows itself (measured in `bench/ui.py`). Python 3.13
has no incremental collector, so the policy is:

- once at start-up (modules, Qt wrappers: a large, immortal part of the heap) and after
  each sidebar refresh, `gc.freeze()` moves every surviving object to the permanent
  generation, so automatic collections only scan what is new since then. Frozen objects
  are still freed by reference counting when they die (rows are acyclic);
- when the application leaves the foreground, everything is unfrozen and collected once
  (cyclic garbage that was frozen is reclaimed there), then frozen again.

The policy is installed by each `Desktop` and removed when it stops (`HeapPolicy`): the
application object outlives windows, and a handler left on its state signal would run one
more full collection per departure for every window ever opened in the process.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import time

from PySide6.QtCore import Qt, SignalInstance
from PySide6.QtWidgets import QApplication

log = logging.getLogger(__name__)


def freeze() -> None:
    """Exclude today's survivors from future automatic collections."""
    gc.freeze()


def collect_while_idle() -> None:
    """A full collection, for when nobody is watching the window (then freeze again)."""
    started = time.perf_counter()
    gc.unfreeze()
    found = gc.collect()
    gc.freeze()
    log.info(
        "idle collection: %d unreachable objects, %.0f ms",
        found,
        1000 * (time.perf_counter() - started),
    )


class HeapPolicy:
    """Freeze now and after each `refreshed`; collect fully when the application leaves the
    foreground. `uninstall` undoes all of it (idempotent)."""

    def __init__(self, refreshed: SignalInstance) -> None:
        self._refreshed = refreshed
        self._app = QApplication.instance()
        self._installed = True
        freeze()
        refreshed.connect(self._freeze)
        if isinstance(self._app, QApplication):
            self._app.applicationStateChanged.connect(self._on_state)

    # Looked up at call time, so a test can count the collections.
    def _freeze(self) -> None:
        freeze()

    def _on_state(self, state: Qt.ApplicationState) -> None:
        if state != Qt.ApplicationState.ApplicationActive:
            collect_while_idle()

    def uninstall(self) -> None:
        """Disconnect both handlers. The heap stays frozen: what was frozen is freed by
        reference counting or at exit, and the next policy freezes again."""
        if not self._installed:
            return
        self._installed = False
        # RuntimeError, TypeError: the signal's owner is already gone.
        with contextlib.suppress(RuntimeError, TypeError):
            self._refreshed.disconnect(self._freeze)
        if isinstance(self._app, QApplication):
            with contextlib.suppress(RuntimeError, TypeError):
                self._app.applicationStateChanged.disconnect(self._on_state)
