"""The sidebar's relative times."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ui.relative_time import parse_timestamp, relative_time

NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@pytest.mark.parametrize(
    ("ago", "words"),
    [
        (timedelta(seconds=10), "Just now"),
        (timedelta(minutes=2, seconds=5), "2 min ago"),
        (timedelta(minutes=59), "59 min ago"),
    ],
)
def test_recent_activity_reads_in_minutes(ago: timedelta, words: str) -> None:
    assert relative_time(stamp(NOW - ago), NOW) == words


def test_yesterday_and_older_dates() -> None:
    local_now = NOW.astimezone()
    yesterday = (local_now - timedelta(days=1)).replace(hour=12)
    assert relative_time(stamp(yesterday.astimezone(UTC)), NOW) == "Yesterday"
    assert relative_time("2026-03-04T10:00:00.000000Z", NOW) == "4 Mar"
    assert relative_time("2024-03-04T10:00:00.000000Z", NOW) == "4 Mar 2024"


def test_a_malformed_timestamp_reads_as_nothing() -> None:
    assert parse_timestamp("yesterday-ish") is None
    assert relative_time("yesterday-ish", NOW) == ""
