"""Request bodies: at most 1 MiB (413), and complete within a deadline (400).

Pure ASGI: a declared `Content-Length` over the limit is refused before authentication and
without reading the body; a streamed (chunked) body is counted as it is received and refused
as soon as it crosses the limit.

A body must also be complete `deadline` seconds (`ServerSettings.body_timeout`, 30 s) after
its request head arrived: otherwise a client trickling a body a byte at a time would hold
its connection (and a worker's wait) for as long as it liked, since the HTTP layer bounds only
the head (server_stub.edge.protocol). Past the deadline the route's read fails with 400
`invalid_request` (`details.reason = "body_timeout"`) and the connection is closed. Only
requests that announce a body (`Content-Length` above 0, or `Transfer-Encoding`) are timed:
a GET's later `receive()` (a held watch listening for the client going away) is not a body.
"""

from __future__ import annotations

import asyncio

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from server_stub.edge.errors import ApiError, envelope_bytes

MAX_BODY = 1024 * 1024
DEFAULT_DEADLINE = 30.0
_MESSAGE = "request body exceeds 1 MiB"
_SLOW = "request body did not arrive in time"


class _TooLarge(ApiError):
    """Raised from `receive` inside a route; the envelope handlers answer it as 413."""

    def __init__(self) -> None:
        super().__init__(413, _MESSAGE)


class _TooSlow(ApiError):
    """Raised from `receive` inside a route past the deadline; answered as 400, and the
    connection closed (the rest of the body may still be on its way)."""

    def __init__(self, deadline: float) -> None:
        super().__init__(
            400,
            _SLOW,
            {"reason": "body_timeout", "seconds": deadline},
            {"Connection": "close"},
        )


def _announces_body(scope: Scope) -> bool:
    for name, value in scope.get("headers", []):
        if name == b"transfer-encoding":
            return True
        if name == b"content-length" and value.strip() not in (b"", b"0"):
            return True
    return False


class BodyLimitMiddleware:
    """Enforce `MAX_BODY` and the body deadline on every HTTP request."""

    def __init__(
        self, app: ASGIApp, limit: int = MAX_BODY, deadline: float = DEFAULT_DEADLINE
    ) -> None:
        self.app = app
        self.limit = limit
        self.deadline = deadline

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _announces_body(scope):
            # Nothing to count or time (the index, a 304, a DELETE): nothing to wrap.
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > self.limit:
                    await self._reject(send, _TooLarge())
                    return
        received = 0
        started = False
        body_done = False
        loop = asyncio.get_running_loop()
        due = loop.time() + self.deadline

        async def counting_receive() -> Message:
            nonlocal received, body_done
            if body_done:
                return await receive()
            try:
                async with asyncio.timeout_at(due):
                    message = await receive()
            except TimeoutError:
                raise _TooSlow(self.deadline) from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise _TooLarge
                body_done = not message.get("more_body", False)
            else:
                body_done = True
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except (_TooLarge, _TooSlow) as exc:
            if not started:
                await self._reject(send, exc)
        except BaseExceptionGroup as group:
            found = group.subgroup((_TooLarge, _TooSlow))
            if found is None or started:
                raise
            first = found.exceptions[0]
            assert isinstance(first, ApiError)
            await self._reject(send, first)

    @staticmethod
    async def _reject(send: Send, error: ApiError) -> None:
        body = envelope_bytes(error.status, error.message, error.details)
        await send(
            {
                "type": "http.response.start",
                "status": error.status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
