"""`Mirror.apply` reports what it wrote as a delta a listener can apply without a re-read,
and `matches_filter` is `Mirror.rows(filter_text)`'s filter in Python."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sync import matches_filter
from sync.mirror import Mirror
from sync.models import SessionView

TITLES = ["Trip to Lisbon", "STRASSE", "Straße", "café", "Café", "CAFÉ", "e\u0301te\u0301", None]
TITLES += ["100% sure", "snake_case", "back\\slash", "ÅNGSTRÖM", "ǅemal", "ﬁle", ""]


def view(sid: str, updated: str, title: str | None = "t") -> SessionView:
    return SessionView(sid, title, "2026-01-01T00:00:00.000000Z", updated, None, None)


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[Mirror]:
    m = Mirror.open(tmp_path / "m.sqlite3")
    try:
        yield m
    finally:
        m.close()


def test_apply_carries_the_written_rows_and_the_previous_changing_seq(mirror: Mirror) -> None:
    a = view("ses_a", "2026-01-02T00:00:00.000000Z")
    first = mirror.apply([a])
    assert (first.rows, first.after) == ((a,), 0)
    assert mirror.last_change_seq == first.seq

    unchanged = mirror.apply([a])  # writes nothing: not a change, so no link in the chain
    assert unchanged.rows == () and unchanged.seq > first.seq
    assert mirror.last_change_seq == first.seq

    b = view("ses_b", "2026-01-03T00:00:00.000000Z")
    a2 = view("ses_a", "2026-01-04T00:00:00.000000Z", "new")
    second = mirror.apply([b, a2])
    assert second.after == first.seq
    assert set(second.rows) == {b, a2} and second.inserted == ["ses_b"]

    removal = mirror.apply(removals=["ses_b", "ses_missing"])
    assert (removal.rows, removal.removed, removal.after) == ((), ["ses_b"], second.seq)
    assert mirror.last_change_seq == removal.seq


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
