"""The page a watch brings is the pass's first page (decision 0195): a change costs each
watching device one request fewer, and the server one page fewer; a page that might be older
than something the client has already taken is never used."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sync.events import TriggerReason
from sync.reconcile.primed import PRIMED_SECONDS, PrimedPage
from sync.wire.models import SessionPage
from tests.sync.helpers import Server, device, run
from tests.sync.test_watch_live import Inserts, _held, _until


def _first_pages(transport: Any) -> int:
    """Unheld first-page reads of the index (no cursor, no `Prefer: wait`)."""
    return sum(
        1
        for request in transport.requests
        if request.method == "GET"
        and request.url.path == "/v1/sessions"
        and "cursor" not in request.url.params
        and "prefer" not in request.headers
    )


def test_a_watch_wake_walks_from_the_page_the_watch_brought(
    live_server: Any, tmp_path: Path
) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            for _ in range(7):
                await server.create()
            async with device(live_server.url, tmp_path / "a", page_limit=5) as (a, transport):
                await a.reconcile(TriggerReason.CONNECT)
                a.start_watch()
                await _until(lambda: _held(live_server) == 1, "the watch to be held")
                before = _first_pages(transport)
                inserts = Inserts(a)
                made = await server.create()
                event = await inserts.of(made.id)
                assert event.report is not None and event.report.reason is TriggerReason.WATCH
                assert _first_pages(transport) == before  # the watch's page, not a new read
                assert a.api.primed.used == 1
                watch = next(r for r in transport.requests if "prefer" in r.headers)
                assert watch.url.params["limit"] == "5"  # the walk's page size
                assert (await a.rows())[0].id == made.id

    run(go())


def _page(etag: str = '"v2"') -> SessionPage:
    return SessionPage(items=[], next_cursor=None, etag=etag)


def test_a_page_is_kept_only_when_nothing_else_was_asked_while_the_watch_was_held() -> None:
    primed = PrimedPage(clock=lambda: 0.0)
    mark = primed.mark()
    primed.begin()  # e.g. a point read that may prune: its answer may be newer
    primed.end()
    primed.keep(mark, 20, _page())
    assert primed.take(20) is None

    primed.begin()  # in flight when the watch is sent, still in flight when it answers
    mark = primed.mark()
    primed.keep(mark, 20, _page())
    primed.end()
    assert primed.take(20) is None


def test_a_kept_page_serves_one_first_page_of_its_size_while_fresh() -> None:
    now = [0.0]
    primed = PrimedPage(clock=lambda: now[0])
    primed.keep(primed.mark(), 20, _page())
    assert primed.take(200) is None  # another page size: asked again
    primed.keep(primed.mark(), 20, _page())
    assert primed.take(20) is not None
    assert primed.take(20) is None  # once

    primed.keep(primed.mark(), 20, _page())
    primed.begin()  # any request begun afterwards drops it
    primed.end()
    assert primed.take(20) is None

    primed.keep(primed.mark(), 20, _page())
    now[0] += PRIMED_SECONDS + 0.1
    assert primed.take(20) is None  # too old
    assert primed.used == 1


def test_a_malformed_watch_page_is_still_a_change_and_is_not_kept() -> None:
    import httpx

    from sync.api.client import ApiClient

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"ETag": '"v9"'}, content=b'{"items": "no"}')

    async def go() -> None:
        async with ApiClient(
            "http://converge.invalid", "t", transport=httpx.MockTransport(answer)
        ) as api:
            got = await api.watch_sessions('"v1"', 20, limit=5)
            assert got.changed and got.etag == '"v9"'
            assert api.primed.take(5) is None  # the pass asks, and names the fault

    run(go())
