"""Relative dates on the server's clock: the offset comes from the
`Date` of the server's answers, bounded, and a garbage or lying `Date` cannot take over."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from sync.api.client import ApiClient
from sync.api.server_clock import MAX_OFFSET, ServerClock, parse_http_date
from tests.reliability.test_one_clock import faketime_env
from tests.sync.helpers import run

ROOT = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from sync.engine import SyncEngine
    from sync.profile.profile import Profile
    from sync.reconcile.reconciler import TriggerReason
    from ui.sidebar.relative_time import relative_time, set_server_offset

    async def main() -> None:
        url, folder, day_old = sys.argv[1:4]
        print("before:", relative_time(day_old))
        profile = Profile.load(Path(folder), server=url, token="dev-alice", environ={})
        engine = await SyncEngine.open(profile)
        try:
            await engine.reconcile(TriggerReason.CONNECT)
            set_server_offset(engine.server_clock_offset)  # what the window's controller does
        finally:
            await engine.close()
        print("after:", relative_time(day_old))

    asyncio.run(main())
    """
)


def test_a_day_old_row_says_yesterday_not_just_now_when_the_machine_is_two_days_behind(
    live_server: Any, tmp_path: Path
) -> None:
    """A real client process under libfaketime, two days behind a real server: before any
    answer the row is in its future ("Just now"); after one pass it is "Yesterday"."""
    env = {**os.environ, **faketime_env("-2d"), "PYTHONPATH": str(ROOT)}
    # At noon UTC minus a day (far from the local midnight in the usual time zones) so that
    # "a day ago" is yesterday whatever the hour the test runs at.
    now = datetime.now(UTC)
    day_old = (now - timedelta(hours=26 if now.hour >= 2 else 24)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    done = subprocess.run(
        [sys.executable, "-c", CHILD, live_server.url, str(tmp_path / "p"), day_old],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "before: Just now" in done.stdout  # the local clock really is two days behind
    assert "after: Yesterday" in done.stdout, done.stdout


@pytest.mark.parametrize(
    "header",
    [
        "garbage",
        "",
        "Mon, 99 Foo 2026 99:99:99 GMT",
        "Tue, 01 Dec 2026 21:40:00 -0000",  # no zone: not an HTTP date
        "Tue, 01 Dec 2026 21:40:00 +0200",  # a local zone: not an HTTP date
        "Tue, 01 Dec 2026 21:40:00 GMT" + " " * 100,  # oversized
        "Fri, 31 Dec 99999 23:59:59 GMT",
    ],
)
def test_a_garbage_date_header_is_ignored(header: str) -> None:
    assert parse_http_date(header) is None
    clock = ServerClock()
    clock.offset = 42.0
    clock.observe(header)
    assert clock.offset == 42.0  # the last good offset stays


def _answering(date: str) -> httpx.MockTransport:
    """A hostile server: a correct empty index page with the given `Date`."""

    def handler(request: httpx.Request) -> httpx.Response:
        body = b'{"items": [], "next_cursor": null}'
        return httpx.Response(200, content=body, headers={"Date": date, "ETag": '"e"'})

    return httpx.MockTransport(handler)


def test_a_server_that_lies_about_its_clock_moves_dates_by_at_most_a_week() -> None:
    async def go(date: str) -> ServerClock:
        api = ApiClient("http://test", "t", transport=_answering(date))
        try:
            await api.list_sessions()
        finally:
            await api.aclose()
        return api.clock

    years_ahead = run(go("Sat, 01 Jan 2100 00:00:00 GMT"))
    assert years_ahead.offset == MAX_OFFSET
    years_behind = run(go("Thu, 01 Jan 1970 00:00:00 GMT"))
    assert years_behind.offset == -MAX_OFFSET


def test_an_offset_within_the_headers_resolution_is_no_skew_and_a_real_one_is_kept(
    live_server: Any,
) -> None:
    """Against a real server: the machine's own clock gives no offset; a clock injected
    two days behind gives two days (within the header's second and the round trip)."""

    async def go(local_shift: float) -> float:
        api = ApiClient(live_server.url, "dev-alice")
        api.clock.local = lambda: datetime.now(UTC).timestamp() + local_shift
        try:
            await api.list_sessions(limit=1)
        finally:
            await api.aclose()
        return api.clock.offset

    assert run(go(0.0)) == 0.0
    assert abs(run(go(-2 * 86400.0)) - 2 * 86400.0) < 3.0


def test_no_answer_means_no_offset() -> None:
    clock = ServerClock(local=lambda: 1000.0)
    assert clock.offset == 0.0
