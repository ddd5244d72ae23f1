"""A fault-injecting httpx transport, put in front of the REAL stub server.

Rules match requests (method and a path predicate) and say what happens instead of, or
around, the real exchange: a canned error status, a connection that never opens, or a
response that is lost after the server processed the request (the "204 lost in transit").
Every request is also recorded, so tests can count what the client actually sent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import httpx

Predicate = Callable[[httpx.Request], bool]


@dataclass
class Rule:
    method: str
    path: re.Pattern[str]
    action: str  # "status", "bare", "refuse", "lose_response", "hook", "cut_stream"
    status: int = 503
    code: str = "unavailable"
    details: dict[str, object] = field(default_factory=dict)
    times: int | None = 1  # None: forever
    hook: Callable[[httpx.Request], Awaitable[None]] | None = None
    when: Predicate | None = None
    frames: int = 1  # cut_stream: data frames delivered before the connection drops
    hits: int = 0

    def matches(self, request: httpx.Request) -> bool:
        if self.times is not None and self.hits >= self.times:
            return False
        if request.method != self.method or not self.path.fullmatch(request.url.path):
            return False
        return self.when is None or self.when(request)


class FaultTransport(httpx.AsyncBaseTransport):
    def __init__(self) -> None:
        self._inner = httpx.AsyncHTTPTransport()
        self.rules: list[Rule] = []
        self.log: list[tuple[str, str, str]] = []  # (method, path, query)
        self.requests: list[httpx.Request] = []

    def add(
        self,
        method: str,
        path: str,
        action: str,
        *,
        status: int = 503,
        code: str = "unavailable",
        details: dict[str, object] | None = None,
        times: int | None = 1,
        hook: Callable[[httpx.Request], Awaitable[None]] | None = None,
        when: Predicate | None = None,
        frames: int = 1,
    ) -> Rule:
        rule = Rule(
            method,
            re.compile(path),
            action,
            status=status,
            code=code,
            details=details or {},
            times=times,
            hook=hook,
            when=when,
            frames=frames,
        )
        self.rules.append(rule)
        return rule

    def clear(self) -> None:
        self.rules.clear()
        self.log.clear()
        self.requests.clear()

    def count(self, method: str, path: str) -> int:
        pattern = re.compile(path)
        return sum(1 for m, p, _ in self.log if m == method and pattern.fullmatch(p))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.log.append((request.method, request.url.path, request.url.query.decode()))
        self.requests.append(request)
        rule = next((r for r in self.rules if r.matches(request)), None)
        if rule is None:
            return await self._inner.handle_async_request(request)
        rule.hits += 1
        if rule.action == "status":
            body = {"error": {"code": rule.code, "message": "injected", "details": rule.details}}
            return httpx.Response(rule.status, content=json.dumps(body).encode(), request=request)
        if rule.action == "bare":  # a proxy's or another service's answer: no envelope
            return httpx.Response(
                rule.status,
                content=b"<html><body>Not Found</body></html>",
                headers={"Content-Type": "text/html"},
                request=request,
            )
        if rule.action == "refuse":
            raise httpx.ConnectError("injected: connection refused", request=request)
        if rule.action == "lose_response":
            response = await self._inner.handle_async_request(request)
            await response.aread()
            await response.aclose()
            raise httpx.ReadError("injected: connection reset after the request", request=request)
        if rule.action == "hook":
            assert rule.hook is not None
            await rule.hook(request)
            return await self._inner.handle_async_request(request)
        if rule.action == "cut_stream":
            response = await self._inner.handle_async_request(request)
            return httpx.Response(
                response.status_code,
                headers=response.headers,
                stream=_CutStream(response, rule.frames, request),
                request=request,
            )
        raise AssertionError(f"unknown fault action {rule.action}")

    async def aclose(self) -> None:
        await self._inner.aclose()


class _CutStream(httpx.AsyncByteStream):
    """Relays an SSE body until `frames` data frames went through, then drops the line."""

    def __init__(self, inner: httpx.Response, frames: int, request: httpx.Request) -> None:
        self._inner = inner
        self._frames = frames
        self._request = request

    async def __aiter__(self):
        seen = 0
        try:
            async for chunk in self._inner.aiter_raw():
                yield chunk
                seen += chunk.count(b"data:")
                if seen >= self._frames:
                    raise httpx.ReadError("injected: stream cut", request=self._request)
        finally:
            await self._inner.aclose()

    async def aclose(self) -> None:
        await self._inner.aclose()
