"""Caps on open connections, in total and per peer, that close idle connections first.

Every connection is a file descriptor. Without a cap, a crowd of connections that send
nothing (or that a keep-alive holds between requests) takes the process to its open-files
limit; `accept()` then fails with EMFILE, asyncio stops accepting for a second at a time, and
every new connection of every tenant waits in the kernel's backlog until the head timeout or
the keep-alive timeout frees descriptors, for seconds. So `ConnectionTable` keeps the count of
open connections below `limit` (sized from the open-files limit, `limits.connection_caps`) and
each peer address below `per_peer`, and `GuardedListener` asks it at every accept:

- within the caps, the connection is accepted;
- past one, the longest-idle connection (of everyone for the total cap, of that peer for its
  own) is closed to make room: one with no request head yet, or between two requests with its
  last answer written out; never one in the middle of a request;
- only when none is idle is the new connection refused (closed at once).

An idle connection is worth nothing to its client that a reconnect does not give back, while
a request waiting in the backlog is a user waiting. The accept checks run before asyncio hands
the socket to a protocol, so a burst of connects in one tick cannot overshoot the cap by more
than `slack` descriptors (the rest wait in the backlog for the next tick, when the closed
connections have given theirs back); EMFILE is never reached.
"""

from __future__ import annotations

import logging
import socket
import time
from collections import Counter, OrderedDict
from typing import Any, Protocol

from server_stub.edge.limits import connection_caps
from server_stub.observe.ratelog import RepeatLog

log = logging.getLogger("server_stub.load")

#: An accepted socket not handed to a protocol after this long never will be (a TLS handshake
#: that failed): it stops counting.
PENDING_SECONDS = 5.0


class Connection(Protocol):
    """What the table needs of a connection (server_stub.edge.protocol.BoundedH11Protocol)."""

    def peer(self) -> str: ...

    def closeable(self) -> bool: ...

    def shed(self) -> None: ...


