"""The pure reconcile planner: deduplicating a page and deciding prunes without a network.

(The walk's upserts and point-read candidates are the mirror's: `tests/sync/test_slow_walk.py`
and `tests/sync/test_reconcile_live.py`.)"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sync.errors import (
    CertificateError,
    ConnectionFailed,
    Forbidden,
    ServerError,
    SyncError,
    Unauthenticated,
    Unavailable,
)
from sync.reconcile.plan import (
    PointRead,
    PointReadOutcome,
    dedupe_walk,
    most_telling,
    plan_prunes,
)
from sync.wire.models import SessionView

T0 = "2026-01-01T00:00:00.000000Z"


def view(sid: str, updated: str = T0, title: str | None = "t") -> SessionView:
    return SessionView(sid, title, "2026-01-01T00:00:00.000000Z", updated, None, None)


def test_a_repeated_walk_item_keeps_the_latest_version() -> None:
    old = view("ses_a", "2026-01-01T00:00:00.000000Z", "old")
    new = view("ses_a", "2026-01-02T00:00:00.000000Z", "new")
    assert dedupe_walk([new, old])["ses_a"] == new
    assert dedupe_walk([old, new])["ses_a"] == new


def test_prune_only_on_404_refresh_on_200_keep_on_anything_else() -> None:
    fresh = view("ses_moved", "2026-02-01T00:00:00.000000Z")
    plan = plan_prunes(
        [
            PointRead("ses_deleted", PointReadOutcome.ABSENT, detail="deleted"),
            PointRead("ses_moved", PointReadOutcome.FOUND, view=fresh),
            PointRead("ses_503", PointReadOutcome.UNKNOWN, detail="503"),
            PointRead("ses_401", PointReadOutcome.UNKNOWN, detail="401"),
        ]
    )
    assert plan.prunes == ["ses_deleted"]
    assert plan.refreshes == [fresh]
    assert sorted(plan.kept) == ["ses_401", "ses_503"]


ids = st.sampled_from([f"ses_{i}" for i in range(12)])


@settings(max_examples=200, deadline=None)
@given(
    candidates=st.sets(ids),
    outcomes=st.lists(st.sampled_from(list(PointReadOutcome)), min_size=12, max_size=12),
)
def test_prunes_are_exactly_the_confirmed_absences_and_every_candidate_is_accounted_for(
    candidates: set[str], outcomes: list[PointReadOutcome]
) -> None:
    reads = [PointRead(sid, outcomes[int(sid[4:])], view=view(sid)) for sid in candidates]
    prunes = plan_prunes(reads)
    confirmed = {r.session_id for r in reads if r.outcome is PointReadOutcome.ABSENT}
    assert set(prunes.prunes) == confirmed
    assert set(prunes.prunes) | set(prunes.kept) | {v.id for v in prunes.refreshes} == candidates


def test_a_repeated_walk_item_with_the_same_updated_at_keeps_the_one_read_last() -> None:
    """A tie on `updated_at` goes to the item the walk gave later (the later answer)."""
    first = view("ses_a", T0, "first read")
    again = view("ses_a", T0, "read again")
    assert dedupe_walk([first, again])["ses_a"] == again


def test_a_point_read_refreshes_only_when_it_found_the_session() -> None:
    """Only a 200 (FOUND, with its view) refreshes a row; an inconclusive read that carries
    a view anyway, or a FOUND without one, keeps the row and concludes nothing."""
    stray = view("ses_unknown", "2026-02-01T00:00:00.000000Z")
    plan = plan_prunes(
        [
            PointRead("ses_unknown", PointReadOutcome.UNKNOWN, view=stray),
            PointRead("ses_found_empty", PointReadOutcome.FOUND, view=None),
        ]
    )
    assert plan.refreshes == []
    assert plan.prunes == []
    assert plan.kept == ["ses_unknown", "ses_found_empty"]


@settings(max_examples=200, deadline=None)
@given(
    candidates=st.sets(ids),
    outcomes=st.lists(st.sampled_from(list(PointReadOutcome)), min_size=12, max_size=12),
    with_view=st.lists(st.booleans(), min_size=12, max_size=12),
)
def test_every_candidate_lands_in_exactly_the_bucket_its_outcome_names(
    candidates: set[str], outcomes: list[PointReadOutcome], with_view: list[bool]
) -> None:
    reads = [
        PointRead(sid, outcomes[int(sid[4:])], view=view(sid) if with_view[int(sid[4:])] else None)
        for sid in sorted(candidates)
    ]
    plan = plan_prunes(reads)
    found = [r.session_id for r in reads if r.outcome is PointReadOutcome.FOUND and r.view]
    assert plan.prunes == [r.session_id for r in reads if r.outcome is PointReadOutcome.ABSENT]
    assert [v.id for v in plan.refreshes] == found
    assert plan.kept == [
        r.session_id
        for r in reads
        if r.outcome is not PointReadOutcome.ABSENT and r.session_id not in found
    ]


def _unauthenticated() -> SyncError:
    return Unauthenticated("The server no longer accepts this token.", status=401)


def _forbidden() -> SyncError:
    return Forbidden("This token is not allowed to read sessions.", status=403)


def _tls() -> SyncError:
    return CertificateError("The server's certificate could not be verified.")


def _server_error() -> SyncError:
    return ServerError("The server failed (500).", status=500)


def _unavailable() -> SyncError:
    return Unavailable("The server is unavailable right now (503).", status=503)


def _offline() -> SyncError:
    return ConnectionFailed("Cannot reach the server.")


#: From most to least telling: what the user must act on (a refused token, then a missing
#: scope or an untrusted certificate), then a server failure, then what usually passes by
#: itself (a 503, no connection).
TELLING_ORDER = [
    [_unauthenticated],
    [_forbidden, _tls],
    [_server_error],
    [_unavailable, _offline],
]


@pytest.mark.parametrize(
    ("better", "worse"),
    [
        (better, worse)
        for rank, group in enumerate(TELLING_ORDER)
        for better in group
        for later in TELLING_ORDER[rank + 1 :]
        for worse in later
    ],
    ids=lambda make: make.__name__.strip("_"),
)
def test_the_pass_shows_the_most_telling_error_of_its_inconclusive_point_reads(
    better: Callable[[], SyncError], worse: Callable[[], SyncError]
) -> None:
    shown, other = better(), worse()
    assert most_telling([other, shown]) is shown
    assert most_telling([shown, other]) is shown


@pytest.mark.parametrize("group", [g for g in TELLING_ORDER if len(g) > 1])
def test_errors_that_tell_as_much_show_the_first_one_met(
    group: list[Callable[[], SyncError]],
) -> None:
    errors = [make() for make in group]
    assert most_telling(errors) is errors[0]
    assert most_telling(list(reversed(errors))) is errors[-1]


def test_no_inconclusive_point_read_means_no_error_to_show() -> None:
    assert most_telling([]) is None
    only = _server_error()
    assert most_telling(iter([only])) is only
