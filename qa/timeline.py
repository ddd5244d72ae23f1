"""What happened when, per device, for the HTML report's timeline (`qa.reports`).

The harness records each operation (on the device that ran it; restarts and object-store
outages on the server's lane), and the fault proxy each fault it struck and each partition
it started, with `time.monotonic()` stamps made relative to the run's start. A soak makes
hundreds of thousands of requests, so the record is bounded: the first `limit` events are
kept and the rest only counted, which the report says.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

#: Events kept per run (each a small record, so the whole stays small).
DEFAULT_LIMIT = 5000


@dataclass(frozen=True)
class Event:
    """One thing on the timeline: `device` None is the server's lane; `seconds` a duration
    (an operation's, a partition's), 0 for an instant (a dropped connection)."""

    at: float  # seconds since the run started
    device: int | None
    kind: str  # "op", "fault", "partition" or "phase" (the quiet phase starts)
    label: str  # the operation's or the fault's name
    seconds: float = 0.0


@dataclass
class Timeline:
    limit: int = DEFAULT_LIMIT
    started: float = field(default_factory=time.monotonic)
    events: list[Event] = field(default_factory=list)
    left_out: int = 0

    def add(
        self,
        device: int | None,
        kind: str,
        label: str,
        *,
        at: float | None = None,
        seconds: float = 0.0,
    ) -> None:
        """Record an event at `at` (monotonic; default now), unless the bound is reached."""
        if len(self.events) >= self.limit:
            self.left_out += 1
            return
        moment = time.monotonic() if at is None else at
        self.events.append(Event(moment - self.started, device, kind, label, max(0.0, seconds)))
