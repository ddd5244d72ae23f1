"""`GET /v1/sessions` answered without FastAPI's router: the request most clients send most.

Measured on the first page and its 304 (`python -m bench server`, the floor tables), FastAPI's
routing (the app's routes matched one by one), its dependency solver and its
per-request exit stack cost more than the route's own work once the 304 needs no database
read. This pure-ASGI middleware sits innermost, inside the Host check, the rate limit and the
body limit (so those still run first, in the contract's order), and hands exactly
`GET /v1/sessions` to the same endpoint function the router would call. Errors take the same
way as through the router: an exception the app has a handler for (`ApiError`, a database
error) is answered by that very handler, as Starlette's `ExceptionMiddleware` does; any
other propagates to the catch-all at the top. Every other request goes to the app unchanged.
The route stays registered with the router, so the API docs still describe it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from server_stub.observe import ROUTE_KEY

Endpoint = Callable[[Request], Awaitable[Response]]
Handler = Callable[[Request, Exception], Awaitable[Response]]

PATH = "/v1/sessions"


class IndexPathMiddleware:
    """Serve `GET /v1/sessions` with `endpoint` directly; everything else passes through."""

    def __init__(self, app: ASGIApp, endpoint: Endpoint) -> None:
        self.app = app
        self.endpoint = endpoint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "GET" or scope["path"] != PATH:
            await self.app(scope, receive, send)
            return
        scope[ROUTE_KEY] = PATH  # the route's template, for the latency metrics
        request = Request(scope, receive, send)
        try:
            response = await self.endpoint(request)
        except Exception as exc:
            handler = _handler_for(scope, exc)
            if handler is None:
                raise  # to the app's catch-all (ServerErrorMiddleware), as from the router
            response = await handler(request, exc)
        await response(scope, receive, send)


def _handler_for(scope: Scope, exc: Exception) -> Handler | None:
    """The app's handler for `exc`'s class or nearest base, except the catch-all for
    `Exception` (which the outermost middleware calls, as Starlette arranges it)."""
    handlers: dict[type[Exception], Handler] = scope["app"].exception_handlers
    for cls in type(exc).__mro__:
        if cls is Exception:
            return None
        handler = handlers.get(cls)
        if handler is not None:
            return handler
    return None
