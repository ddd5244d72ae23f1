"""The server's clock as seen from here: the offset from the `Date` header of its answers.

Relative dates ("2 min ago", "Yesterday") compare the server's timestamps with "now". With
the machine's clock two days behind, a day-old row is in the future and was clamped to
"Just now"; with it ahead, fresh rows were "2 days ago". The server set those timestamps,
so its own clock is the one to compare them with. Every answer carries `Date` (RFC 9110
§6.6.1, one-second resolution); the offset is taken from the last answer that had a valid
one.

A `Date` is content from outside: longer than `MAX_HEADER` characters, not an HTTP date,
or without a UTC zone, it is ignored; an offset beyond `MAX_OFFSET` is clamped to it, so a
lying server moves the wording of dates by at most a week and nothing else (no ordering,
no deadline and no lease reads this clock). Offsets within `NOISE` count as none: the
header's truncation to whole seconds and the round trip are not skew.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC
from email.utils import parsedate_to_datetime

MAX_OFFSET = 7 * 24 * 3600.0  # seconds; decision 0102
NOISE = 2.0  # seconds
MAX_HEADER = 64  # characters; an IMF-fixdate is 29


class ServerClock:
    """`offset`: seconds to add to the local clock to read the server's (0 until known)."""

    def __init__(self, local: Callable[[], float] = time.time) -> None:
        self.local = local
        self.offset = 0.0

    def observe(self, date: str | None) -> None:
        """Take the offset from one answer's `Date` header (received now)."""
        server = parse_http_date(date)
        if server is None:
            return
        # The header truncates to the second: the server's instant is half a second later
        # on average.
        offset = server + 0.5 - self.local()
        if abs(offset) < NOISE:
            offset = 0.0
        self.offset = max(-MAX_OFFSET, min(MAX_OFFSET, offset))


def parse_http_date(value: str | None) -> float | None:
    """POSIX seconds of an HTTP `Date` (any of RFC 9110's three forms), or None when it is
    missing, oversized, malformed or not in UTC."""
    if not value or len(value) > MAX_HEADER:
        return None
    try:
        parsed = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if parsed.tzinfo is None or parsed.utcoffset() != UTC.utcoffset(None):
        return None  # "-0000" (no zone) or a local zone: not an HTTP date
    try:
        return parsed.timestamp()
    except (OverflowError, OSError, ValueError):
        return None
