"""Defer the garbage collector's full passes while a reconcile pass holds its big, short-lived heap.

Why: a pass over a large index keeps hundreds of thousands of tracked objects alive for a
few seconds (the walked `SessionView`s, the mirror snapshot's `SessionView`s, the pages'
JSON). CPython 3.13's collector is not incremental: an automatic full (generation 2)
collection in the middle of the pass scans all of them in one go, on whichever thread
allocates; on the UI thread that is a visible stall (`python -m bench ui`, a `gc.callbacks`
probe). None of those objects form cycles: reference counting frees them when the pass
ends, so a full collection during the pass finds nothing. Young collections (generations 0
and 1) still run, so short-lived cycles are still reclaimed; requests leave no cyclic
garbage, so no extra young collection is forced (docs/performance.md, "Taken out, and why").

How: while at least one pass runs in the process (the QA harness runs many engines in one
process, so this nests), the generation-2 threshold is raised out of reach; the last pass to
finish puts the thresholds back, and the collector then runs a full pass whenever its
ordinary rule says so (on a heap without the pass's objects).
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

#: Generation-1 collections before a full one while deferred: never, in practice.
DEFERRED = 1_000_000_000

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, int, int] | None = None


@contextlib.contextmanager
def full_collections_deferred() -> Iterator[None]:
    """No automatic full collection inside the block (nesting and threads allowed)."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            t0, t1, t2 = gc.get_threshold()
            _saved = (t0, t1, t2)
            gc.set_threshold(t0, t1, DEFERRED)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                t0, t1, _ = gc.get_threshold()  # keep young thresholds someone set meanwhile
                gc.set_threshold(t0, t1, _saved[2])
                _saved = None
