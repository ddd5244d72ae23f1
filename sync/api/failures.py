"""What a failed exchange with the server means: a typed `sync.errors` class with words.

`ApiClient` sends; this module reads what came back (or did not). Callers branch on the
class, never on the message, so the mapping lives in one place: an error answer goes to the
most specific `ApiError` (a missing envelope tolerated), a transport failure to
`NetworkError` or `ConnectionFailed` (the class says whether the request may have had an
effect), a failed TLS handshake to `TlsError` or `CertificateError` (named as such, never as
"cannot reach": it is a setting to fix, not a network that will come back), and a body that
is not JSON to `UnexpectedResponse`. The technical detail goes to
the log; the message is a sentence a user can act on.
"""

from __future__ import annotations

import json
import logging
import math
import ssl
import time
from collections.abc import Mapping
from typing import Any

import httpx

from sync.api.body import Answer
from sync.api.server_clock import parse_http_date
from sync.api.tls import certificate_failure_message
from sync.errors import (
    ApiError,
    BadCursor,
    CertificateError,
    ConnectionFailed,
    NetworkError,
    RateLimited,
    TlsError,
    Unavailable,
    UnexpectedResponse,
    error_class_for,
)

log = logging.getLogger(__name__)


def network_error(
    exc: httpx.HTTPError, base_url: str, method: str, path: str, *, sent: bool = True
) -> NetworkError:
    """Words for a user; the exception class says whether the request may have had an
    effect (`ConnectionFailed`: never sent). The technical detail goes to the log."""
    log.info("%s %s: %s (%s)", method, path, type(exc).__name__, "sent" if sent else "not sent")
    tls = tls_failure(exc)
    if tls is not None:
        return tls_error(tls, base_url)
    if not sent:
        return ConnectionFailed(f"Cannot reach the server at {base_url}.")
    if isinstance(exc, httpx.TimeoutException):
        return NetworkError(f"Cannot reach the server at {base_url} (it did not answer in time).")
    return NetworkError(f"Cannot reach the server at {base_url} (the connection was lost).")


def tls_failure(exc: BaseException) -> ssl.SSLError | None:
    """The `ssl.SSLError` behind an httpx error (httpx wraps httpcore's, which wraps the
    ssl module's), or None when the failure was not TLS."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ssl.SSLError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def tls_error(exc: ssl.SSLError, base_url: str) -> TlsError:
    """A certificate that was not verified, or another handshake failure, in words."""
    if isinstance(exc, ssl.SSLCertVerificationError):
        reason = exc.verify_message or _ssl_reason(exc)
        return CertificateError(certificate_failure_message(reason))
    return TlsError(
        f"A secure connection to the server at {base_url} could not be set up "
        f"({_ssl_reason(exc)}). Check that the address (https:// or http://) and port are "
        "right."
    )


def _ssl_reason(exc: ssl.SSLError) -> str:
    reason = exc.reason or exc.strerror or type(exc).__name__
    return str(reason).replace("_", " ").lower()


def retry_after(value: str | None) -> float | None:
    """`Retry-After` in seconds: delta-seconds or an HTTP date; None when absent or not
    readable (RFC 9110 §10.2.3)."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    when = parse_http_date(value)
    return None if when is None else max(0.0, when - time.time())


def error_from_response(answer: Answer, base_url: str, *, has_cursor: bool = False) -> ApiError:
    """Map an error answer to the most specific class; tolerate a missing envelope."""
    method = answer.method
    path = answer.path
    body = answer.body
    code: str | None = None
    server_message = ""
    details: Mapping[str, Any] = {}
    try:
        payload = json.loads(body) if body else None
    except (ValueError, RecursionError):
        payload = None
    if isinstance(payload, Mapping) and isinstance(payload.get("error"), Mapping):
        env = payload["error"]
        code = env.get("code") if isinstance(env.get("code"), str) else None
        server_message = env.get("message") if isinstance(env.get("message"), str) else ""
        if isinstance(env.get("details"), Mapping):
            details = env["details"]
    status = answer.status
    request_id = _request_id(answer.headers.get("X-Request-ID"))
    cls = error_class_for(status, code, details)
    if has_cursor and status == 400:
        cls = BadCursor
    message = describe(status, code, server_message, details, base_url)
    if status == 404 and cls is UnexpectedResponse:
        message = (
            f"The server at {base_url} answered 404 without the Converge API's "
            "error envelope, which proves nothing about the conversation (is the server "
            "URL right, or is a proxy in the way?)."
        )
    if cls is Unavailable:
        return Unavailable(
            trouble_message(details),
            status=status,
            code=code,
            details=details,
            method=method,
            path=path,
            retry_after=retry_after(answer.headers.get("Retry-After")),
            request_id=request_id,
        )
    if cls is RateLimited:
        wait = retry_after(answer.headers.get("Retry-After"))
        return RateLimited(
            rate_limited_message(wait),
            status=status,
            code=code,
            details=details,
            method=method,
            path=path,
            retry_after=wait,
            request_id=request_id,
        )
    error = cls(message, status=status, code=code, details=details, method=method, path=path)
    error.request_id = request_id
    return error


def _request_id(value: str | None) -> str | None:
    """The server's request id when it is a sane token (1-64 letters, digits, `-_.`): it
    is shown in Details, so anything else is dropped rather than displayed."""
    if value is None or not 0 < len(value) <= 64:
        return None
    return value if all(c.isascii() and (c.isalnum() or c in "-_.") for c in value) else None


def rate_limited_message(wait: float | None) -> str:
    """The sentence for a 429: when to try again, if the server said."""
    if wait is None:
        return "The server is limiting requests; try again in a moment."
    return f"The server is limiting requests; try again in {math.ceil(wait):.0f} s."


def trouble_message(details: Mapping[str, Any]) -> str:
    """The sentence for a 503 (CONTRACT §10.2): the server is having trouble for a while,
    not failing. A pass adds that it will try again (`wording.will_try_again`); a delete or
    a send, which nothing retries by itself, says its own consequence."""
    if details.get("reason") == "database_unavailable":
        why = "its database is unavailable"
    else:
        why = "it is unavailable right now"
    return f"The server is having trouble ({why})."


def describe(
    status: int, code: str | None, server_message: str, details: Mapping[str, Any], base_url: str
) -> str:
    """A sentence a user can act on, built from the status and the server's own words."""
    suffix = f" ({server_message})" if server_message else ""
    if status == 401:
        return f"The server at {base_url} did not accept the token{suffix}. Check the token."
    if status == 403:
        scope = details.get("required_scope")
        need = f" (needs scope {scope})" if isinstance(scope, str) else ""
        return f"The token is not allowed to do this{need}."
    if status == 404:
        if details.get("reason") == "deleted":
            return "The conversation was deleted."
        return "Not found on the server."
    if status == 409:
        if details.get("reason") == "active_run_exists":
            return f"A run is still active ({details.get('active_run_id')})."
        return f"The server refused because of the current state{suffix}."
    if status == 400:
        return f"The server rejected the request as invalid{suffix}."
    if status >= 500:
        return f"The server at {base_url} failed ({status}){suffix}."
    return f"Unexpected answer {status} from the server{suffix}."
