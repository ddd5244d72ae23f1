"""What a failed request means to the user: the one table from a `sync` error to words, the
fixes to offer (Open Settings, Retry, Save…) and the technical Details (docs/ui.md, "Errors
that say what to do"; decision 0181).

Every window action (`ui.window.action`), the pane's notice (`ui.pane.notice`) and the
sidebar's empty state read this table; none of them words an error of its own. It branches on
the error's class (CONTRACT §10), never on its message, and for a connection that was never
made on the operating system's reason: a network that is down is "offline" (it comes back by
itself), a host that refuses or does not resolve is "Can't reach <host>" (a setting to check).
"""

from __future__ import annotations

import errno
import socket
from dataclasses import dataclass
from enum import StrEnum

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from sync import (
    ApiError,
    CertificateError,
    Conflict,
    ConnectionFailed,
    DeadlineExceeded,
    Forbidden,
    InvalidRequest,
    LocalFileError,
    MessageTooLong,
    MirrorError,
    NetworkError,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    RunInProgress,
    ServerError,
    SyncError,
    TlsError,
    Unauthenticated,
    Unavailable,
)
from ui.text.plain import isolate

#: The operating system's reasons that mean "this device has no network", not "that host".
_NETWORK_DOWN = frozenset(
    {errno.ENETUNREACH, errno.ENETDOWN, errno.EHOSTUNREACH, socket.EAI_AGAIN}
    | ({socket.EAI_NODATA} if hasattr(socket, "EAI_NODATA") else set())
)


class Fix(StrEnum):
    """What the notice offers next to the words."""

    SETTINGS = "Open Settings"
    RETRY = "Retry"
    SAVE = "Save…"


#: The fixes' words for lupdate: they are translated where shown (ui/pane/notice.py).
_FIX_WORDS = (
    QT_TRANSLATE_NOOP("ConversationPane", "Open Settings"),
    QT_TRANSLATE_NOOP("ConversationPane", "Retry"),
    QT_TRANSLATE_NOOP("ConversationPane", "Save…"),
)


class Cause(StrEnum):
    """The kind of failure, for code that reacts to it (never shown)."""

    TOKEN = "token"  # 401
    READ_ONLY = "read-only"  # 403
    CERTIFICATE = "certificate"
    TLS = "tls"
    UNREACHABLE = "unreachable"  # refused, DNS, a wrong URL
    OFFLINE = "offline"  # no network at all
    SLOW = "slow"  # sent, no answer in time, or the connection dropped
    TROUBLE = "trouble"  # 503
    LIMITED = "limited"  # 429
    BUSY = "busy"  # 409 run in progress
    CONFLICT = "conflict"  # other 409
    REJECTED = "rejected"  # 400, 413
    GONE = "gone"  # the contract's 404
    SERVER = "server"  # 500 and other unexpected answers
    LOCAL = "local"  # this device: a file, the mirror, the cache
    INTERNAL = "internal"  # a bug: the log has it


@dataclass(frozen=True)
class Failure:
    """A failed request in words: `words` for the pane and the status line, `fixes` for
    its buttons, `details` behind Details; `network` when the network may be the reason
    (the window then checks for offline at once)."""

    cause: Cause
    words: str
    fixes: tuple[Fix, ...]
    details: str
    network: bool = False


def host_of(server_url: str) -> str:
    """`https://chat.example.org:8443/` -> `chat.example.org:8443` (what a user typed)."""
    rest = server_url.split("://", 1)[-1]
    return rest.split("/", 1)[0] or server_url


