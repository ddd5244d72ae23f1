"""`qa.latency`: the convergence latency of a change, from fabricated histories."""

from __future__ import annotations

import itertools

from qa.checker import Observation, Source
from qa.latency import Change, Latencies, convergence_latencies, stages

_seq = itertools.count()


def seen(device: int, sid: str, present: bool, at: float) -> Observation:
    source = Source.INSERTED if present else Source.PRUNED
    return Observation(next(_seq), at, device, sid, present, source)


def test_a_delete_counts_until_the_last_device_that_held_the_row_lets_it_go() -> None:
    observations = [
        seen(1, "s", True, 0.0),
        seen(2, "s", True, 0.0),
        seen(1, "s", False, 10.2),
        seen(2, "s", False, 10.5),
    ]
    result = convergence_latencies(
        [Change("s", 0, 10.0, False, sent_at=9.9)], observations, [0, 1, 2]
    )
    assert [round(s, 3) for s in result.seconds] == [0.5] and result.missed == 0


def test_a_device_faster_than_the_204_counts_as_zero_and_one_without_the_row_is_skipped() -> None:
    observations = [seen(1, "s", True, 0.0), seen(1, "s", False, 9.95)]  # before the 204
    result = convergence_latencies(
        [Change("s", 0, 10.0, False, sent_at=9.9)], observations, [0, 1, 2]
    )
    assert result.seconds == [0.0]


def test_a_create_counts_until_every_device_shows_the_row_and_a_laggard_is_missed() -> None:
    observations = [seen(1, "n", True, 5.3), seen(2, "n", True, 5.1)]
    result = convergence_latencies([Change("n", 0, 5.0, True)], observations, [0, 1, 2, 3])
    assert [round(s, 3) for s in result.seconds] == [0.3] and result.missed == 0
    missing = convergence_latencies(
        [Change("m", 0, 1.0, False, sent_at=0.9)],
        [seen(1, "m", True, 0.0)],  # held it, never let it go
        [0, 1],
    )
    assert missing.seconds == [] and missing.missed == 1


def test_summary_is_nearest_rank_in_milliseconds() -> None:
    latencies = Latencies([i / 100 for i in range(1, 101)], 0)  # 10 ms .. 1000 ms
    assert latencies.summary_ms() == {"p50": 500.0, "p95": 950.0, "p99": 990.0, "max": 1000.0}
    assert Latencies([], 0).summary_ms() == {"p50": None, "p95": None, "p99": None, "max": None}


def test_stages_split_the_slowest_device_at_its_watch_answer() -> None:
    observations = [seen(1, "n", True, 10.3), seen(2, "n", True, 10.9)]
    result = convergence_latencies([Change("n", 0, 10.0, True)], observations, [0, 1, 2])
    assert result.slowest == [(2, 10.0, 10.9)]  # device 2 followed last
    # Device 2's watch answered at 10.6 (an answer before the change does not count).
    split = stages(result, {1: [10.1], 2: [9.0, 10.6]})
    assert split["change_to_watch_answer"]["p50"] == 600.0
    assert split["watch_answer_to_mirror"]["p50"] == 300.0
    assert split["change_to_watch_answer"]["n"] == 1
    assert stages(result, {2: [11.5]}) == {}  # no answer in between: not split


def test_deletes_and_creates_are_summarised_apart() -> None:
    observations = [
        seen(1, "old", True, 0.0),
        seen(1, "old", False, 10.8),  # the delete reached device 1 0.8 s after its 204
        seen(1, "new", True, 20.2),  # the create 0.2 s after its request
    ]
    result = convergence_latencies(
        [Change("old", 0, 10.0, False, sent_at=9.9), Change("new", 0, 20.0, True)],
        observations,
        [0, 1],
    )
    assert result.kinds == ["delete", "create"]
    by_kind = result.by_kind_ms()
    assert by_kind["delete"] == {"p50": 800.0, "p95": 800.0, "p99": 800.0, "max": 800.0, "n": 1}
    assert by_kind["create"]["p95"] == 200.0 and by_kind["create"]["n"] == 1
    assert result.summary_ms()["max"] == 800.0  # the overall figure still covers both
    split = stages(result, {1: [10.5, 20.1]}, "delete")
    assert split["change_to_watch_answer"]["p50"] == 500.0
    assert split["watch_answer_to_mirror"]["p50"] == 300.0
