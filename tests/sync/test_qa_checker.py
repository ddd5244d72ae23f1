"""The invariant checker of `converge qa`, fed fabricated histories: it must catch each kind
of violation, and stay quiet on a history that is merely racy but legitimate."""

from __future__ import annotations

import itertools

from sync.qa_checker import (
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
