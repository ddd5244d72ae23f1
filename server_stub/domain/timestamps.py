"""Timestamps in the contract's one textual form, so that string order is time order.

Every timestamp the server stores or writes is `YYYY-MM-DDTHH:MM:SS.ffffffZ` (UTC, six
fractional digits, a `Z`). Storing the text itself (rather than a native datetime) keeps
keyset comparisons identical on SQLite and PostgreSQL.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

_PATTERN = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")


def utcnow() -> datetime:
    """The current time, timezone-aware in UTC."""
    return datetime.now(UTC)


def fmt(dt: datetime) -> str:
    """Format `dt` (naive = UTC) as `YYYY-MM-DDTHH:MM:SS.ffffffZ`."""
    if dt.tzinfo is not None:
        dt = dt.astimezone(UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond:06d}Z"


def now() -> str:
    """The current time in the contract's form."""
    return fmt(utcnow())


def is_valid(text: str) -> bool:
    """True when `text` is exactly in the contract's form and a real date."""
    if not _PATTERN.match(text):
        return False
    try:
        parse(text)
    except ValueError:
        return False
    return True


def parse(text: str) -> datetime:
    """Parse the contract's form; raises ValueError on anything else."""
    if not _PATTERN.match(text):
        raise ValueError(f"not a contract timestamp: {text!r}")
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def age_seconds(text: str) -> float:
    """Seconds from the timestamp `text` until now (0 for a malformed one)."""
    try:
        return max(0.0, (utcnow() - parse(text)).total_seconds())
    except ValueError:
        return 0.0
