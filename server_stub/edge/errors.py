"""The error envelope of the contract, for every 4xx and 5xx (never 422, never a bare 500).

`ApiError` is raised by routes; the handlers installed by `install_error_handlers` turn it,
framework errors (unknown route, wrong method, validation) and unexpected exceptions into
`{"error": {"code", "message", "details"?}}`.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.routing import Match

from server_stub.db import outage

log = logging.getLogger(__name__)

_CODES = {
    400: "invalid_request",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "invalid_state",
    413: "payload_too_large",
    429: "rate_limited",  # the one code CONTRACT §10.2 adds (server_stub.edge.ratelimit)
    500: "internal",
    503: "unavailable",
}


def envelope_bytes(
    status: int, message: str, details: dict[str, Any] | None = None, code: str | None = None
) -> bytes:
    """The serialized envelope; deterministic, so equal inputs give byte-identical bodies."""
    error: dict[str, Any] = {"code": code or _CODES[status], "message": message}
    if details:
        error["details"] = details
    return json.dumps({"error": error}, separators=(",", ":"), ensure_ascii=False).encode()


def envelope_response(
    status: int,
    message: str,
    details: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    """A JSON response carrying the envelope."""
    return Response(
        envelope_bytes(status, message, details),
        status_code=status,
        media_type="application/json",
        headers=headers,
    )


class ApiError(Exception):
    """An error the contract names: status, code (derived), message, details."""

    def __init__(
        self,
        status: int,
        message: str,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.details = details
        self.headers = headers

    def response(self) -> Response:
        """This error as an envelope response."""
        return envelope_response(self.status, self.message, self.details, self.headers)


def bad_request(message: str, **details: Any) -> ApiError:
    """A 400 `invalid_request`."""
    return ApiError(400, message, details or None)


def not_found(message: str) -> ApiError:
    """A plain 404: the message is a per-route constant, never the requested id."""
    return ApiError(404, message)


def invalid_state(message: str, **details: Any) -> ApiError:
    """A 409 `invalid_state`."""
    return ApiError(409, message, details or None)


def unavailable(message: str, details: dict[str, Any], retry_after: int = 1) -> ApiError:
    """A 503 `unavailable` the client may retry (with `Retry-After`)."""
    return ApiError(503, message, details, {"Retry-After": str(retry_after)})


UNKNOWN_ROUTE = "no such route"


def _allowed_methods(request: Request) -> str:
    """Every method some route serves on this path (RFC 9110 `Allow`). Starlette names only
    the first route that matched the path, so `OPTIONS /v1/sessions` said `Allow: GET`
    although POST is served there too. Asks the router, method by method."""
    allowed = []
    for method in _METHODS:
        scope = {**request.scope, "method": method}
        if any(route.matches(scope)[0] is Match.FULL for route in request.app.router.routes):
            allowed.append(method)
    return ", ".join(allowed)


_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def install_error_handlers(app: FastAPI) -> None:
    """Route every error through the envelope."""

    async def on_api_error(_request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        return exc.response()

    async def on_http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        status = exc.status_code
        headers = dict(exc.headers) if exc.headers else None
        if status == 404:
            return envelope_response(404, UNKNOWN_ROUTE)
        if status == 405:
            headers = {**(headers or {}), "Allow": _allowed_methods(request)}
            return envelope_response(405, "method not allowed", headers=headers)
        if status in _CODES:
            return envelope_response(status, str(exc.detail), headers=headers)
        return envelope_response(400 if status < 500 else 500, str(exc.detail))

    async def on_validation_error(_request: Request, exc: Exception) -> Response:
        return envelope_response(400, "invalid request")

    async def on_unexpected(request: Request, exc: Exception) -> Response:
        # One traceback per kind of error per interval: a fault that hits every request
        # (a full disk, no descriptors left) must not fill the disk with logs.
        repeat_log = getattr(getattr(request.app.state, "converge", None), "repeat_log", None)
        if repeat_log is None:
            log.exception("unexpected error", exc_info=exc)
        else:
            kind = type(exc).__qualname__
            repeat_log.error(f"unexpected-{kind}", "unexpected error (%s)", kind, exc_info=exc)
        return envelope_response(500, "internal error")

    outages = outage.OutageLog(logging.getLogger(outage.__name__))

    async def on_database_error(_request: Request, exc: Exception) -> Response:
        # Registered for its class, so Starlette's ExceptionMiddleware answers it and the
        # exception ends here: the catch-all above re-raises after answering, and uvicorn
        # then closes the keep-alive connection without a `Connection: close`.
        state = getattr(_request.app.state, "converge", None)
        metrics = getattr(state, "metrics", None)
        if metrics is not None:
            metrics.database_error(exc)
        if not outage.is_outage(exc):
            return await on_unexpected(_request, exc)
        outages.report("database unavailable; answering 503", exc)
        seconds = outage.RETRY_AFTER_SECONDS
        return unavailable(
            "the database is unavailable right now; retry later",
            {"reason": "database_unavailable", "retry_after": seconds},
            retry_after=seconds,
        ).response()

    app.add_exception_handler(ApiError, on_api_error)
    app.add_exception_handler(DBAPIError, on_database_error)
    app.add_exception_handler(StarletteHTTPException, on_http_error)
    app.add_exception_handler(RequestValidationError, on_validation_error)
    app.add_exception_handler(Exception, on_unexpected)
