"""The seeded workload of `converge qa`: what to do next, decided by the seed alone.

Why a plan separate from its execution: the harness must make the same choices for the same
seed while timing varies. Every operation draws the same number of values from one
`random.Random(seed)` whatever its kind, and names its targets abstractly (a device number,
a fraction `pick` in [0, 1) that the driver maps onto its own list of live sessions in
creation order), so the sequence of operations is a pure function of the seed, the number of
devices and whether restarts are possible. `plan_digest` fingerprints it for the report.

The first object-store outage and the first server restart are placed early at seeded
positions, so even a short run exercises both; later ones come from the weights, spaced so
a long run is not mostly downtime.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import Enum


class OpKind(Enum):
    CREATE = "create"  # a device starts a new conversation (POST /v1/sessions + a run)
    ARTIFACT = "artifact"  # a run that stores an artifact (bytes to delete later)
    TURN = "turn"  # a device sends a message to an existing session (it moves to the top)
    DELETE = "delete"  # a device deletes a live session (server-first)
    DELETE_AGAIN = "delete_again"  # a device repeats the delete of a deleted session (204)
    DELETE_ACTIVE = "delete_active"  # a /wait run, then a delete that must get 409
    TRIGGER = "trigger"  # a device returns to the foreground (a reconcile trigger)
    REOPEN = "reopen"  # a device closes and reopens its engine (reconnect)
    OUTAGE_START = "outage_start"  # the object store goes down
    OUTAGE_END = "outage_end"  # ... and comes back
    RESTART = "restart"  # the server process is stopped (SIGTERM) and started again


#: Creations outweigh deletions, so the index grows and walks span several pages.
WEIGHTS: dict[OpKind, float] = {
    OpKind.CREATE: 26,
    OpKind.ARTIFACT: 8,
    OpKind.TURN: 24,
    OpKind.DELETE: 11,
    OpKind.DELETE_AGAIN: 3,
    OpKind.DELETE_ACTIVE: 4,
    OpKind.TRIGGER: 14,
    OpKind.REOPEN: 3,
    OpKind.OUTAGE_START: 3,
    OpKind.RESTART: 3,
}

FIRST_OUTAGE = (3, 12)  # the first outage starts at an op index in this range
FIRST_RESTART = (12, 28)
OUTAGE_LENGTH = (4, 12)  # ops an outage lasts
OUTAGE_SPACING = 40  # ops between the end of an outage and the next start
RESTART_SPACING = 150  # ops between restarts


@dataclass(frozen=True)
class Op:
    """One operation. `device` acts; `other` is a second device (e.g. the one whose delete
    gets the 409); `pick` chooses the target session; `flag` selects a variant (stop the run
    and delete after a 409; delete while the server is down; artifact in an existing
    session); `pause` is how long a restart keeps the server down."""

    index: int
    kind: OpKind
    device: int
    other: int
    pick: float
    flag: bool
    pause: float

    def key(self) -> str:
        return (
            f"{self.index}:{self.kind.value}:{self.device}:{self.other}:"
            f"{self.pick:.6f}:{int(self.flag)}:{self.pause:.3f}"
        )


def plan(seed: int, devices: int, *, restarts: bool = True, outages: bool = True) -> Iterator[Op]:
    """The endless, seed-determined sequence of operations (take as many as needed).

    Without `outages` (no control plane, so no object-store switch) and without `restarts`
    (a server the harness does not own), a drawn outage or restart becomes a trigger, and
    the places where one would have been forced (the first outage, its end, the first
    restart) keep the operation drawn there. The draws stay those of the seed, so a run
    replays exactly with the same seed and the same extras; the plan digest differs from a
    run with other extras."""
    if devices < 1:
        raise ValueError("at least one device")
    rng = random.Random(seed)
    kinds = list(WEIGHTS)
    weights = [WEIGHTS[k] for k in kinds]
    first_outage = rng.randrange(*FIRST_OUTAGE)
    first_restart = rng.randrange(*FIRST_RESTART)
    outage_until: int | None = None  # index at which the running outage ends
    last_outage_end = -OUTAGE_SPACING
    last_restart = -RESTART_SPACING
    restarted = False  # the first, placed restart has happened
    index = 0
    while True:
        # Always the same draws, in the same order, whatever the kind turns out to be.
        drawn = rng.choices(kinds, weights)[0]
        device = rng.randrange(devices)
        other = rng.randrange(devices)
        pick = rng.random()
        flag = rng.random() < 0.4
        pause = round(rng.uniform(0.1, 0.6), 3)
        length = rng.randrange(*OUTAGE_LENGTH)

        kind = drawn
        if outage_until is not None and index >= outage_until:
            kind = OpKind.OUTAGE_END
            outage_until = None
            last_outage_end = index
        elif index == first_outage and outage_until is None and outages:
            kind = OpKind.OUTAGE_START
        elif index >= first_restart and restarts and not restarted:
            kind = OpKind.RESTART
        else:
            outage_refused = kind is OpKind.OUTAGE_START and (
                not outages or outage_until is not None or index - last_outage_end < OUTAGE_SPACING
            )
            restart_refused = kind is OpKind.RESTART and (
                not restarts or index - last_restart < RESTART_SPACING
            )
            if outage_refused or restart_refused:
                kind = OpKind.TRIGGER
        if kind is OpKind.OUTAGE_START:
            outage_until = index + length
        if kind is OpKind.RESTART:
            last_restart = index
            restarted = True
        yield Op(index, kind, device, other, pick, flag, pause)
        index += 1


def initial_histories(seed: int, count: int) -> list[tuple[str, str, bool]]:
    """The sessions present before the devices start: (text, updated_at, legacy) each, with
    seeded past activity times (so they interleave in the index) and every fifth one a
    legacy session whose title must be derived from its first message."""
    rng = random.Random(f"initial-{seed}")
    base = datetime(2026, 1, 1, tzinfo=UTC)
    out: list[tuple[str, str, bool]] = []
    for i in range(count):
        at = base + timedelta(minutes=rng.randrange(0, 300 * 24 * 60), microseconds=i)
        text = f"earlier conversation {i} of seed {seed}"
        out.append((text, at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), i % 5 == 4))
    return out


def plan_digest(ops: Iterable[Op]) -> str:
    """A short fingerprint of a sequence of operations (same seed, same digest)."""
    h = hashlib.sha256()
    for op in ops:
        h.update(op.key().encode())
        h.update(b"\n")
    return h.hexdigest()[:16]


def choose[T](items: list[T], pick: float) -> T | None:
    """The item a fraction in [0, 1) points at, or None for an empty list."""
    if not items:
        return None
    return items[min(int(pick * len(items)), len(items) - 1)]
