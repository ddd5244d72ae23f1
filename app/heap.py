"""Keep the garbage collector's full passes away from the moments the user is looking.

With a long sidebar the process holds hundreds of thousands of tracked objects, and a full
(generation 2) collection of that heap takes longer than any slice of work the window
allows itself (`python -m bench ui`). Python 3.13 has no incremental collector, so the
policy is:

- once, when the window has painted its first rows (modules, Qt wrappers: a large,
  immortal part of the heap; `HeapPolicy.freeze`, which `app.desktop` calls then, so that
  the first paint does not wait for it), a full collection and then `gc.freeze()`: the
  survivors move to the permanent
  generation, so automatic collections never scan them again. Freezing right after a
  collection is what makes it safe: nothing pending is pinned. A sidebar refresh does not
  freeze: that would freeze whatever cyclic garbage is pending at that moment
  (`tests/ui/test_heap_policy.py`), out of every collection's reach until the application
  left the foreground;
- when the application leaves the foreground, everything is unfrozen and collected once,
  then frozen again (again right after a collection);
- while it is installed, a generation-1 collection comes after every second young one, not
  every tenth (`YOUNG_PER_OLDER`). A cold reconcile adds rows by the thousand, and a
  generation-1 collection after ten young ones scans tens of thousands of the newest at
  once, inside one loop step: the largest part of the window's longest UI-thread gap.
  Every other young collection scans a fifth of that and shortens that gap (`python -m
  bench ui`, cold). The total work is the same: each object is still scanned once per
  generation.

Frozen objects are still freed by reference counting when they die (rows are acyclic).

What a start-up's reads freed (the mirror's result rows, read on worker threads, and the
first paint's reader) stays in the C allocator's free lists, counted in the process's
resident memory, until something asks for it back: `release_free_memory` (glibc's
`malloc_trim`) gives it to the system once the start-up is done (`HeapPolicy.settle`) and
after each idle collection.

The policy is installed by each `Desktop` and removed when it stops (`HeapPolicy`): the
application object outlives windows, and a handler left on its state signal would run one
more full collection per departure for every window ever opened in the process.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import sys
import time

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

log = logging.getLogger(__name__)


def collect_then_freeze() -> None:
    """Collect fully, then exclude the survivors from future automatic collections."""
    gc.collect()
    gc.freeze()


def release_free_memory() -> None:
    """Return the C heap's free pages to the system (glibc's `malloc_trim`). Linux alone:
    another C library keeps them, and Windows cannot even name the process's own library
    (`CDLL(None)`)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes  # here: nothing before the first paint needs it

    try:
        trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
    except OSError:  # no dynamic C library to open (a static build)
        return
    if trim is not None:
        trim(0)


def collect_while_idle() -> None:
    """A full collection, for when nobody is watching the window (then freeze again)."""
    started = time.perf_counter()
    gc.unfreeze()
    found = gc.collect()
    gc.freeze()
    release_free_memory()
    log.info(
        "idle collection: %d unreachable objects, %.0f ms",
        found,
        1000 * (time.perf_counter() - started),
    )


#: Young (generation-0) collections per generation-1 collection while a policy is installed
#: (CPython's default is 10).
YOUNG_PER_OLDER = 2


class HeapPolicy:
    """Collect and freeze now (or at `freeze`); collect fully when the application leaves the
    foreground; older collections in smaller pieces. `uninstall` undoes the handler and the
    threshold (idempotent)."""

    def __init__(self, *, freeze: bool = True) -> None:
        self._app = QApplication.instance()
        self._installed = True
        self._frozen = False
        young, self._older, oldest = gc.get_threshold()
        gc.set_threshold(young, YOUNG_PER_OLDER, oldest)
        if freeze:
            self.freeze()
        if isinstance(self._app, QApplication):
            self._app.applicationStateChanged.connect(self._on_state)

    def freeze(self) -> None:
        """The start-up's collection and freeze, once (later calls do nothing)."""
        if not self._frozen and self._installed:
            self._frozen = True
            collect_then_freeze()

    def settle(self) -> None:
        """The start-up is done: what its reads freed goes back to the system."""
        if self._installed:
            release_free_memory()

    # `collect_while_idle` is looked up at call time, so a test can count the collections.
    def _on_state(self, state: Qt.ApplicationState) -> None:
        if state != Qt.ApplicationState.ApplicationActive:
            collect_while_idle()

    def uninstall(self) -> None:
        """Disconnect the handler. The heap stays frozen: what was frozen is freed by
        reference counting or at exit, and the next policy freezes again."""
        if not self._installed:
            return
        self._installed = False
        young, _older, oldest = gc.get_threshold()
        gc.set_threshold(young, self._older, oldest)
        if isinstance(self._app, QApplication):
            # RuntimeError, TypeError: the signal's owner is already gone.
            with contextlib.suppress(RuntimeError, TypeError):
                self._app.applicationStateChanged.disconnect(self._on_state)
