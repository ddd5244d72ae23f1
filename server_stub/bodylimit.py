"""Request bodies over 1 MiB answer 413 in the envelope.

Pure ASGI: a declared `Content-Length` over the limit is refused before authentication and
without reading the body; a streamed (chunked) body is counted as it is received and refused
as soon as it crosses the limit.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from server_stub.errors import ApiError, envelope_bytes

MAX_BODY = 1024 * 1024
_MESSAGE = "request body exceeds 1 MiB"


class _TooLarge(ApiError):
    """Raised from `receive` inside a route; the envelope handlers answer it as 413."""

    def __init__(self) -> None:
        super().__init__(413, _MESSAGE)


class BodyLimitMiddleware:
    """Enforce `MAX_BODY` on every HTTP request."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > self.limit:
                    await self._reject(send)
                    return
        received = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise _TooLarge
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except _TooLarge:
            if not started:
                await self._reject(send)
        except BaseExceptionGroup as group:
            if group.subgroup(_TooLarge) is None or started:
                raise
            await self._reject(send)

    @staticmethod
    async def _reject(send: Send) -> None:
        body = envelope_bytes(413, _MESSAGE)
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
