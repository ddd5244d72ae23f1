"""What the server says about its requests: a request id, latency by route, the access log,
and `GET /metrics` (docs/server.md "Metrics and logs").

`ObserveMiddleware` is the outermost pure-ASGI layer (a `BaseHTTPMiddleware` costs a task and
a stream per request; this costs a clock read, a header scan and one histogram observation).
It gives every request an id: a sane inbound `X-Request-ID` (1-64 characters of letters,
digits, `.`, `_`, `-`; anything else, or more than one, is ignored), else 16 hex digits
that say nothing of other requests (`RequestIds`), echoed in the response's `X-Request-ID`
and set in `REQUEST_ID` for every log record written while the request runs (worker threads
inherit it). After the response it observes
the duration under the route's *template* (`/v1/sessions/{session_id}`, never the raw path:
ids would make one series per session), `unrouted` for requests refused before routing (Host,
rate or body limits) and unknown paths; and, when asked (`--log-format json`), writes the
access log line itself, with the route, status and duration as fields.

`MetricsEndpoint` sits just inside the Host check (a DNS-rebinding page is refused first) and
answers `GET /metrics` to peers in `allowed` (loopback unless `--metrics-from` adds networks;
the socket's peer, never a header). Anyone else falls through to the app, whose answer for an
unknown path is the 404 envelope: the endpoint is not a route of the API, not in OpenAPI, and
needs no token, like `/openapi.json`.
"""

from __future__ import annotations

import contextvars
import hashlib
import ipaddress
import itertools
import logging
import os
import re
import time
from collections.abc import Iterable, Mapping

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from server_stub.observe.metrics import CONTENT_TYPE, Metrics

access_log = logging.getLogger("server_stub.access")

#: The id of the request being served (empty outside a request).
REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="")

_SANE_ID = re.compile(rb"[A-Za-z0-9._-]{1,64}")
_HEADER = b"x-request-id"
#: Set by middlewares that answer a route past the router (`indexpath`).
ROUTE_KEY = "converge.route"
UNROUTED = "unrouted"
PATH = "/metrics"

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
LOOPBACK: tuple[Network, ...] = (
    ipaddress.ip_network("127.0.0.0/8"),
    ipaddress.ip_network("::1/128"),
)


class RequestIds:
    """Fresh ids: a counter hashed with a random key of the app's (BLAKE2b, 16 hex digits).
    A counter in the clear, shared by every principal, would let one principal count another's
    requests between two of its own; the keyed hash keeps ids unique in practice (64 bits)
    and unlinkable, without a system call per request."""

    def __init__(self) -> None:
        self._key = os.urandom(16)
        self._next = itertools.count(1)

    def fresh(self) -> bytes:
        count = next(self._next).to_bytes(8, "little")
        return hashlib.blake2b(count, key=self._key, digest_size=8).hexdigest().encode()

    def of(self, headers: Iterable[tuple[bytes, bytes]]) -> bytes:
        """The inbound id when exactly one sane `X-Request-ID` came, else a fresh one."""
        found: bytes | None = None
        for name, value in headers:
            if name == _HEADER:
                if found is not None:
                    return self.fresh()
                found = value
        if found is not None and _SANE_ID.fullmatch(found):
            return found
        return self.fresh()


def route_of(scope: Scope, templates: Mapping[int, str]) -> str:
    """The template of the route that served `scope` (`unrouted` when none did);
    `templates` gives the whole template of an included route (`routes.route_templates`)."""
    route = scope.get("route")
    if route is not None and (template := templates.get(id(route))) is not None:
        return template
    path = getattr(route, "path", None)
    if isinstance(path, str):
        return path
    named = scope.get(ROUTE_KEY)
    return named if isinstance(named, str) else UNROUTED


class ObserveMiddleware:
    """Request id, latency histogram and (optionally) the access log of every request."""

    def __init__(
        self,
        app: ASGIApp,
        metrics: Metrics,
        templates: Mapping[int, str],
        log_access: bool = False,
    ) -> None:
        self.app = app
        self.metrics = metrics
        self.templates = templates
        self.log_access = log_access
        self.ids = RequestIds()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        rid = self.ids.of(scope["headers"])
        token = REQUEST_ID.set(rid.decode("ascii"))
        status = 0
        stream = False

        async def send_with_id(message: Message) -> None:
            nonlocal status, stream
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = list(message.get("headers", ()))
                stream = any(
                    k == b"content-type" and v.startswith(b"text/event-stream") for k, v in headers
                )
                headers.append((b"x-request-id", rid))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            elapsed = time.perf_counter() - started
            route = route_of(scope, self.templates)
            if not stream and status:
                self.metrics.observe(route, scope["method"], elapsed)
            if self.log_access:
                access_log.info(
                    "%s %s %d",
                    scope["method"],
                    route,
                    status,
                    extra={
                        "method": scope["method"],
                        "route": route,
                        "status": status,
                        "duration_ms": elapsed * 1000,
                    },
                )
            REQUEST_ID.reset(token)


def parse_networks(texts: Iterable[str]) -> tuple[Network, ...]:
    """`--metrics-from` values (CIDR or a single address) as networks; ValueError when
    malformed."""
    return tuple(ipaddress.ip_network(text.strip(), strict=False) for text in texts)


class MetricsEndpoint:
    """`GET /metrics` for peers in `allowed`; everything else passes through."""

    def __init__(self, app: ASGIApp, metrics: Metrics, allowed: tuple[Network, ...]) -> None:
        self.app = app
        self.metrics = metrics
        self.allowed = LOOPBACK + allowed

    def _admits(self, scope: Scope) -> bool:
        client = scope.get("client")
        if not client:
            return False
        try:
            address = ipaddress.ip_address(client[0])
        except ValueError:
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return any(address in network for network in self.allowed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["path"] != PATH
            or scope["method"] != "GET"
            or not self._admits(scope)
        ):
            await self.app(scope, receive, send)
            return
        scope[ROUTE_KEY] = PATH
        body = await self.metrics.exposition()
        headers = [
            (b"content-type", CONTENT_TYPE.encode()),
            (b"content-length", str(len(body)).encode()),
            (b"cache-control", b"no-store"),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})
