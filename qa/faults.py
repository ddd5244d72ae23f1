"""The network fault schedule of `converge qa --faults SPEC --seed N` (CONTRACT §12).

Why a pure schedule apart from the proxy (`qa.proxy`): like the workload (`qa.workload`),
the faults must be the same for the same seed while timing varies. The schedule is a
function of the spec, the seed and the number of devices alone: each device has an endless
sequence of connection plans (the n-th connection that device opens gets plan n, whatever
the timing), drawn from its own `random.Random` with the same number of draws per plan, and
a list of partitions pinned to operation indices. `FaultSchedule.digest` fingerprints it.

Spec: comma-separated `key=value` items, or the preset `standard`:

| key | meaning (bounds) |
|---|---|
| `latency=MS` | each chunk, in each direction, is held MS milliseconds (0..5000) |
| `jitter=MS` | plus a seeded 0..MS more per chunk, order kept (0..5000) |
| `drop=P` | probability per connection of a reset (RST) after a seeded byte count |
| `cut=P` | ... of an orderly close (FIN) after a seeded byte count: a cut body |
| `stall=P` | ... of a stall (nothing forwarded) after a seeded byte count |
| `stall-seconds=S` | how long a stall lasts (default 2; 0 < S <= 30) |
| `partition=D[+D…]@OP:S` | devices D lose the network when operation OP starts, for S s |
| `partitions=K` | K more partitions at seeded operations, of seeded devices (K <= 50) |
| `partition-seconds=S` | their length (default 4; 0 < S <= 120) |

`drop + cut + stall` is at most 1. The byte count is drawn in the response direction
(server to device) four times in five, else in the request direction (a cut request body).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum

STANDARD = "latency=20,jitter=30,drop=0.1,cut=0.1,stall=0.1,partitions=2"
MAX_DELAY_MS = 5000
MAX_STALL = 30.0
MAX_PARTITION = 120.0
MAX_PARTITIONS = 50
#: Seeded partitions start at an operation in [1, horizon): the run's `--operations`, or
#: this when it runs for a duration.
DEFAULT_HORIZON = 60
RESPONSE_AFTER = 6000  # the seeded byte count of a response fault is below this
REQUEST_AFTER = 600  # ... of a request fault


class Fault(Enum):
    NONE = "none"
    DROP = "drop"  # RST: the peer sees a reset, mid-message
    CUT = "cut"  # FIN: the peer sees an orderly close before the message ended
    STALL = "stall"  # nothing moves for `stall_seconds`, then the connection goes on


class Direction(Enum):
    RESPONSE = "response"  # server to device
    REQUEST = "request"  # device to server


@dataclass(frozen=True)
class Partition:
    """`devices` lose the network when operation `at_op` starts, for `seconds`."""

    devices: tuple[int, ...]
    at_op: int
    seconds: float

    def text(self) -> str:
        return f"{'+'.join(map(str, self.devices))}@{self.at_op}:{self.seconds:g}"


@dataclass(frozen=True)
class ConnectionPlan:
    """What happens to one connection: its fault, where, and its own jitter seed."""

    number: int
    fault: Fault
    direction: Direction
    after: int  # bytes forwarded in `direction` before the fault strikes
    stall_seconds: float
    jitter_seed: int

    def key(self) -> str:
        return (
            f"{self.number}:{self.fault.value}:{self.direction.value}:{self.after}:"
            f"{self.stall_seconds:g}:{self.jitter_seed}"
        )


@dataclass(frozen=True)
class FaultSpec:
    """A parsed `--faults` value (see the module docstring); `text()` is its canonical form."""

    latency_ms: int = 0
    jitter_ms: int = 0
    drop: float = 0.0
    cut: float = 0.0
    stall: float = 0.0
    stall_seconds: float = 2.0
    partitions: tuple[Partition, ...] = ()
    seeded_partitions: int = 0
    partition_seconds: float = 4.0

    @classmethod
    def parse(cls, text: str) -> FaultSpec:
        """The spec, or ValueError naming the item that is wrong."""
        text = STANDARD if text.strip() == "standard" else text
        values: dict[str, object] = {}
        explicit: list[Partition] = []
        for raw in text.split(","):
            item = raw.strip()
            if not item:
                continue
            key, sep, value = item.partition("=")
            if not sep:
                raise ValueError(f"{item!r}: expected key=value")
            try:
                if key in ("latency", "jitter"):
                    values[f"{key}_ms"] = _bounded(_int(value), 0, MAX_DELAY_MS, key)
                elif key in ("drop", "cut", "stall"):
                    values[key] = _bounded(_float(value), 0.0, 1.0, key)
                elif key == "stall-seconds":
                    values["stall_seconds"] = _positive(_float(value), MAX_STALL, key)
                elif key == "partition-seconds":
                    values["partition_seconds"] = _positive(_float(value), MAX_PARTITION, key)
                elif key == "partitions":
                    values["seeded_partitions"] = _bounded(_int(value), 0, MAX_PARTITIONS, key)
                elif key == "partition":
                    explicit.append(_partition(value))
                else:
                    raise ValueError(f"unknown key {key!r}")
            except ValueError as exc:
                raise ValueError(f"--faults {item!r}: {exc}") from None
        spec = cls(partitions=tuple(explicit), **values)  # type: ignore[arg-type]
        if spec.drop + spec.cut + spec.stall > 1.0:
            raise ValueError("--faults: drop + cut + stall must be at most 1")
        if len(explicit) > MAX_PARTITIONS:
            raise ValueError(f"--faults: at most {MAX_PARTITIONS} partitions")
        return spec

    def text(self) -> str:
        parts = [
            f"latency={self.latency_ms}",
            f"jitter={self.jitter_ms}",
            f"drop={self.drop:g}",
            f"cut={self.cut:g}",
            f"stall={self.stall:g}",
            f"stall-seconds={self.stall_seconds:g}",
            *(f"partition={p.text()}" for p in self.partitions),
            f"partitions={self.seeded_partitions}",
            f"partition-seconds={self.partition_seconds:g}",
        ]
        return ",".join(parts)


def _int(value: str) -> int:
    """A whole number, or ValueError in words (not Python's `invalid literal for int()`)."""
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{value.strip()!r} is not a whole number") from None


def _float(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"{value.strip()!r} is not a number") from None


def _bounded[N: (int, float)](value: N, low: N, high: N, key: str) -> N:
    if not low <= value <= high:
        raise ValueError(f"{key} must be within {low}..{high}")
    return value


def _positive(value: float, high: float, key: str) -> float:
    if not 0 < value <= high:
        raise ValueError(f"{key} must be above 0 and at most {high:g}")
    return value


def _partition(value: str) -> Partition:
    devices, at, rest = value.partition("@")
    op, colon, seconds = rest.partition(":")
    if not at or not colon:
        raise ValueError("expected DEVICE[+DEVICE…]@OPERATION:SECONDS")
    ids = tuple(sorted({_int(d) for d in devices.split("+")}))
    if any(d < 0 for d in ids) or _int(op) < 0:
        raise ValueError("devices and operations count from 0")
    return Partition(ids, _int(op), _positive(_float(seconds), MAX_PARTITION, "seconds"))


@dataclass
class FaultSchedule:
    """The seeded schedule for one run: partitions and each device's connection plans."""

    spec: FaultSpec
    seed: int
    devices: int
    horizon: int = DEFAULT_HORIZON
    partitions: list[Partition] = field(init=False)

    def __post_init__(self) -> None:
        for p in self.spec.partitions:
            if any(d >= self.devices for d in p.devices):
                raise ValueError(f"--faults partition={p.text()}: no such device")
        rng = random.Random(f"partitions-{self.seed}")
        seeded = []
        most = max(1, self.devices // 3)
        for _ in range(self.spec.seeded_partitions):
            count = rng.randint(1, most)
            chosen = tuple(sorted(rng.sample(range(self.devices), count)))
            at = rng.randrange(1, max(2, self.horizon))
            seeded.append(Partition(chosen, at, self.spec.partition_seconds))
        self.partitions = sorted(
            [*self.spec.partitions, *seeded], key=lambda p: (p.at_op, p.devices)
        )

    def plans(self, device: int) -> Iterator[ConnectionPlan]:
        """The endless sequence of plans for `device`'s connections, in the order it opens
        them. Every plan takes the same five draws, whatever its fault."""
        rng = random.Random(f"faults-{self.seed}-{device}")
        s = self.spec
        number = 0
        while True:
            u = rng.random()
            response = rng.random() < 0.8
            after_fraction = rng.random()
            stall_fraction = rng.random()
            jitter_seed = rng.randrange(1 << 32)
            if u < s.drop:
                fault = Fault.DROP
            elif u < s.drop + s.cut:
                fault = Fault.CUT
            elif u < s.drop + s.cut + s.stall:
                fault = Fault.STALL
            else:
                fault = Fault.NONE
            limit = RESPONSE_AFTER if response else REQUEST_AFTER
            yield ConnectionPlan(
                number=number,
                fault=fault,
                direction=Direction.RESPONSE if response else Direction.REQUEST,
                after=int(after_fraction * limit),
                stall_seconds=round(s.stall_seconds * (0.5 + stall_fraction / 2), 3),
                jitter_seed=jitter_seed,
            )
            number += 1

    def starting_at(self, op_index: int) -> list[Partition]:
        return [p for p in self.partitions if p.at_op == op_index]

    def digest(self, plans_per_device: int = 200) -> str:
        """A fingerprint of the schedule: the spec, the partitions, and each device's first
        `plans_per_device` connection plans (same seed, same digest)."""
        h = hashlib.sha256(self.spec.text().encode())
        for p in self.partitions:
            h.update(p.text().encode() + b"\n")
        for device in range(self.devices):
            plans = self.plans(device)
            for _ in range(plans_per_device):
                h.update(next(plans).key().encode() + b"\n")
        return h.hexdigest()[:16]