def network_down(error: BaseException) -> bool:
    """The connection failed because this device has no network (the OS said so)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in _NETWORK_DOWN:
            return True
        current = current.__cause__ or current.__context__
    return False


def _cause(error: BaseException, host: str) -> tuple[Cause, str, tuple[Fix, ...]]:
    """The cause, its clause ("the server refused this device's token") and its fixes."""
    settings, retry = Fix.SETTINGS, Fix.RETRY
    where = isolate(host) if host else QCoreApplication.translate("FailureWords", "the server")
    match error:
        case Unauthenticated():
            return (
                Cause.TOKEN,
                QCoreApplication.translate(
                    "FailureWords", "The server refused this device's token"
                ),
                (settings,),
            )
        case Forbidden():
            scope = error.required_scope
            clause = (
                QCoreApplication.translate(
                    "FailureWords",
                    "This device's token is read-only for this (it needs the “{0}” permission)",
                ).format(isolate(scope))
                if scope
                else QCoreApplication.translate(
                    "FailureWords", "This device's token is read-only for this"
                )
            )
            return Cause.READ_ONLY, clause, (settings,)
        case CertificateError():
            clause = QCoreApplication.translate(
                "FailureWords", "The certificate of {0} could not be verified"
            ).format(where)
            return Cause.CERTIFICATE, clause, (settings,)
        case TlsError():
            clause = QCoreApplication.translate(
                "FailureWords", "A secure connection to {0} could not be set up"
            ).format(where)
            return Cause.TLS, clause, (settings,)
        case ConnectionFailed() if network_down(error):
            return (
                Cause.OFFLINE,
                QCoreApplication.translate("FailureWords", "You're offline"),
                (retry,),
            )
        case ConnectionFailed():
            return (
                Cause.UNREACHABLE,
                QCoreApplication.translate("FailureWords", "Can't reach {0}").format(where),
                (settings, retry),
            )
        case DeadlineExceeded():
            return (
                Cause.SLOW,
                QCoreApplication.translate("FailureWords", "{0} didn't answer in time").format(
                    where
                ),
                (retry,),
            )
        case NetworkError():
            return (
                Cause.SLOW,
                QCoreApplication.translate("FailureWords", "The connection to {0} was lost").format(
                    where
                ),
                (retry,),
            )
        case Unavailable():
            return (
                Cause.TROUBLE,
                QCoreApplication.translate(
                    "FailureWords", "The server is having trouble; retrying…"
                ),
                (retry,),
            )
        case RateLimited():
            return Cause.LIMITED, error.message.rstrip("."), (retry,)
        case RunInProgress():
            return (
                Cause.BUSY,
                QCoreApplication.translate(
                    "FailureWords", "A reply is still running here. Stop it or wait for it to end"
                ),
                (),
            )
        case Conflict():
            return (
                Cause.CONFLICT,
                QCoreApplication.translate(
                    "FailureWords", "It conflicts with what the server has now"
                ),
                (retry,),
            )
        case PayloadTooLarge() | MessageTooLong():
            return (
                Cause.REJECTED,
                QCoreApplication.translate("FailureWords", "It is larger than the server accepts"),
                (),
            )
        case InvalidRequest():
            return (
                Cause.REJECTED,
                QCoreApplication.translate("FailureWords", "The server did not accept it"),
                (),
            )
        case NotFound():
            return (
                Cause.GONE,
                QCoreApplication.translate("FailureWords", "It is no longer on the server"),
                (),
            )
        case ServerError():
            return (
                Cause.SERVER,
                QCoreApplication.translate("FailureWords", "The server had a problem"),
                (retry,),
            )
        case ApiError():
            return (
                Cause.SERVER,
                QCoreApplication.translate(
                    "FailureWords", "{0} answered something unexpected"
                ).format(where),
                (settings, retry),
            )
        case LocalFileError() | MirrorError():
            return Cause.LOCAL, error.message.rstrip("."), ()
        case SyncError():
            return Cause.SERVER, error.message.rstrip("."), (retry,)
    return (
        Cause.INTERNAL,
        QCoreApplication.translate(
            "FailureWords", "An internal error happened (details are in the log)"
        ),
        (),
    )


def details_of(error: BaseException) -> str:
    """The technical words behind Details: status, code, the server's message and its
    request id when it sent one (never a traceback)."""
    if not isinstance(error, SyncError):
        return type(error).__name__
    lines = [error.message]
    if isinstance(error, ApiError):
        status = f"HTTP {error.status}" + (f" ({error.code})" if error.code else "")
        if error.method or error.path:
            status += f" on {error.method} {error.path}".rstrip()
        lines.append(status)
        if error.request_id:
            lines.append(f"Request id: {error.request_id}")
    else:
        lines.append(type(error).__name__)
    return "\n".join(lines)


def describe(error: BaseException, what: str = "", host: str = "") -> Failure:
    """`what` failed because of `error`: "Couldn't send the message: Can't reach
    example.org." The clause alone when `what` is empty."""
    cause, clause, fixes = _cause(error, host)
    words = (
        QCoreApplication.translate("FailureWords", "{0}. {1}.").format(what, clause)
        if what
        else QCoreApplication.translate("FailureWords", "{0}.").format(clause)
    )
    network = isinstance(error, NetworkError) and not isinstance(error, TlsError)
    return Failure(cause, words, fixes, details_of(error), network)


def index_unread(error: SyncError | None, host: str) -> Failure | None:
    """Why the conversation list could not be read, when it was not merely offline or
    busy: the sidebar says this instead of "No conversations yet"."""
    if error is None:
        return None
    failure = describe(
        error, QCoreApplication.translate("FailureWords", "Couldn't list the conversations"), host
    )
    if failure.cause in (Cause.OFFLINE, Cause.SLOW, Cause.TROUBLE, Cause.LIMITED):
        return None  # the status line says offline or "having trouble"; it passes
    return failure
