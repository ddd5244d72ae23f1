"""Date sections for the sidebar: Today, Yesterday, Previous 7 days, Previous 30 days, then
one per month ("October", or "October 2025" in an earlier year).

The labels are translated and the month names come from the default `QLocale` (set at
start-up). The rows arrive in the mirror's order (`updated_at` descending), so a
section's start is found by a binary search on the timestamps (contract timestamps are
fixed-width UTC strings and compare as text): a long sidebar gets its headers in a few
dozen comparisons plus one list copy, never a parse of every date.

A header is a row like the others for the model and the diff (a stable id per section), but
it cannot be selected or made current, so selection, Delete and the arrow keys skip it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from PySide6.QtCore import QCoreApplication, QDate, QLocale

from ui.sidebar.relative_time import server_now
from ui.sidebar.row import HEADER_PREFIX, SidebarRow

__all__ = [
    "HEADER_PREFIX",
    "SectionHeader",
    "group_rows",
    "is_header",
    "section_of",
    "sections",
]


@dataclass(frozen=True)
class SectionHeader:
    """A section's header row (shaped like a mirror row for the model and the diff)."""

    id: str
    title: str | None
    created_at: str = ""
    updated_at: str = ""
    active_run_id: str | None = None
    last_run_id: str | None = None
    #: Where the header sorts in the mirror's order (`updated_at` DESC, `id` DESC): as the
    #: key (`before`, ""), i.e. after every row of newer sections and before its own rows.
    before: str = "\uffff"


def is_header(row: object) -> bool:
    return isinstance(row, SectionHeader)


def _stamp(moment: datetime) -> str:
    """A local moment as a contract timestamp (UTC, microseconds, `Z`)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def sections(now: datetime, oldest: str) -> list[tuple[str, str, str]]:
    """(key, label, start) for every section from now back to `oldest`, newest first; a
    row belongs to the first section whose start is at or before its `updated_at`."""
    local = now  # an aware moment in the zone whose days count (the caller's local zone)
    midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
    out = [
        ("today", QCoreApplication.translate("Grouping", "Today"), _stamp(midnight)),
        (
            "yesterday",
            QCoreApplication.translate("Grouping", "Yesterday"),
            _stamp(midnight - timedelta(days=1)),
        ),
        (
            "week",
            QCoreApplication.translate("Grouping", "Previous %Ln days", None, 7),
            _stamp(midnight - timedelta(days=7)),
        ),
        (
            "month",
            QCoreApplication.translate("Grouping", "Previous %Ln days", None, 30),
            _stamp(midnight - timedelta(days=30)),
        ),
    ]
    locale = QLocale()
    # Months, from the one holding "30 days ago" backwards, until the oldest row.
    cursor = (midnight - timedelta(days=30)).replace(day=1)
    while True:
        start = _stamp(cursor)
        month = QDate(cursor.year, cursor.month, 1)
        # For translators: QLocale date patterns for a month's header (MMMM: the month's name)
        label = locale.toString(
            month,
            QCoreApplication.translate("Grouping", "MMMM")
            if cursor.year == local.year
            else QCoreApplication.translate("Grouping", "MMMM yyyy"),
        )
        out.append((f"{cursor.year:04d}-{cursor.month:02d}", label, start))
        if start <= oldest or cursor.year < 1971:
            break
        previous = cursor - timedelta(days=1)
        cursor = previous.replace(day=1)
    out.append(("older", QCoreApplication.translate("Grouping", "Older"), ""))
    return out


def _first_before(rows: Sequence[SidebarRow], start: str, lo: int) -> int:
    """The first index >= lo whose `updated_at` is before `start` (rows are descending)."""
    hi = len(rows)
    while lo < hi:
        mid = (lo + hi) // 2
        if rows[mid].updated_at >= start:
            lo = mid + 1
        else:
            hi = mid
    return lo


def group_rows(rows: Sequence[SidebarRow], now: datetime | None = None) -> list[SidebarRow]:
    """`rows` with a header before each non-empty section; days are counted in `now`'s
    time zone (the local one by default)."""
    now = now or server_now().astimezone()
    if not rows:
        return []
    out: list[SidebarRow] = []
    position = 0
    before = "\uffff"
    for key, label, start in sections(now, rows[-1].updated_at):
        end = _first_before(rows, start, position) if start else len(rows)
        if end > position:
            out.append(SectionHeader(HEADER_PREFIX + key, label, updated_at=start, before=before))
            out.extend(rows[position:end])
            position = end
        if position >= len(rows):
            break
        before = start
    return out


@functools.lru_cache(maxsize=64)
def _sections_to(
    now: datetime, local: str, month: str, language: str
) -> tuple[tuple[str, str, str], ...]:
    """`sections` from `now` back past the UTC month `month` ("2026-03"), once per pair: a
    delta asks for a row's section once or twice per row, and building the list each time
    (a `strftime` per month) would be most of the UI thread's work applying a large delta.
    Not all the way back to 1970 at once: that first call alone would be a long step.
    `local` (`now.isoformat()`) is part of the key because aware datetimes of the same
    instant in two zones are equal, and their days are not; `language` because the labels
    are in it."""
    return tuple(sections(now, month))


def section_of(updated_at: str, now: datetime) -> SectionHeader:
    """The header of the section a row with this `updated_at` belongs to, as `group_rows`
    builds it with the same `now`."""
    before = "\uffff"
    for key, label, start in _sections_to(now, now.isoformat(), updated_at[:7], QLocale().name()):
        if start <= updated_at:
            return SectionHeader(HEADER_PREFIX + key, label, updated_at=start, before=before)
        before = start
    raise AssertionError("the last section starts at the empty string")
