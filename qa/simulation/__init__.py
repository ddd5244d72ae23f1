"""A deterministic simulation of the sync engine (decision 0098).

The real `sync` code (the engine's index walk, point reads, prunes, content phase, deletes
and their marks, the watch loop, the mirror on a real SQLite file) runs against a model of
the server's routes (`qa.simulation.server`) on an event loop whose clock is virtual
(`qa.simulation.clock`). A seed decides everything a schedule does: what the server does
between two requests, which request is cut before it is sent, after the server committed
it or in the middle of its body, which answers are delayed, refused (429, 503) or
reordered, and when a device is killed and started again (`qa.simulation.schedule`). After
each schedule the devices are left to go quiet and the invariants of ADR-0050 are checked;
a failure names its seed and the command that replays it.
"""

from qa.simulation.schedule import Failure, Outcome, run_schedule

__all__ = ["Failure", "Outcome", "run_schedule"]
