"""Human wording of a contract timestamp relative to now: "2 min ago", "Yesterday", "12 Nov".

Evaluated at paint time only for the visible rows, so a long sidebar never formats every
row's date. The words go through Qt's translator ("vor 2 Std.") and the dates and numbers
through the default `QLocale` (month and day names, Arabic-Indic digits), set at start-up by
`app.translations.install`.

"Now" is the server's clock when it is known (`set_server_offset`, fed by the controller
from `SyncEngine.server_clock_offset`): the timestamps are the server's, and a machine
whose clock is two days behind said "Just now" of day-old rows. The UI never reads a
`Date` header itself; the engine has already bounded the offset.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from functools import lru_cache

from PySide6.QtCore import QCoreApplication, QDate, QDateTime, QLocale, QTime

_server_offset = timedelta(0)


def _date(day: date, pattern: str) -> str:
    """`day` in the default locale with a `QLocale` date pattern."""
    return QLocale().toString(QDate(day.year, day.month, day.day), pattern)


def _moment(moment: datetime, pattern: str) -> str:
    """`moment` (local) in the default locale with a `QLocale` date and time pattern."""
    when = QDateTime(
        QDate(moment.year, moment.month, moment.day), QTime(moment.hour, moment.minute)
    )
    return QLocale().toString(when, pattern)


@lru_cache(maxsize=4096)
def parse_timestamp(value: str) -> datetime | None:
    """Parse `YYYY-MM-DDTHH:MM:SS.ffffffZ` (CONTRACT §1) into an aware UTC datetime."""
    try:
        text = value[:-1] + "+00:00" if value.endswith("Z") else value
        parsed = datetime.fromisoformat(text)
    except (ValueError, TypeError):
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


def set_server_offset(seconds: float) -> None:
    """How far the server's clock is ahead of this machine's (negative: behind)."""
    global _server_offset
    _server_offset = timedelta(seconds=seconds)


def server_now() -> datetime:
    """The current time on the server's clock, as far as the engine knows it (UTC)."""
    return datetime.now(UTC) + _server_offset


def relative_time(value: str, now: datetime | None = None) -> str:
    """`value` in the sidebar's words, in the local time zone for day boundaries; `now`
    defaults to `server_now()`."""
    moment = parse_timestamp(value)
    if moment is None:
        return ""
    now = now or server_now()
    delta = now - moment
    if delta < timedelta(minutes=1):
        return QCoreApplication.translate("RelativeTime", "Just now")
    if delta < timedelta(hours=1):
        return QCoreApplication.translate(
            "RelativeTime", "%Ln min ago", None, int(delta.total_seconds() // 60)
        )
    local_now = now.astimezone()
    local = moment.astimezone(local_now.tzinfo)
    days = (local_now.date() - local.date()).days
    if days <= 0:
        hours = int(delta.total_seconds() // 3600)
        return QCoreApplication.translate("RelativeTime", "%Ln h ago", None, hours)
    return calendar_words(local.date(), local_now.date())


@lru_cache(maxsize=4096)
def calendar_words(day: date, today: date) -> str:
    """A day before today in the sidebar's words: "Yesterday", a weekday, "12 Nov".

    Remembered: formatting through `QLocale` is a large share of a sidebar row's paint, and
    the rows on screen keep their days between paints. `forget_words` empties it when the
    language changes (`app.translations`)."""
    days = (today - day).days
    if days == 1:
        return QCoreApplication.translate("RelativeTime", "Yesterday")
    if days < 7:
        return QLocale().standaloneDayName(day.weekday() + 1, QLocale.FormatType.LongFormat)
    if day.year == today.year:
        # For translators: a QLocale date pattern: d day, MMM short month name
        return _date(day, QCoreApplication.translate("RelativeTime", "d MMM"))
    # For translators: a QLocale date pattern: d day, MMM short month name, yyyy year
    return _date(day, QCoreApplication.translate("RelativeTime", "d MMM yyyy"))


def forget_words() -> None:
    """The translators or the default locale changed: word every day afresh."""
    calendar_words.cache_clear()


def full_time(value: str) -> str:
    """A precise local date and time, for tooltips and the conversation header."""
    moment = parse_timestamp(value)
    if moment is None:
        return value
    # For translators: a QLocale date and time pattern (d day, MMM month, yyyy year, HH:mm time)
    return _moment(
        moment.astimezone(), QCoreApplication.translate("RelativeTime", "d MMM yyyy, HH:mm")
    )