class ConnectionTable:
    """The open connections of one server, the idle ones in the order they became idle."""

    def __init__(
        self,
        limit: int | None = None,
        per_peer: int | None = None,
        repeat_log: RepeatLog | None = None,
    ) -> None:
        """`limit`, `per_peer`: None sizes them from the open-files limit at `size`."""
        self._limit_setting = limit
        self._per_peer_setting = per_peer
        self.limit = limit if limit is not None else 1 << 30
        self.per_peer = per_peer if per_peer is not None else 1 << 30
        self.slack = 64
        self.repeat_log = repeat_log or RepeatLog(log)
        self._idle: OrderedDict[Connection, None] = OrderedDict()
        self._idle_by_peer: dict[str, OrderedDict[Connection, None]] = {}
        self._peers: Counter[str] = Counter()
        self._closing: set[Connection] = set()
        self._pending: dict[tuple[Any, ...], float] = {}  # accepted, not yet a protocol
        self.open = 0
        self.shed_count = 0
        self.refused = 0

    def size(self, nofile: int) -> None:
        """Size the caps not set explicitly from the open-files limit `nofile`."""
        caps = connection_caps(nofile)
        self.limit = self._limit_setting if self._limit_setting is not None else caps.connections
        # Half the total, the total explicit or not (`connection_caps` sizes it so too).
        self.per_peer = (
            self._per_peer_setting
            if self._per_peer_setting is not None
            else max(1, min(caps.per_peer, self.limit // 2))
        )
        self.slack = max(1, caps.reserve // 2)

    # The protocol's side.

    def opened(self, conn: Connection, address: tuple[Any, ...] | None) -> None:
        """A connection was handed to its protocol; it is idle until its request head."""
        if address is not None:
            self._pending.pop(address, None)
        self.open += 1
        peer = conn.peer()
        self._peers[peer] += 1
        self.idle(conn)
        # Let in past a cap during a burst (`accepted`): the longest idle make room now.
        if self._kept() > self.limit:
            self._shed(None)
        if self._peers[peer] - self._closing_of(peer) > self.per_peer:
            self._shed(peer)

    def closed(self, conn: Connection) -> None:
        self.busy(conn)
        self._closing.discard(conn)
        self.open -= 1
        peer = conn.peer()
        self._peers[peer] -= 1
        if self._peers[peer] <= 0:
            del self._peers[peer]

    def idle(self, conn: Connection) -> None:
        """The connection has no request in progress (none yet, or its answer is written)."""
        self._idle[conn] = None
        self._idle.move_to_end(conn)
        by_peer = self._idle_by_peer.setdefault(conn.peer(), OrderedDict())
        by_peer[conn] = None
        by_peer.move_to_end(conn)

    def busy(self, conn: Connection) -> None:
        """A request head arrived: the connection is not closeable until it is answered."""
        if conn in self._idle:
            del self._idle[conn]
            peer = conn.peer()
            by_peer = self._idle_by_peer[peer]
            del by_peer[conn]
            if not by_peer:
                del self._idle_by_peer[peer]

    # The listener's side.

    def room(self) -> bool:
        """Before an accept: whether a descriptor may be taken now (False: leave the backlog
        until the connections being closed have given theirs back, at the next tick)."""
        now = time.monotonic()
        while self._pending:
            oldest, stamp = next(iter(self._pending.items()))
            if now - stamp < PENDING_SECONDS:
                break
            del self._pending[oldest]
        return self.open + len(self._pending) < self.limit + self.slack

    def accepted(self, address: tuple[Any, ...]) -> bool:
        """Whether the connection just accepted from `address` may stay, once room is made
        for it by closing the longest-idle connection if a cap is reached; False: refuse it.

        Connections accepted but not yet handed to their protocol cannot be closed yet; while
        there are some, a connection past a cap is let in (they become idle at the next tick
        and `opened` closes the excess), so a burst is never refused for want of idle ones."""
        peer = str(address[0])
        if self._kept() >= self.limit and not self._shed(None) and not self._pending:
            return self._refuse("connection-cap", "the cap of %d connections", self.limit)
        if (
            self._peers[peer] - self._closing_of(peer) >= self.per_peer
            and not self._shed(peer)
            and not any(str(pending[0]) == peer for pending in self._pending)
        ):
            return self._refuse(
                "connection-cap-peer", "the cap of %d connections per peer", self.per_peer
            )
        self._pending[address] = time.monotonic()
        return True

    def _kept(self) -> int:
        """Connections that stay open: accepted, and not being closed."""
        return self.open + len(self._pending) - len(self._closing)

    def _closing_of(self, peer: str) -> int:
        if not self._closing:
            return 0
        return sum(1 for conn in self._closing if conn.peer() == peer)

    def _shed(self, peer: str | None) -> bool:
        idle = self._idle if peer is None else self._idle_by_peer.get(peer)
        if not idle:
            return False
        for conn in list(idle):
            if conn.closeable():
                self.busy(conn)
                self._closing.add(conn)
                self.shed_count += 1
                conn.shed()
                return True
        return False

    def _refuse(self, key: str, what: str, limit: int) -> bool:
        self.refused += 1
        self.repeat_log.warning(
            key, "connection refused: %s is reached and none is idle", what % limit
        )
        return False


class GuardedListener(socket.socket):
    """A listening socket whose `accept` asks its `ConnectionTable` (asyncio calls it in a
    loop for every connection waiting in the backlog)."""

    table: ConnectionTable

    def accept(self) -> tuple[socket.socket, Any]:
        while True:
            if not self.table.room():
                raise BlockingIOError  # the rest stay in the backlog until the next tick
            conn, address = super().accept()
            if self.table.accepted(address):
                return conn, address
            conn.close()


def guarded(sock: socket.socket, table: ConnectionTable) -> GuardedListener:
    """`sock` (bound) as a `GuardedListener` of `table`; `sock` itself is detached."""
    listener = GuardedListener(sock.family, sock.type, sock.proto, fileno=sock.detach())
    listener.table = table
    return listener


def listen(host: str, port: int) -> list[socket.socket]:
    """Sockets bound to every address of `host` at `port`, as asyncio's `create_server` binds
    them (SO_REUSEADDR; an IPv6 socket takes IPv6 only; getaddrinfo's protocol is TCP, so
    TCP_NODELAY is kept, PITFALLS §3). Bound before anything starts, so an address in use is
    one sentence rather than uvicorn's log and traceback; an OSError says why it cannot."""
    sockets: list[socket.socket] = []
    try:
        infos = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
        for family, kind, proto, _name, address in infos:
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets
