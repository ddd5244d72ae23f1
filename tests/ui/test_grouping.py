"""The sidebar's date sections, and headers that selection and the keyboard skip."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from app.loop import ConvergeEventLoop
from tests.ui.conftest import row
from ui.sidebar.grouping import group_rows, is_header, section_of
from ui.window.main_window import MainWindow

NOW = datetime(2026, 11, 30, 15, 0, tzinfo=UTC)


def _rows() -> list[object]:
    stamps = [
        ("ses_a", "2026-11-30T14:00:00.000000Z"),  # today
        ("ses_b", "2026-11-29T10:00:00.000000Z"),  # yesterday
        ("ses_c", "2026-11-25T10:00:00.000000Z"),  # previous 7 days
        ("ses_d", "2026-11-10T10:00:00.000000Z"),  # previous 30 days
        ("ses_e", "2026-10-15T10:00:00.000000Z"),  # October
        ("ses_f", "2025-08-01T10:00:00.000000Z"),  # August 2025
    ]
    return [row(i, f"Title {i}", updated_at=stamp) for i, stamp in stamps]


def test_rows_are_grouped_today_yesterday_7_days_30_days_then_months() -> None:
    grouped = group_rows(_rows(), NOW)  # type: ignore[arg-type]
    labels = [r.title if is_header(r) else r.id for r in grouped]
    assert labels == [
        "Today",
        "ses_a",
        "Yesterday",
        "ses_b",
        "Previous 7 days",
        "ses_c",
        "Previous 30 days",
        "ses_d",
        "October",
        "ses_e",
        "August 2025",
        "ses_f",
    ]
    assert group_rows([], NOW) == []


def test_headers_cannot_be_selected_and_the_arrow_keys_skip_them(
    loop: ConvergeEventLoop,
) -> None:
    window = MainWindow()
    window.show()
    window.model.replace_now(group_rows(_rows(), NOW))  # type: ignore[arg-type]
    QApplication.processEvents()
    header = window.model.index(0, 0)
    assert not header.flags() & Qt.ItemFlag.ItemIsSelectable
    window.list.setFocus()
    QApplication.processEvents()
    assert window.current_id() == "ses_a"  # focus lands on the first conversation
    QTest.keyClick(window.list, Qt.Key.Key_Down)
    assert window.current_id() == "ses_b"  # over the "Yesterday" header
    window.list.selectAll()
    assert window.selected_ids() == ["ses_a", "ses_b", "ses_c", "ses_d", "ses_e", "ses_f"]
    iface = QAccessible.queryAccessibleInterface(window.list)
    assert iface is not None
    first = iface.child(0)
    assert first is not None and first.text(QAccessible.Text.Name) == "Today"
    window.close()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.datetimes(min_value=datetime(1995, 1, 1), max_value=datetime(2026, 12, 31)),
        min_size=1,
        max_size=8,
    ),
    st.integers(-14, 14),
)
def test_a_rows_section_is_the_one_the_full_grouping_puts_it_in(
    moments: list[datetime], offset_hours: int
) -> None:
    """`section_of` (one row, cached per month) agrees with `group_rows` (all rows) for any
    time of any year and any local time zone, including month starts that fall on the
    previous day in UTC."""
    now = NOW.astimezone(timezone(timedelta(hours=offset_hours)))
    stamps = sorted({m.strftime("%Y-%m-%dT%H:%M:%S.%fZ") for m in moments}, reverse=True)
    rows = [row(f"ses_{i}", "t", updated_at=stamp) for i, stamp in enumerate(stamps)]
    header = None
    for shown in group_rows(rows, now):
        if is_header(shown):
            header = shown
        else:
            assert section_of(shown.updated_at, now) == header
