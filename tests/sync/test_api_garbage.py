"""An error answer must not leave reference cycles behind: a pass that point-reads 500
sessions deleted elsewhere gets 500 404s, and each cycle (the error, its traceback's frames,
the retry state, the response) waits for the garbage collector, which then frees tens of
thousands of objects in one young collection on the UI thread (95 ms measured in
`python -m bench ui`, churn phase)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import weakref
from collections import Counter
from collections.abc import Callable, Coroutine
from typing import Any

import httpx
import pytest

from sync.api.client import ApiClient
from sync.errors import NotFound, SyncError
from tests.conftest import LiveServer


def test_a_404_is_freed_by_reference_counting_alone(live_server: LiveServer) -> None:
    async def read_missing() -> weakref.ref[NotFound]:
        async with ApiClient(live_server.url, "dev-alice") as api:
            try:
                await api.get_session("ses_never_existed")
            except NotFound as exc:
                ref = weakref.ref(exc)
            else:
                raise AssertionError("expected a 404")
        return ref

    gc.collect()
    gc.disable()
    try:
        ref = asyncio.run(read_missing())
        assert ref() is None, "the NotFound is kept alive by a reference cycle"
    finally:
        gc.enable()


def _cyclic_garbage_of(scenario: Callable[[], Coroutine[Any, Any, None]]) -> Counter[str]:
    """Run `scenario` with the collector off, then count by type what only a collection
    could free (`gc.DEBUG_SAVEALL` keeps it in `gc.garbage` to be looked at)."""
    loop = asyncio.new_event_loop()
    try:
        gc.collect()
        gc.disable()
        loop.run_until_complete(scenario())
    finally:
        loop.close()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        found = Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.garbage)
    finally:
        gc.garbage.clear()
        gc.set_debug(0)
        gc.enable()
    return found


def _ours_or_the_retrys(found: Counter[str]) -> dict[str, int]:
    """The request's own objects: our errors and answers, httpx's responses, the retry
    library's state. (The event loop's and the transport's own bookkeeping are not.)"""
    mine = ("sync.", "tenacity.", "httpx.")
    return {name: n for name, n in found.items() if name.startswith(mine)}


@pytest.mark.parametrize("outcome", ["succeeds", "fails"])
def test_a_retried_request_leaves_no_reference_cycle(outcome: str) -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.method)
        if outcome == "fails" or len(calls) < 3:
            return httpx.Response(503, json={"error": {"code": "unavailable", "message": "x"}})
        return httpx.Response(200, json={"detail": "not a session"})

    api = ApiClient(
        "http://test",
        "tok",
        transport=httpx.MockTransport(handler),
        retry_attempts=3,
        retry_initial_wait=0.001,
        retry_max_wait=0.002,
    )

    async def scenario() -> None:
        async with api:
            with contextlib.suppress(SyncError):
                await api.request("GET", "/v1/sessions/ses_1")

    assert _ours_or_the_retrys(_cyclic_garbage_of(scenario)) == {}
    assert len(calls) == 3
