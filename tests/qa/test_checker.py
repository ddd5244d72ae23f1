"""The invariant checker of `converge qa`, fed fabricated histories: it must catch each kind
of violation, and stay quiet on a history that is merely racy but legitimate."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from qa.checker import (
    DeleteAttempt,
    DeleteResult,
    History,
    Kind,
    Observation,
    Residue,
    RowKey,
    Source,
    check,
    describe_difference,
)

A = RowKey("ses_a", "Alpha", "2026-11-30T07:00:02.000000Z")
B = RowKey("ses_b", "Beta", "2026-11-30T07:00:01.000000Z")
C = RowKey("ses_c", "Gamma", "2026-11-30T07:00:00.000000Z")

_seq = itertools.count()


def obs(device: int, sid: str, present: bool, source: Source, at: float) -> Observation:
    return Observation(next(_seq), at, device, sid, present, source)


def deleted(
    sid: str,
    device: int,
    sent: float,
    result: DeleteResult = DeleteResult.DELETED,
    row_before: bool = True,
    row_after: bool = False,
    server_has_after: bool | None = None,
) -> DeleteAttempt:
    return DeleteAttempt(
        sid, device, sent, sent + 0.01, result, row_before, row_after, server_has_after
    )


def converged_history(**overrides: object) -> History:
    """Two devices that saw C created then deleted by device 0, and agree with the server."""
    history = History(
        devices=2,
        observations=[
            obs(0, "ses_c", True, Source.INSERTED, 1.0),
            obs(1, "ses_c", True, Source.INSERTED, 1.1),
            obs(0, "ses_c", False, Source.DELETED, 2.02),
            obs(1, "ses_c", False, Source.PRUNED, 2.5),
        ],
        deletes=[deleted("ses_c", 0, 2.0)],
        server_index=[A, B],
        mirrors={0: [A, B], 1: [A, B]},
        converged_after={0: 0.1, 1: 0.3},
        deadline=10.0,
        outbox_pending=0,
        residue={"ses_c": Residue(rows=0, objects=0, outbox=0, tombstone=True)},
    )
    for key, value in overrides.items():
        setattr(history, key, value)
    return history


def kinds(history: History) -> list[Kind]:
    return [v.kind for v in check(history)]


def test_a_clean_history_has_no_violations() -> None:
    assert check(converged_history()) == []


def test_a_mirror_that_differs_from_the_server_is_reported_with_the_deadline() -> None:
    stale_title = RowKey("ses_b", "Old title", B.updated_at)
    history = converged_history(mirrors={0: [A, B], 1: [A, stale_title, C]})
    violations = check(history)
    assert [v.kind for v in violations] == [Kind.NOT_CONVERGED]
    assert violations[0].device == 1
    assert "did not converge within 10s" in violations[0].detail
    assert "extra" in violations[0].detail and "title" in violations[0].detail


def test_a_mirror_in_another_order_is_not_converged() -> None:
    assert describe_difference([A, B], [B, A]) == "same rows in a different order"
    assert kinds(converged_history(mirrors={0: [A, B], 1: [B, A]})) == [Kind.NOT_CONVERGED]


def test_a_device_without_a_final_mirror_is_not_converged() -> None:
    assert kinds(converged_history(mirrors={0: [A, B]})) == [Kind.NOT_CONVERGED]


def test_a_deleted_session_that_comes_back_after_its_prune_is_a_reappearance() -> None:
    history = converged_history()
    history.observations.append(obs(1, "ses_c", True, Source.UPDATED, 3.0))
    violations = check(history)
    assert [v.kind for v in violations] == [Kind.REAPPEARED]
    assert violations[0].device == 1 and violations[0].session_id == "ses_c"


def test_a_sample_showing_a_row_gone_then_back_is_a_reappearance() -> None:
    history = converged_history(
        observations=[
            obs(1, "ses_c", True, Source.INSERTED, 1.0),
            obs(1, "ses_c", False, Source.SAMPLE, 2.5),
            obs(1, "ses_c", True, Source.SAMPLE, 3.0),
        ]
    )
    assert kinds(history) == [Kind.REAPPEARED]


def test_a_stale_walk_showing_a_session_the_device_never_had_is_not_a_reappearance() -> None:
    """ADR-0050 accepts that a deleted row may show until the next pass on a device that
    never observed the delete."""
    history = converged_history(
        observations=[
            obs(1, "ses_c", False, Source.SAMPLE, 2.5),  # never had it
            obs(1, "ses_c", True, Source.INSERTED, 2.6),  # a walk from before the delete
            obs(1, "ses_c", False, Source.PRUNED, 2.8),
        ]
    )
    assert check(history) == []


def test_pruning_a_session_the_server_still_has_is_a_live_prune() -> None:
    history = converged_history()
    history.observations.append(obs(0, "ses_a", False, Source.PRUNED, 4.0))
    violations = check(history)
    assert Kind.LIVE_PRUNED in [v.kind for v in violations]
    live = next(v for v in violations if v.kind is Kind.LIVE_PRUNED)
    assert live.session_id == "ses_a" and live.device == 0


def test_pruning_a_session_before_its_delete_was_sent_is_a_live_prune() -> None:
    history = converged_history(
        observations=[obs(1, "ses_c", False, Source.PRUNED, 1.5)],  # delete sent at 2.0
    )
    violations = check(history)
    assert [v.kind for v in violations] == [Kind.LIVE_PRUNED]
    assert "before any delete" in violations[0].detail


def test_a_refused_delete_must_keep_the_row_and_the_session() -> None:
    history = converged_history(
        deletes=[
            deleted("ses_c", 0, 2.0),
            deleted(
                "ses_a", 1, 3.0, DeleteResult.ACTIVE_RUN, row_after=False, server_has_after=False
            ),
        ]
    )
    assert sorted(k.value for k in kinds(history)) == ["conflict_deleted", "conflict_lost_row"]


def test_a_refused_delete_that_kept_everything_is_fine() -> None:
    history = converged_history(
        deletes=[
            deleted("ses_c", 0, 2.0),
            deleted(
                "ses_a", 1, 3.0, DeleteResult.ACTIVE_RUN, row_after=True, server_has_after=True
            ),
        ]
    )
    assert check(history) == []


def test_a_failed_delete_must_keep_the_row() -> None:
    history = converged_history(
        deletes=[deleted("ses_c", 0, 2.0), deleted("ses_b", 0, 3.0, DeleteResult.FAILED)]
    )
    assert kinds(history) == [Kind.FAILED_DELETE_LOST_ROW]


def test_an_unconfirmed_delete_must_keep_the_row() -> None:
    history = converged_history(
        deletes=[deleted("ses_c", 0, 2.0), deleted("ses_b", 0, 3.0, DeleteResult.UNCONFIRMED)]
    )
    assert kinds(history) == [Kind.FAILED_DELETE_LOST_ROW]


def test_what_a_public_route_still_serves_of_a_deleted_session_is_residue() -> None:
    history = converged_history(
        leftovers=[
            ("ses_c", "GET /v1/runs/run_1 answered 200, not the plain 404"),
            ("", "GET /v1/memories: the server did not answer"),
        ]
    )
    violations = check(history)
    assert [v.kind for v in violations] == [Kind.RESIDUE, Kind.RESIDUE]
    assert violations[0].session_id == "ses_c" and "run_1 answered 200" in violations[0].detail
    assert violations[1].session_id is None and "could not finish" in violations[1].detail


def test_a_confirmed_delete_still_listed_by_the_server_is_reported() -> None:
    history = converged_history(
        deletes=[deleted("ses_c", 0, 2.0), deleted("ses_b", 1, 5.0)],
    )
    assert kinds(history) == [Kind.DELETED_STILL_SERVED]


def test_an_undrained_outbox_and_purge_residue_are_reported() -> None:
    history = converged_history(
        outbox_pending=2,
        residue={"ses_c": Residue(rows=3, objects=1, outbox=1, tombstone=False)},
    )
    violations = check(history)
    assert [v.kind for v in violations] == [Kind.OUTBOX_NOT_DRAINED, Kind.RESIDUE]
    assert "3 rows, 1 objects, 1 outbox entries, no tombstone" in violations[1].detail
    assert violations[0].to_json()["kind"] == "outbox_not_drained"


def test_an_operation_that_outlived_its_deadline_is_reported() -> None:
    history = converged_history(stuck=["operation 7 (delete) did not finish within 60s"])
    assert kinds(history) == [Kind.STUCK]


def test_a_removed_session_without_a_server_tombstone_is_a_live_prune() -> None:
    assert check(converged_history(tombstones={"ses_c": True})) == []
    violations = check(converged_history(tombstones={"ses_c": False}))
    assert [v.kind for v in violations] == [Kind.LIVE_PRUNED]
    assert "no tombstone" in violations[0].detail


# -- a property: legitimate, racy histories never trip the checker --------------------------


@st.composite
def legitimate_histories(draw: st.DrawFn) -> History:
    """Histories that a correct engine may produce: inserts and updates at any time while a
    session lives, a stale walk that still upserts (or first inserts) a deleted session, and
    removals only after the server committed the delete, never followed by presence."""
    devices = draw(st.integers(1, 3))
    sessions = [f"ses_{i}" for i in range(draw(st.integers(1, 5)))]
    seq = itertools.count()
    observations: list[Observation] = []
    deletes: list[DeleteAttempt] = []
    live: list[RowKey] = []
    for sid in sessions:
        deleted_at = draw(st.one_of(st.none(), st.floats(1.0, 9.0)))
        if deleted_at is None:
            live.append(RowKey(sid, sid.upper(), f"2026-11-30T07:00:0{len(live)}.000000Z"))
        else:
            deletes.append(
                DeleteAttempt(
                    sid,
                    draw(st.integers(0, devices - 1)),
                    deleted_at,
                    deleted_at + 0.05,
                    DeleteResult.DELETED,
                    True,
                    False,
                )
            )
        for device in range(devices):
            steps = draw(st.lists(st.floats(0.0, 20.0), max_size=4))
            times = sorted(steps)
            if deleted_at is None:
                for at in times:
                    observations.append(
                        Observation(next(seq), at, device, sid, True, Source.UPDATED)
                    )
                continue
            committed = deleted_at + 0.01
            removal_at = draw(st.floats(committed, 30.0))
            for at in times:
                if at < removal_at:  # before the removal, even a stale walk may upsert it
                    observations.append(
                        Observation(next(seq), at, device, sid, True, Source.INSERTED)
                    )
            if times and times[0] < removal_at:
                observations.append(
                    Observation(
                        next(seq),
                        removal_at,
                        device,
                        sid,
                        False,
                        draw(st.sampled_from([Source.PRUNED, Source.DELETED])),
                    )
                )
    observations.sort(key=lambda o: (o.at, o.seq))
    observations = [
        Observation(i, o.at, o.device, o.session_id, o.present, o.source)
        for i, o in enumerate(observations)
    ]
    live.sort(key=lambda r: (r.updated_at, r.id), reverse=True)
    return History(
        devices=devices,
        observations=observations,
        deletes=deletes,
        server_index=live,
        mirrors={d: list(live) for d in range(devices)},
        converged_after=dict.fromkeys(range(devices), 0.1),
        deadline=5.0,
        outbox_pending=0,
        tombstones={d.session_id: True for d in deletes},
    )


@settings(max_examples=200, deadline=None)
@given(legitimate_histories())
def test_legitimate_histories_have_no_violations(history: History) -> None:
    assert check(history) == []


@settings(max_examples=200, deadline=None)
@given(legitimate_histories(), st.data())
def test_presence_after_any_removal_is_always_caught(history: History, data: st.DataObject) -> None:
    removals = [o for o in history.observations if o.source.is_removal]
    if not removals:
        return
    gone = data.draw(st.sampled_from(removals))
    history.observations.append(
        Observation(
            len(history.observations),
            gone.at + 1.0,
            gone.device,
            gone.session_id,
            True,
            Source.UPDATED,
        )
    )
    assert Kind.REAPPEARED in {v.kind for v in check(history)}
