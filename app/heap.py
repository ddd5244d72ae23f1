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
"""

from __future__ import annotations

import gc
import logging
import time

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
