"""Typed errors of the sync engine, mirroring the wire contract's error codes.

The tree, in the manner of httpx's `_exceptions.py`::

    SyncError                       anything the engine reports to its caller
    ├── ApiError                    the server answered, with the contract's error envelope
    │   ├── InvalidRequest          400 invalid_request (malformed body, bad parameter)
    │   │   └── BadCursor           400 on a request that carried a cursor: restart the walk
    │   ├── Unauthenticated         401 unauthenticated (missing or unknown token)
    │   ├── Forbidden               403 forbidden (details.required_scope)
    │   ├── NotFound                404 with the envelope's not_found: the only proof of absence
    │   ├── Conflict                409 invalid_state
    │   │   ├── ActiveRunExists     409 on DELETE: details.active_run_id
    │   │   └── RunInProgress       409 on POST runs: details.reason run_in_progress
    │   ├── PayloadTooLarge         413 payload_too_large
    │   ├── RateLimited             429 rate_limited: `retry_after` seconds (Retry-After)
    │   ├── ServerError             500 internal, and any other 5xx or unexpected status
    │   │   └── Unavailable         503 unavailable: "having trouble", `retry_after` seconds
    │   └── UnexpectedResponse      a status or body the contract does not allow (a bare 404)
    │       ├── ResponseTooLarge    a body past its byte cap (declared or read): not read on
    │       └── WalkOutOfBounds     a cursor that repeats or stands still, a walk past its cap
    ├── NetworkError                no HTTP answer: timeout, dropped connection (sent or not)
    │   ├── ConnectionFailed        no connection was ever made: the request had no effect
    │   │   └── TlsError            the TLS handshake failed: a setting to fix, never "offline"
    │   │       └── CertificateError  the server's certificate was not verified (trust store,
    │   │                             CA bundle, name): the token was never sent
    │   └── DeadlineExceeded        the answer was too slow: cut by a total deadline
    │       ├── ResponseTooSlow     one request's answer did not arrive within its deadline
    │       └── PassTooSlow         the reconcile pass did not finish within its deadline
    │           └── WalkUnfinished  ... mid-walk: what it walked is kept, the next pass goes on
    ├── BadId                       an id that cannot be sent as one path segment ("", ".", "..")
    ├── MessageTooLong              a message longer than a server takes: refused before sending
    ├── IntegrityError              downloaded bytes do not match the artifact's sha256
    ├── ConversationGone            the conversation left the mirror while its data was fetched
    ├── ProfileError                the profile lacks a server URL or a token, or is unreadable
    ├── LocalFileError              a file the client writes could not be written
    │   └── UnsafePath              a name would land outside its folder: refused, nothing written
    └── MirrorError                 the local mirror cannot be used
        ├── MirrorTooNew            the mirror was written by a newer schema: never touched
        ├── MirrorDamaged           the file fails its check: `converge repair` rebuilds it
        ├── MirrorUnwritable        no file can take the mirror's place (a folder, read-only)
        └── CacheError              artifact bytes could not be kept (disk full, permissions)

Callers branch on the class, never on message text. Every class carries a human `message`
that the command line and the window can show as is (no traceback for the user).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class SyncError(Exception):
    """Anything the engine reports to its caller; `message` is fit to show a user."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ApiError(SyncError):
    """The server answered with an error status and (normally) the contract's envelope.
    `retry_after`: the seconds its `Retry-After` asked for (429, 503), else None."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        code: str | None = None,
        details: Mapping[str, Any] | None = None,
        method: str = "",
        path: str = "",
        retry_after: float | None = None,
        request_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        #: The server's `X-Request-ID` for the answer (for Details and a bug report).
        self.request_id = request_id
        self.code = code
        self.details: dict[str, Any] = dict(details or {})
        self.method = method
        self.path = path
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(status={self.status}, code={self.code!r}, "
            f"{self.method} {self.path}, details={self.details!r})"
        )


class InvalidRequest(ApiError):
    """400 invalid_request: the request was malformed; a client bug or a stale cursor."""


class BadCursor(InvalidRequest):
    """400 on a request that carried a cursor: the key rotated or the cursor is foreign."""


class Unauthenticated(ApiError):
    """401: the token is missing or unknown to this server."""


class Forbidden(ApiError):
    """403: the token lacks the scope named in `required_scope`."""

    @property
    def required_scope(self) -> str | None:
        value = self.details.get("required_scope")
        return value if isinstance(value, str) else None


class NotFound(ApiError):
    """404: absent, never existed, another principal's, or (reason "deleted") tombstoned."""

    @property
    def reason(self) -> str | None:
        value = self.details.get("reason")
        return value if isinstance(value, str) else None


