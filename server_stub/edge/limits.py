"""The process's open-files limit, and the connection caps sized from it.

Every held index watch and every SSE stream is an open socket: a file descriptor for as long
as it lasts. Under the usual soft limit of 1,024 one principal holding more connections than
that would leave the process unable to open its database or accept anyone else (500s for
every tenant).
So the server raises its soft `RLIMIT_NOFILE` to the hard limit at start
(`raise_open_files_limit`: the `converge-server` CLI and `ServerThread` call it), and sizes
the per-process caps on connections from what it got (`connection_caps`): whatever the
principals do, `reserve` descriptors stay free for the database, the object store and the
listening socket, and held connections leave room for ordinary short requests.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import resource
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from server_stub.observe.ratelog import RepeatLog

log = logging.getLogger(__name__)

#: Used when the hard limit is unlimited (Linux refuses an unlimited soft limit for files).
UNLIMITED_TARGET = 1 << 20
#: Descriptors never given to held connections: at least this many, or an eighth.
MIN_RESERVE = 128


def open_files_limit() -> int:
    """The soft open-files limit now in effect."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return UNLIMITED_TARGET if soft == resource.RLIM_INFINITY else int(soft)


def raise_open_files_limit() -> int:
    """Raise the soft open-files limit to the hard one; return the soft limit in effect.

    A refusal (a container that forbids it) is logged and the current limit kept: the caps
    are then sized from that smaller limit, so the server stays correct, only smaller."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = UNLIMITED_TARGET if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError) as exc:
            log.warning("could not raise the open-files limit from %d to %d: %s", soft, target, exc)
    return open_files_limit()


@dataclass(frozen=True)
class ConnectionCaps:
    """How many connections this process keeps open (in all, and per peer address), and how
    many of them may be SSE streams and held watches (each)."""

    connections: int
    per_peer: int
    streams: int
    watches: int
    reserve: int


def connection_caps(nofile: int) -> ConnectionCaps:
    """Per-process caps for an open-files limit of `nofile`.

    Connections get what is left after the reserve (`server_stub.edge.connections`); streams
    and watches three eighths of them each (at least 16, for a tiny limit), so a quarter is
    always there for ordinary requests; one peer address gets half, so another peer always
    finds room even when one fills its half with requests in progress:
    1,024 → 896 connections, 448 per peer, 336 streams and 336 watches, 128 kept;
    65,536 → 57,344, 28,672, 21,504 each, 8,192 kept."""
    reserve = max(MIN_RESERVE, nofile // 8)
    connections = max(64, nofile - reserve)
    each = max(16, connections * 3 // 8)
    return ConnectionCaps(
        connections=connections,
        per_peer=max(32, connections // 2),
        streams=each,
        watches=each,
        reserve=reserve,
    )


#: The errors of `accept()` that mean "out of descriptors or memory" (asyncio retries them).
_RESOURCE_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


def log_accept_errors_once(
    loop: asyncio.AbstractEventLoop, repeat_log: RepeatLog
) -> Callable[[], None]:
    """Route the loop's "socket.accept() out of system resource" reports through
    `repeat_log` (asyncio reports each failed accept, with a traceback, and retries a second
    later: for ever while a principal holds the descriptors); every other report goes to the
    handler that was there. Returns the function that puts that handler back."""
    previous = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in _RESOURCE_ERRNOS:
            repeat_log.warning(
                "accept-" + errno.errorcode.get(exc.errno or 0, "error"),
                "cannot accept connections: %s (open-files limit %d)",
                exc.strerror,
                open_files_limit(),
            )
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
    return lambda: loop.set_exception_handler(previous)
