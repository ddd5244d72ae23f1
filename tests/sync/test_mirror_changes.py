"""The mirror's change sequence: every write that changes rows numbers itself in the file,
and `Mirror.changes_since(n)` answers what changed after n, whoever wrote it (decision
0209); `matches_filter` is `Mirror.rows(filter_text)`'s filter in Python."""

from __future__ import annotations

import sqlite3

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sync import matches_filter
from sync.mirror.store import Mirror
from sync.wire.models import SessionView

TITLES = ["Trip to Lisbon", "STRASSE", "Straße", "café", "Café", "CAFÉ", "e\u0301te\u0301", None]
TITLES += ["100% sure", "snake_case", "back\\slash", "ÅNGSTRÖM", "ǅemal", "ﬁle", ""]


def view(sid: str, updated: str, title: str | None = "t") -> SessionView:
    return SessionView(sid, title, "2026-01-01T00:00:00.000000Z", updated, None, None)


def test_each_changing_write_takes_the_next_number_and_a_write_that_changes_nothing_none(
    mirror: Mirror,
) -> None:
    a = view("ses_a", "2026-01-02T00:00:00.000000Z")
    first = mirror.apply([a])
    assert first.seq == 1
    assert mirror.apply([a]).seq == 0  # unchanged: no number taken
    assert mirror.apply(removals=["ses_missing"]).seq == 0
    b = view("ses_b", "2026-01-03T00:00:00.000000Z")
    a2 = view("ses_a", "2026-01-04T00:00:00.000000Z", "new")
    second = mirror.apply([b, a2])
    assert (second.seq, second.inserted, second.updated) == (2, ["ses_b"], ["ses_a"])
    assert mirror.apply(removals=["ses_b"]).seq == 3


def test_changes_since_a_number_are_the_rows_and_removals_numbered_above_it(
    mirror: Mirror,
) -> None:
    a, b = (
        view("ses_a", "2026-01-02T00:00:00.000000Z"),
        view("ses_b", "2026-01-03T00:00:00.000000Z"),
    )
    mirror.apply([a, b])
    a2 = view("ses_a", "2026-01-04T00:00:00.000000Z", "moved")
    mirror.apply([a2])
    mirror.apply(removals=["ses_b"])
    since_one = mirror.changes_since(1)
    assert (since_one.seq, since_one.rows, since_one.removed, since_one.whole) == (
        3,
        [a2],
        ["ses_b"],
        False,
    )
    assert mirror.changes_since(3).rows == [] and mirror.changes_since(3).removed == []
    whole = mirror.changes_since(None)
    assert (whole.seq, whole.rows, whole.whole) == (3, [a2], True)
    assert mirror.changes_since(1, limit=1).whole  # two changes: more than asked for
    assert mirror.changes_since(7).whole  # a number this file never reached: read whole


def test_changes_since_follow_the_title_filter_as_rows_does(mirror: Mirror) -> None:
    mirror.apply([view("ses_a", "2026-01-02T00:00:00.000000Z", "Lisbon trip")])
    renamed = view("ses_a", "2026-01-03T00:00:00.000000Z", "Porto trip")
    mirror.apply([renamed])
    lisbon = mirror.changes_since(1, "lisbon")
    assert (lisbon.rows, lisbon.removed) == ([], ["ses_a"])  # it left the filtered view
    assert mirror.changes_since(1, "porto").rows == [renamed]


def test_a_row_written_again_after_its_removal_is_a_change_not_a_removal(mirror: Mirror) -> None:
    a = view("ses_a", "2026-01-02T00:00:00.000000Z")
    mirror.apply([a])
    mirror.apply(removals=["ses_a"])
    back = view("ses_a", "2026-01-05T00:00:00.000000Z", "back")
    mirror.apply([back])
    since = mirror.changes_since(1)
    assert (since.rows, since.removed) == ([back], [])


def test_a_write_by_another_mirror_object_on_the_same_file_is_numbered_after_ours(
    mirror: Mirror,
) -> None:
    mirror.apply([view("ses_a", "2026-01-02T00:00:00.000000Z")])
    other = Mirror.open(mirror.path)  # another window or `converge sync` in a terminal
    try:
        theirs = other.apply([view("ses_b", "2026-01-03T00:00:00.000000Z")])
    finally:
        other.close()
    ours = mirror.apply(removals=["ses_a"])
    assert (theirs.seq, ours.seq) == (2, 3)
    since = mirror.changes_since(1)
    assert ([r.id for r in since.rows], since.removed) == (["ses_b"], ["ses_a"])


def test_a_reader_older_than_the_forgotten_removals_is_told_to_read_whole(
    mirror: Mirror,
) -> None:
    mirror.apply([view(f"ses_{n}", f"2026-01-0{n}T00:00:00.000000Z") for n in (1, 2, 3)])
    mirror.apply(removals=["ses_1"])  # number 2
    with sqlite3.connect(mirror.path) as conn:  # a day passes for that removal
        conn.execute("UPDATE removed_sessions SET removed_at = 0")
    conn.close()
    mirror.apply(removals=["ses_2"])  # number 3; forgets the removal numbered 2
    assert mirror.changes_since(1).whole  # it might not learn that ses_1 left
    since_two = mirror.changes_since(2)
    assert (since_two.whole, since_two.removed) == (False, ["ses_2"])
    assert [r.id for r in mirror.changes_since(1).rows] == ["ses_3"]


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.sampled_from(["", " "]) | st.text(alphabet="aAsSßeÉé\u0301%_\\ŁcfﬁǅDZ0_", max_size=3))
def test_matches_filter_agrees_with_the_mirrors_filtered_read(mirror: Mirror, needle: str) -> None:
    if mirror.count() == 0:
        stamp = "2026-01-02T00:00:00.000000Z"
        mirror.apply([view(f"ses_{i}_Aß%_", stamp, t) for i, t in enumerate(TITLES)])
    everything = mirror.rows()
    expected = [r.id for r in everything if matches_filter(r.id, r.title, needle)]
    assert [r.id for r in mirror.rows(needle)] == expected