class Conflict(ApiError):
    """409 invalid_state: the resource's state forbids the operation right now."""

    @property
    def reason(self) -> str | None:
        value = self.details.get("reason")
        return value if isinstance(value, str) else None


class ActiveRunExists(Conflict):
    """409 on DELETE: a run is active; stop it (separately) before deleting."""

    @property
    def active_run_id(self) -> str | None:
        value = self.details.get("active_run_id")
        return value if isinstance(value, str) else None


class RunInProgress(Conflict):
    """409 on starting a run while another run of the session is active."""


class PayloadTooLarge(ApiError):
    """413: the request body exceeded the server's limit (1 MiB)."""


class RateLimited(ApiError):
    """429 rate_limited: the server asks the client to wait `retry_after` seconds (None:
    it did not say); idempotent requests wait and retry when that is short enough."""


class ServerError(ApiError):
    """500 internal, or any other 5xx: the server failed; nothing can be concluded."""


class Unavailable(ServerError):
    """503: the server is having trouble for a while (its database, a stream cap); not a
    hard error. Idempotent requests wait `retry_after` seconds (its `Retry-After`; None:
    it did not say, so the normal backoff) when that is short enough, then retry."""


class UnexpectedResponse(ApiError):
    """A status or body the contract does not allow for this route."""


class ResponseTooLarge(UnexpectedResponse):
    """An answer's body exceeded its byte cap (`sync.api.bounds.Bounds`), by its
    Content-Length or while it was read: the client stopped reading at the cap."""


class WalkOutOfBounds(UnexpectedResponse):
    """A paginated walk would not end: a cursor seen before, a page that does not advance,
    or more pages, items or bytes than the walk's cap. Nothing is pruned."""


class NetworkError(SyncError):
    """No HTTP answer at all: refused, timed out, or dropped mid-response."""


class ConnectionFailed(NetworkError):
    """No connection could be made (refused, DNS, connect timeout): the request was never
    sent, so it had no effect on the server."""


class TlsError(ConnectionFailed):
    """The TLS handshake failed, so nothing was sent; unlike a dropped connection it does
    not pass by itself, so the window shows it as an error, never as offline."""


class CertificateError(TlsError):
    """The server's certificate could not be verified against the operating system's trust
    store and the configured CA bundle (CONTRACT §10.1): the token was never sent."""


class DeadlineExceeded(NetworkError):
    """An answer arrived too slowly: a total deadline (of a request or of a pass) cut it.
    Like any `NetworkError` after sending, a write it cut may or may not have happened."""


class ResponseTooSlow(DeadlineExceeded):
    """One request (connect, headers and the whole body) overran its total deadline: a
    body that trickles a byte at a time never trips the per-read timeout, this does."""


class PassTooSlow(DeadlineExceeded):
    """The reconcile pass (walk and point reads) overran its total deadline."""


class WalkUnfinished(PassTooSlow):
    """The pass ran out of time or of its walk budget mid-walk, but the pages walked so far
    are in the mirror and the next pass goes on from there (`sync.reconcile.walk`): progress,
    not a failure."""

    def __init__(self, message: str, *, seen: int, estimate: int) -> None:
        super().__init__(message)
        self.seen = seen
        self.estimate = estimate


class BadId(SyncError):
    """An id that URL handling would not keep as one path segment (empty, `.`, `..`):
    refused before any request, so `delete .` can never become `DELETE /v1/sessions`."""


class IntegrityError(SyncError):
    """Downloaded artifact bytes do not match the sha256 in the artifact's metadata."""


