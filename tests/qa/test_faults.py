"""The fault schedule of `converge qa --faults` (`qa.faults`): the seed alone decides it
(the schedule, not the timing), and a spec out of its bounds is refused by name."""

from __future__ import annotations

import itertools

import pytest

from qa.faults import STANDARD, Direction, Fault, FaultSchedule, FaultSpec, Partition

SPEC = "latency=10,jitter=20,drop=0.2,cut=0.2,stall=0.2,partition=0+2@5:3,partitions=3"


def first_plans(schedule: FaultSchedule, device: int, n: int = 300) -> list[str]:
    return [plan.key() for plan in itertools.islice(schedule.plans(device), n)]


def test_the_same_seed_gives_the_same_fault_schedule() -> None:
    a = FaultSchedule(FaultSpec.parse(SPEC), 11, 6, horizon=40)
    b = FaultSchedule(FaultSpec.parse(SPEC), 11, 6, horizon=40)
    assert a.partitions == b.partitions and a.digest() == b.digest()
    for device in range(6):
        assert first_plans(a, device) == first_plans(b, device)
    other = FaultSchedule(FaultSpec.parse(SPEC), 12, 6, horizon=40)
    assert other.digest() != a.digest()
    assert first_plans(other, 0) != first_plans(a, 0)


def test_the_schedule_holds_the_explicit_and_the_seeded_partitions() -> None:
    schedule = FaultSchedule(FaultSpec.parse(SPEC), 11, 6, horizon=40)
    assert Partition((0, 2), 5, 3.0) in schedule.partitions
    assert len(schedule.partitions) == 4
    for p in schedule.partitions:
        assert 1 <= p.at_op < 40 and all(0 <= d < 6 for d in p.devices)
    assert schedule.starting_at(5)[0].devices == (0, 2)


def test_each_fault_kind_appears_at_its_rate_and_in_both_directions() -> None:
    schedule = FaultSchedule(FaultSpec.parse(SPEC), 3, 3)
    plans = list(itertools.islice(schedule.plans(0), 2000))
    share = {kind: sum(p.fault is kind for p in plans) / len(plans) for kind in Fault}
    for kind in (Fault.DROP, Fault.CUT, Fault.STALL):
        assert 0.15 < share[kind] < 0.25
    assert {p.direction for p in plans} == set(Direction)
    assert all(0.5 <= p.stall_seconds <= 2.0 for p in plans)


def test_a_spec_without_faults_plans_none_and_the_standard_preset_parses() -> None:
    quiet = FaultSchedule(FaultSpec.parse("latency=5"), 1, 2)
    assert all(p.fault is Fault.NONE for p in itertools.islice(quiet.plans(1), 500))
    assert FaultSpec.parse("standard") == FaultSpec.parse(STANDARD)
    spec = FaultSpec.parse(SPEC)
    assert FaultSpec.parse(spec.text()) == spec  # the canonical text reads back


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("latency=9000", "latency"),
        ("drop=1.5", "drop"),
        ("drop=0.6,cut=0.6", "at most 1"),
        ("stall-seconds=0", "stall-seconds"),
        ("stall-seconds=31", "stall-seconds"),
        ("partition=1@3:500", "seconds"),
        ("partition=1", "DEVICE"),
        ("partitions=51", "partitions"),
        ("bandwidth=1", "unknown key"),
        ("drop", "key=value"),
        ("latency=abc", "'abc' is not a whole number"),
        ("drop=lots", "'lots' is not a number"),
        ("partition=x@3:5", "'x' is not a whole number"),
    ],
)
def test_a_spec_out_of_bounds_is_refused_by_name(text: str, names: str) -> None:
    with pytest.raises(ValueError, match=names):
        FaultSpec.parse(text)


def test_a_partition_of_a_device_that_does_not_exist_is_refused() -> None:
    with pytest.raises(ValueError, match="no such device"):
        FaultSchedule(FaultSpec.parse("partition=3@1:1"), 0, 3)
