"""`GET /v1/sessions` answered without FastAPI's router: the request most clients send most.

On the first page and its 304 (`python -m bench server`, the floor tables), FastAPI's routing
(the app's routes matched one by one), its dependency solver and its per-request exit stack cost
more than the route's own work once the 304 needs no database read. This pure-ASGI middleware
sits innermost, inside the Host check, the rate limit and the body limit (so those still run
first, in the contract's order), and hands exactly `GET /v1/sessions` to the same endpoint
function the router would call. Errors take the same way as through the router: an exception the
app has a handler for (`ApiError`, a database error) is answered by that very handler, as
Starlette's `ExceptionMiddleware` does; any other propagates to the catch-all at the top. Every
other request goes to the app unchanged. The route stays registered with the router, so the API
docs still describe it.

`GET /v1/sessions/{id}/events` takes the same way: every pass of every watching device reads
one events page per moved conversation, so after the index it is the request sent most, and
FastAPI's routing and dependency solving are a large share of the server's time under many
devices (`python -m bench scale`). Its id is the one path segment between the prefix and the
suffix, as the router's `{session_id}` matches it (a segment holding `/` is not this route:
it goes to the router, which answers it).

`DELETE /v1/sessions/{id}` takes it too (decision 0196): once the purge was a handful of
statements, the router, the dependency solver and the exit stack were most of what a delete
cost beyond its transaction. Its id is the one path segment after the prefix.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from server_stub.observe.requests import ROUTE_KEY

Endpoint = Callable[[Request], Awaitable[Response]]
SessionEndpoint = Callable[[str, Request], Awaitable[Response]]
Handler = Callable[[Request, Exception], Awaitable[Response]]

PATH = "/v1/sessions"
EVENTS_PREFIX = "/v1/sessions/"
EVENTS_SUFFIX = "/events"
EVENTS_TEMPLATE = "/v1/sessions/{session_id}/events"
SESSION_TEMPLATE = "/v1/sessions/{session_id}"


def session_segment(path: str) -> str | None:
    """The session id of `/v1/sessions/{id}`, or None when `path` is not one."""
    if not path.startswith(EVENTS_PREFIX):
        return None
    segment = path[len(EVENTS_PREFIX) :]
    return segment if segment and "/" not in segment else None


def events_session(path: str) -> str | None:
    """The session id of an events path, or None when `path` is not one."""
    if not (path.startswith(EVENTS_PREFIX) and path.endswith(EVENTS_SUFFIX)):
        return None
    segment = path[len(EVENTS_PREFIX) : len(path) - len(EVENTS_SUFFIX)]
    return segment if segment and "/" not in segment else None


class IndexPathMiddleware:
    """Serve `GET /v1/sessions` with `endpoint`, a session's events with `events` and its
    deletion with `delete` directly; everything else passes through."""

    def __init__(
        self,
        app: ASGIApp,
        endpoint: Endpoint,
        events: SessionEndpoint | None = None,
        delete: SessionEndpoint | None = None,
    ) -> None:
        self.app = app
        self.endpoint = endpoint
        self.events = events
        self.delete = delete

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        target = self._target(scope)
        if target is None:
            await self.app(scope, receive, send)
            return
        template, served, session_id = target
        scope[ROUTE_KEY] = template  # the route's template, for the latency metrics
        request = Request(scope, receive, send)
        try:
            if served is None:
                response = await self.endpoint(request)
            else:
                response = await served(session_id, request)
        except Exception as exc:
            handler = _handler_for(scope, exc)
            if handler is None:
                raise  # to the app's catch-all (ServerErrorMiddleware), as from the router
            response = await handler(request, exc)
        await response(scope, receive, send)

    def _target(self, scope: Scope) -> tuple[str, SessionEndpoint | None, str] | None:
        """(template, endpoint (None: the index's), session id) of a request served here."""
        if scope["type"] != "http":
            return None
        method, path = scope["method"], scope["path"]
        if method == "GET":
            if path == PATH:
                return PATH, None, ""
            session_id = events_session(path) if self.events is not None else None
            if session_id is not None:
                return EVENTS_TEMPLATE, self.events, session_id
        elif method == "DELETE" and self.delete is not None:
            session_id = session_segment(path)
            if session_id is not None:
                return SESSION_TEMPLATE, self.delete, session_id
        return None


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