class ConversationGone(SyncError):
    """The conversation left the mirror (deleted or pruned) while its data was on its way:
    nothing of it was kept."""


class ProfileError(SyncError):
    """The profile has no server URL or token, or its settings cannot be read."""


class LocalFileError(SyncError):
    """A file the client writes (an export, a saved file) could not be written: nothing was
    left under its name."""


class UnsafePath(LocalFileError):
    """A name from a server or from content would land outside the folder it is written to
    (`..`, an absolute path, a symlink pointing out): refused, nothing written."""


class MessageTooLong(SyncError):
    """A message whose text is longer than a server takes (`limit` code points): refused
    before any request, so a new conversation is not created empty for a message that the
    server would refuse."""

    def __init__(self, length: int, limit: int) -> None:
        super().__init__(
            f"This message is {length:,} characters long; the server takes at most {limit:,}."
        )
        self.length = length
        self.limit = limit


class SearchTooLong(SyncError):
    """A search holds more words than one query may (`limit` of them): nothing was read."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"A search can hold at most {limit} words.")
        self.limit = limit


class MirrorError(SyncError):
    """The local mirror database cannot be opened or used."""


class MirrorTooNew(MirrorError):
    """The mirror's schema is newer than this program: it is left exactly as it is."""

    def __init__(self, message: str, *, found: int, supported: int) -> None:
        super().__init__(message)
        self.found = found
        self.supported = supported


class MirrorDamaged(MirrorError):
    """The mirror file fails SQLite's check or lacks a table or column of its schema
    (`sync.mirror.check`): nothing more is read from it. The one way forward is a rebuild
    from the server (`sync.repair`), which the message names. `reason` is SQLite's own
    short account of the damage, for logs and Details."""

    def __init__(self, message: str, *, path: str, reason: str) -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason


class MirrorUnwritable(MirrorError):
    """A rebuilt mirror cannot take the mirror's place: a folder stands at its name, or its
    folder is read-only. Found before anything is written, so nothing was changed."""


class CacheError(MirrorError):
    """Artifact bytes could not be written to the profile's cache folder (disk full, no
    permission): nothing was kept, no partial file is left, the mirror is unchanged."""


def loggable(error: SyncError) -> str:
    """What a log line may say about an error: its class and, for an API error, its status,
    code, method, path and details; never its message, which can quote a conversation's
    title or a file's name (CONTRACT §9.2: the client's logs hold no content)."""
    if isinstance(error, ApiError):
        return repr(error)
    return type(error).__name__


_BY_CODE: dict[str, type[ApiError]] = {
    "invalid_request": InvalidRequest,
    "unauthenticated": Unauthenticated,
    "forbidden": Forbidden,
    "not_found": NotFound,
    "invalid_state": Conflict,
    "payload_too_large": PayloadTooLarge,
    "rate_limited": RateLimited,
    "internal": ServerError,
    "unavailable": Unavailable,
}

_BY_STATUS: dict[int, type[ApiError]] = {
    400: InvalidRequest,
    401: Unauthenticated,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    429: RateLimited,
    500: ServerError,
    503: Unavailable,
}


def error_class_for(status: int, code: str | None, details: Mapping[str, Any]) -> type[ApiError]:
    """Pick the most specific class for an error answer.

    The status decides first (a proxy's bare 503 has no envelope); the code and the details
    refine it (409 `active_run_exists` vs `run_in_progress`).
    """
    if status == 404 and code != "not_found":
        # CONTRACT §9.3: only the contract's own 404 proves absence. A bare 404 (a wrong
        # base URL, a proxy, another service) proves nothing and must not prune or "delete".
        return UnexpectedResponse
    cls = _BY_STATUS.get(status)
    if cls is None:
        if status >= 500:
            cls = ServerError
        elif code is not None and code in _BY_CODE:
            cls = _BY_CODE[code]
        else:
            cls = UnexpectedResponse
    if cls is Conflict:
        reason = details.get("reason")
        if reason == "active_run_exists":
            cls = ActiveRunExists
        elif reason == "run_in_progress":
            cls = RunInProgress
    return cls
