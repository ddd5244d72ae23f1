"""One request to the server, bounded and retried where safe: what `ApiClient` sends through.

Each exchange is streamed and read within its bounds (`sync.api.body`: a byte cap per
answer kind; here: a total deadline for connect, headers and body together, so a body that
trickles a byte every few seconds ends anyway). Retries (a plain loop, exponential backoff
with jitter) apply only to idempotent methods (GET, DELETE: the contract makes DELETE
idempotent through its tombstone) and only to failures that say nothing happened: a
connection that was never established, or a 429 or 503 whose `Retry-After` is short and
ends before the pass must (`sync.api.bounds.remaining`); a 503 without one waits the normal
backoff (CONTRACT §10.2: "the server is having trouble", retried, not a hard error). A
POST is never retried; a read error after the request was sent is never retried here (the
caller decides: the reconciler keeps rows, the delete service says nothing was confirmed).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Mapping
from typing import Any

import httpx

from sync.api.body import Answer, read_capped
from sync.api.bounds import Bounds, remaining
from sync.api.failures import error_from_response, network_error
from sync.api.server_clock import ServerClock
from sync.errors import (
    ApiError,
    ConnectionFailed,
    RateLimited,
    ResponseTooSlow,
    Unavailable,
)

log = logging.getLogger(__name__)

IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})


class _NotSent(Exception):
    """Internal: the connection was never established, so the request had no effect."""


def backoff(attempt_number: int, initial: float, most: float) -> float:
    """Seconds before the next attempt: `initial` doubled per attempt, plus up to `initial`
    of jitter (so clients that failed together do not retry together), at most `most`."""
    return min(most, initial * 2.0 ** (attempt_number - 1) + random.uniform(0, initial))


class Requester:
    """Bounded, retried requests on one `httpx.AsyncClient` (owned by `ApiClient`)."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        base_url: str,
        bounds: Bounds,
        *,
        retry_attempts: int,
        retry_initial_wait: float,
        retry_max_wait: float,
        clock: ServerClock | None = None,
    ) -> None:
        self._client = client
        #: The server's clock, from the `Date` of every answer (relative dates read it).
        self.clock = clock if clock is not None else ServerClock()
        self.base_url = base_url
        self.bounds = bounds
        self._retry_attempts = max(1, retry_attempts)
        self._retry_initial_wait = retry_initial_wait
        self._retry_max_wait = retry_max_wait

    def _too_slow(self, method: str, path: str, seconds: float) -> ResponseTooSlow:
        log.info("%s %s: no whole answer within %.0f s", method, path, seconds)
        return ResponseTooSlow(
            f"The server at {self.base_url} did not send its whole answer within "
            f"{seconds:.0f} s; the request was abandoned."
        )

    async def _send_once(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None,
        json_body: Any,
        headers: Mapping[str, str] | None,
        timeout: httpx.Timeout | None,
        ok: tuple[int, ...],
        cap: int,
        deadline: float,
    ) -> Answer:
        """One exchange, streamed: the body read up to `cap` (an error's up to the error
        cap), the whole of it (connect, headers, body) within `deadline` seconds."""
        request = self._client.build_request(
            method,
            path,
            params=params,
            json=json_body,
            headers=headers,
            timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT,
        )
        try:
            async with asyncio.timeout(deadline):
                response = await self._client.send(request, stream=True)
                self.clock.observe(response.headers.get("Date"))
                try:
                    success = response.status_code in ok
                    body = await read_capped(
                        response,
                        cap if success else self.bounds.error_body_bytes,
                        hint_only=not success,
                    )
                finally:
                    await response.aclose()
                    # httpx's response and the stream wrapping it refer to each other
                    # (`BoundAsyncStream`); read and closed, the stream is let go, so the
                    # exchange is freed by reference counting, not by the collector.
                    response.stream = httpx.ByteStream(b"")
        except TimeoutError as exc:
            raise self._too_slow(method, path, deadline) from exc
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
            raise _NotSent(exc) from exc
        except httpx.HTTPError as exc:
            raise network_error(exc, self.base_url, method, path) from exc
        return Answer(response.status_code, response.headers, body, method, request.url.path)

    def _may_wait(self, wait: float | None) -> bool:
        """A 429's or 503's `Retry-After` is waited out only when it is short and ends
        before the pass must (`sync.api.bounds.remaining`); otherwise the error reaches the
        caller at once (the user is told to come back; the engine tries again later)."""
        if wait is None:
            return True  # the backoff's own short wait
        left = remaining()
        return wait <= self.bounds.retry_after_seconds and (left is None or wait < left)

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json_body: Any = None,
        headers: Mapping[str, str] | None = None,
        ok: tuple[int, ...] = (200,),
        has_cursor: bool = False,
        timeout: httpx.Timeout | None = None,
        cap: int | None = None,
        deadline: float | None = None,
    ) -> Answer:
        """Send one request (with retries where safe); return the answer if its status is
        in `ok`, else raise the mapped error. `cap`: the body's byte cap (default: one
        resource's); `deadline`: the request's total seconds (default: `Bounds`)."""
        method = method.upper()
        idempotent = method in IDEMPOTENT_METHODS
        body_cap = cap if cap is not None else self.bounds.view_bytes
        total = deadline if deadline is not None else self.bounds.request_seconds

        def retryable(exc: BaseException) -> bool:
            if not idempotent:
                return False
            if isinstance(exc, (RateLimited, Unavailable)):
                return self._may_wait(exc.retry_after)
            return isinstance(exc, _NotSent)

        def wait(exc: ApiError | _NotSent, attempt_number: int) -> float:
            if isinstance(exc, (RateLimited, Unavailable)) and exc.retry_after is not None:
                return exc.retry_after
            return backoff(attempt_number, self._retry_initial_wait, self._retry_max_wait)

        async def attempt() -> Answer:
            answer = await self._send_once(
                method,
                path,
                params=params,
                json_body=json_body,
                headers=headers,
                timeout=timeout,
                ok=ok,
                cap=body_cap,
                deadline=total,
            )
            if answer.status in ok:
                return answer
            raise error_from_response(answer, self.base_url, has_cursor=has_cursor)

        # A plain loop, not a retry library's: tenacity's retrying object and its call
        # state refer to each other, and the state holds the last outcome (the error, its
        # traceback's frames, the response), so every request left a cycle for the garbage
        # collector (a pass of point reads answering 404 would leave tens of thousands of
        # objects to one young collection on the UI thread, a visible stall). Here a caught error is
        # let go when its `except` block ends (`tests/sync/test_api_garbage.py`).
        try:
            for attempt_number in range(1, self._retry_attempts + 1):
                try:
                    return await attempt()
                except (RateLimited, Unavailable, _NotSent) as exc:
                    if attempt_number == self._retry_attempts or not retryable(exc):
                        raise
                    delay = wait(exc, attempt_number)
                    log.info(
                        "retrying %s %s after %r (attempt %d)", method, path, exc, attempt_number
                    )
                await asyncio.sleep(delay)
        except _NotSent as exc:
            cause = exc.args[0] if exc.args and isinstance(exc.args[0], httpx.HTTPError) else None
            if cause is None:
                raise ConnectionFailed(f"Cannot reach the server at {self.base_url}.") from exc
            raise network_error(cause, self.base_url, method, path, sent=False) from cause
        raise AssertionError("unreachable")  # pragma: no cover
