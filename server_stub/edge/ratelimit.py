"""Per-principal write rate limits: `429 rate_limited` with `Retry-After` (CONTRACT §10.2).

Without a limit one principal writing as fast as it can makes every other tenant's writes queue
behind it for the database's one writer. Each principal gets two token buckets for the writes of
the API (POST and DELETE under `/v1/`, every route alike): one of requests (`write_burst`,
refilled at `write_rate` per second) and one of body bytes (`write_bytes_burst`, refilled at
`write_bytes_rate`). A request needs one request token and its declared `Content-Length` in byte
tokens (a body streamed without a length is charged as it arrives, and may leave the bucket in
debt, which delays the next write, but never deeper than one whole bucket: a debt is paid off
within one refill window, however many streamed bodies ran at once); what was declared but
never received is given back when the request ends, and so is the request token of a write
refused on its head alone (answered with a status of `REFUSED_UNREAD` before any of its body
was read): a refusal costs nothing in either bucket (CONTRACT §14). Defaults are generous: no
client of ours and no test comes near them; `write_rate_limit=False` (`--no-rate-limit`) turns
them off for benchmarks.

Pure ASGI, in front of the routes: the principal is looked up from the bearer token (an
unknown or missing token is left to the route, which answers 401, so the order of checks
stays the contract's for every request that is not refused here). Buckets are per process:
in a fleet of N processes behind a balancer a principal may write up to N times the rate.
The table of buckets is bounded by the number of principals the token table knows.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from server_stub.config import ServerSettings
from server_stub.edge.auth import Principal
from server_stub.edge.errors import envelope_bytes
from server_stub.state import AppState

WRITE_METHODS = frozenset({"POST", "DELETE"})
API_PREFIX = "/v1/"
#: Refusals that cost nothing when none of the body was read: such a request never reached the
#: data (a 404 or a 409 did, and is charged like any write).
REFUSED_UNREAD = frozenset({400, 401, 403, 413, 431})
#: The longest `Retry-After` given (a bucket that refills at 0 per second never refills).
MAX_RETRY_AFTER = 3600


@dataclass
class _Bucket:
    tokens: float
    stamp: float


class TokenBuckets:
    """Token buckets keyed by principal, all with one capacity and one refill rate."""

    def __init__(self, capacity: float, rate: float, clock: Callable[[], float]) -> None:
        self.capacity = capacity
        self.rate = rate
        self._clock = clock
        self._buckets: dict[tuple[str, str], _Bucket] = {}

    def _refilled(self, key: tuple[str, str]) -> _Bucket:
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(self.capacity, now)
        else:
            bucket.tokens = min(self.capacity, bucket.tokens + (now - bucket.stamp) * self.rate)
            bucket.stamp = now
        return bucket

    def wait_for(self, key: tuple[str, str], amount: float) -> float:
        """Seconds until `amount` tokens are there (0: there now); takes nothing."""
        need = min(amount, self.capacity)
        bucket = self._refilled(key)
        if bucket.tokens >= need:
            return 0.0
        if self.rate <= 0:
            return float(MAX_RETRY_AFTER)
        return (need - bucket.tokens) / self.rate

    def take(self, key: tuple[str, str], amount: float) -> None:
        """Take `amount` tokens; the bucket may go into debt, down to -capacity at most.

        The floor is what bounds the wait: from -capacity the bucket is back at zero after
        one refill window (capacity / rate). Without it, bodies streamed at once could put a
        principal in debt for hours. The bytes charged past the floor are not charged; each
        body is bounded anyway (`bodylimit`, 1 MiB)."""
        bucket = self._refilled(key)
        bucket.tokens = max(-self.capacity, bucket.tokens - amount)

    def give_back(self, key: tuple[str, str], amount: float) -> None:
        """Return `amount` tokens taken for nothing (never above the capacity)."""
        bucket = self._refilled(key)
        bucket.tokens = min(self.capacity, bucket.tokens + amount)


class WriteRateLimit:
    """Both buckets of every principal, and the decision for one request."""

    def __init__(self, settings: ServerSettings, clock: Callable[[], float] = time.monotonic):
        self.requests = TokenBuckets(settings.write_burst, settings.write_rate, clock)
        self.bytes = TokenBuckets(settings.write_bytes_burst, settings.write_bytes_rate, clock)

    def admit(self, key: tuple[str, str], declared: int) -> int:
        """0 when the write may go ahead (its tokens taken), else the `Retry-After`."""
        wait = max(self.requests.wait_for(key, 1), self.bytes.wait_for(key, declared))
        if wait > 0:
            return min(MAX_RETRY_AFTER, max(1, math.ceil(wait)))
        self.requests.take(key, 1)
        self.bytes.take(key, declared)
        return 0


class RateLimitMiddleware:
    """Refuse a principal's writes past its buckets with 429 `rate_limited`."""

    def __init__(
        self,
        app: ASGIApp,
        settings: ServerSettings,
        lookup: Callable[[str], Principal | None] | None = None,
    ) -> None:
        """`lookup` maps a token to its principal; by default the running app's token table
        (`AppState.tokens`, which exists once the lifespan has started)."""
        self.app = app
        self.enabled = settings.write_rate_limit
        self.limit = WriteRateLimit(settings)
        self._lookup = lookup

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            not self.enabled
            or scope["type"] != "http"
            or scope["method"] not in WRITE_METHODS
            or not scope["path"].startswith(API_PREFIX)
        ):
            await self.app(scope, receive, send)
            return
        key = self._principal(scope)
        if key is None:  # unknown or missing token: the route answers 401
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        retry_after = self.limit.admit(key, declared)
        if retry_after:
            state = getattr(scope["app"].state, "converge", None)
            if isinstance(state, AppState):
                state.repeat_log.warning(
                    "rate-limited", "write refused (429): a principal is past its write rate"
                )
            await _refuse(send, retry_after, close=declared > 0 or _chunked(scope))
            return
        charged = declared
        read = False
        status = 0

        async def charging_receive() -> Message:
            nonlocal charged, read
            message = await receive()
            if message["type"] == "http.request":
                read = True
                charged -= len(message.get("body", b""))
                if charged < 0:  # more than declared (or no length): charge as it arrives
                    self.limit.bytes.take(key, -charged)
                    charged = 0
            return message

        async def watching_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, charging_receive, watching_send)
        finally:
            # Declared but never received (a 413 answered unread, a refusal before the body,
            # a client that went away): a principal pays for the bytes it wrote, not for the
            # ones it claimed, or one refused upload would lock it out for hours.
            if charged > 0:
                self.limit.bytes.give_back(key, charged)
            if not read and status in REFUSED_UNREAD:
                self.limit.requests.give_back(key, 1)

    def _principal(self, scope: Scope) -> tuple[str, str] | None:
        lookup = self._lookup
        if lookup is None:
            state = getattr(scope["app"].state, "converge", None)
            if not isinstance(state, AppState):
                return None
            lookup = state.tokens.lookup
        for name, value in scope.get("headers", []):
            if name == b"authorization":
                scheme, _, token = value.decode("latin-1").partition(" ")
                if scheme.lower() != "bearer":
                    return None
                who = lookup(token.strip())
                return None if who is None else (who.tenant, who.principal)
        return None


def _content_length(scope: Scope) -> int:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            # Over 1 MiB is refused by the body limit anyway; a bogus length counts as 0.
            return int(text) if text.isdigit() and len(text) <= 12 else 0
    return 0


def _chunked(scope: Scope) -> bool:
    return any(name == b"transfer-encoding" for name, _ in scope.get("headers", []))


async def _refuse(send: Send, retry_after: int, *, close: bool) -> None:
    """The 429; a connection whose body was left unread is closed rather than drained."""
    body = envelope_bytes(429, "too many writes; retry after the time in Retry-After")
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(retry_after).encode()),
    ]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": body})
