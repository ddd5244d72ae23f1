"""Which database errors are outages, how to name them, and logging them once per interval.

An outage is the database refusing connections or writes for a while: a full disk, an I/O
error, a file that cannot be opened (SQLite), a connection refused or cut, a server shutting
down, crashing or starting up, no room left (PostgreSQL). Requests answer it with 503
`unavailable` and `Retry-After` (`server_stub.edge.errors`), never 500: nothing is wrong with the
request, and the client may retry (CONTRACT §10.2). A run whose write failed this way is
failed with `reason(...)` once the database accepts writes again (`server_stub.domain.agent`).

Anything else (a constraint violation, a bug) is not an outage: it stays a 500 `internal`.
"""

from __future__ import annotations

import logging
import threading
import time

from sqlalchemy import exc as sa_exc

log = logging.getLogger(__name__)

#: Seconds a client is asked to wait before retrying (`Retry-After`).
RETRY_AFTER_SECONDS = 2
#: At most one log line per this many seconds for a repeating outage.
LOG_INTERVAL_SECONDS = 30.0

# SQLite's messages (sqlite3 has no error codes before Python 3.11's `sqlite_errorname`,
# and the message is what every version carries): (fragment, what the run's reason says).
_SQLITE = (
    ("database or disk is full", "the database refused a write: disk full"),
    ("disk i/o error", "the database refused a write: disk I/O error"),
    ("unable to open database", "the database was unavailable: it could not be opened"),
    ("database is locked", "the database was unavailable: it stayed locked"),
    ("attempt to write a readonly database", "the database refused a write: read-only"),
)
# PostgreSQL SQLSTATEs: class 08 (connection exception), 57P01..57P03 (admin shutdown,
# crash shutdown, cannot connect now), 53xxx (insufficient resources, 53100 disk full).
_PG_STATES = {
    "57P01": "the database was unavailable: the database server shut down",
    "57P02": "the database was unavailable: the database server crashed",
    "57P03": "the database was unavailable: the database server was starting or stopping",
    "53100": "the database refused a write: disk full",
}
_PG_MESSAGES = (
    ("the database system is starting up", _PG_STATES["57P03"]),
    ("the database system is shutting down", _PG_STATES["57P03"]),
    ("the database system is in recovery mode", _PG_STATES["57P03"]),
    ("terminating connection due to administrator command", _PG_STATES["57P01"]),
)
_PG_CONNECTION = "the database was unavailable: the connection failed"


def reason(error: BaseException) -> str | None:
    """The outage `error` stands for, in words ("the database refused a write: disk full"),
    or None when it is no outage."""
    if not isinstance(error, sa_exc.DBAPIError):
        return None
    orig = error.orig
    text = str(orig).lower()
    module = type(orig).__module__
    if module.startswith("sqlite3"):
        if not isinstance(error, sa_exc.OperationalError):
            return None
        return next((said for fragment, said in _SQLITE if fragment in text), None)
    if not module.startswith("psycopg"):
        return None
    state = getattr(orig, "sqlstate", None)
    if isinstance(state, str):
        if state in _PG_STATES:
            return _PG_STATES[state]
        if state.startswith("08"):
            return _PG_CONNECTION
        if state.startswith("53"):
            return "the database refused a write: it ran out of resources"
    found = next((said for fragment, said in _PG_MESSAGES if fragment in text), None)
    if found is not None:
        return found
    # No SQLSTATE: the failure happened below the protocol (refused, reset, closed).
    if error.connection_invalidated or (
        state is None and isinstance(error, sa_exc.OperationalError | sa_exc.InterfaceError)
    ):
        return _PG_CONNECTION
    return None


#: A short fixed name for each reason (the `kind` label of `converge_database_errors`).
_KINDS = {
    "the database refused a write: disk full": "disk_full",
    "the database refused a write: disk I/O error": "io_error",
    "the database was unavailable: it could not be opened": "cannot_open",
    "the database was unavailable: it stayed locked": "locked",
    "the database refused a write: read-only": "read_only",
    _PG_STATES["57P01"]: "server_shutdown",
    _PG_STATES["57P02"]: "server_crashed",
    _PG_STATES["57P03"]: "server_starting_or_stopping",
    "the database refused a write: it ran out of resources": "out_of_resources",
    _PG_CONNECTION: "connection",
}


def kind(error: BaseException) -> str:
    """The outage's short name (`disk_full`, `connection`, …), or `other` for an error that
    is no outage (a constraint, a bug): one of a fixed set, never text from the error."""
    said = reason(error)
    return "other" if said is None else _KINDS.get(said, "outage")


def is_outage(error: BaseException) -> bool:
    """Whether `error` is the database refusing for a while (worth a retry)."""
    return reason(error) is not None


class OutageLog:
    """Logs a repeating outage once per `interval` seconds (with how many were not logged),
    so a database that is down for a minute under load writes a few lines, not thousands."""

    def __init__(self, logger: logging.Logger, interval: float = LOG_INTERVAL_SECONDS) -> None:
        self._log = logger
        self._interval = interval
        self._lock = threading.Lock()
        self._next = 0.0
        self._quiet = 0

    def report(self, what: str, error: BaseException) -> None:
        """Log `what` and the outage's reason, unless one was logged within the interval."""
        now = time.monotonic()
        with self._lock:
            if now < self._next:
                self._quiet += 1
                return
            quiet, self._quiet = self._quiet, 0
            self._next = now + self._interval
        more = f" ({quiet} more since the last report)" if quiet else ""
        self._log.warning("%s: %s%s", what, reason(error) or type(error).__name__, more)
