"""The HTTP/1.1 connection bounds of the stub, on uvicorn's h11 protocol.

uvicorn alone closes an idle connection only after it has answered a request
(`timeout_keep_alive`): a client that connects and sends nothing, or trickles its request
head a byte at a time, would hold a connection (and a file descriptor) for ever. And a request
head larger than h11's limit (`h11_max_incomplete_event_size`, 16 KiB for the request line and
headers together) would get a plain-text 400. This protocol adds:

- a head timeout: a request line and headers must be complete within `head_timeout` seconds
  of the connection opening (or of the previous response ending), else the connection is
  closed without an answer;
- the contract's envelope for a head the parser rejects: 414 when the request line alone
  exceeds the limit, 431 when the headers do, 400 for anything else malformed (code
  `invalid_request` for all three: the contract's code list has no other 4xx code that fits);
- 400 and a closed connection for a request framed twice, by `Content-Length` and by
  `Transfer-Encoding` (RFC 9112 §6.1): a proxy reading the other framing than ours would let
  a second request ride in the body;
- its place in the server's `ConnectionTable` (server_stub.edge.connections): idle from the
  connection's start and after each answer is written, busy from each request head, so that
  past a connection cap the longest-idle connection is the one closed.

Bodies are bounded separately (server_stub.edge.bodylimit, 413).
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from server_stub.edge.connections import ConnectionTable
from server_stub.edge.errors import envelope_bytes

HEAD_LIMIT = 16 * 1024


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a head timeout and enveloped 400/414/431."""

    head_timeout: float = 10.0
    table: ConnectionTable | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None
        self._peer = ""
        self._error_status = 400
        parse = self.conn.next_event

        def next_event() -> Any:
            try:
                event = parse()
            except h11.RemoteProtocolError as exc:
                self._error_status = self._status_for(exc)
                raise
            if isinstance(event, h11.Request):
                self._disarm_head_timer()
                if self.table is not None:
                    self.table.busy(self)
                # h11 bounds only a head that arrives in pieces; one that arrives whole is
                # measured here, so the bound does not depend on packet boundaries.
                if len(event.target) > HEAD_LIMIT:
                    self._error_status = 414
                    raise h11.RemoteProtocolError("request line too long", 414)
                if sum(len(k) + len(v) + 4 for k, v in event.headers) > HEAD_LIMIT:
                    self._error_status = 431
                    raise h11.RemoteProtocolError("request headers too large", 431)
                names = {name for name, _value in event.headers}
                if b"content-length" in names and b"transfer-encoding" in names:
                    raise h11.RemoteProtocolError("both Content-Length and Transfer-Encoding")
            return event

        self.conn.next_event = next_event  # type: ignore[method-assign]

    def _status_for(self, exc: h11.RemoteProtocolError) -> int:
        if exc.error_status_hint != 431:
            return 400
        pending = bytes(getattr(self.conn, "_receive_buffer", b""))
        return 431 if b"\n" in pending else 414

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_timer()
        if self.table is not None:
            address = transport.get_extra_info("peername")
            self._peer = str(address[0]) if address else ""
            self.table.opened(self, tuple(address) if address else None)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_timer()
        if self.table is not None:
            self.table.closed(self)
            self.table = None  # a second connection_lost (uvicorn's own close) counts nothing
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_head_timer()
            if self.table is not None and self.cycle is not None and self.cycle.response_complete:
                self.table.idle(self)

    # What server_stub.edge.connections.ConnectionTable asks of a connection.

    def peer(self) -> str:
        return self._peer

    def closeable(self) -> bool:
        """Idle, with its last answer written out (closing it loses its client nothing)."""
        return not self.transport.is_closing() and self.transport.get_write_buffer_size() == 0

    def shed(self) -> None:
        """Closed to make room for a new connection (it was idle)."""
        self._disarm_head_timer()
        self.transport.close()

    def _arm_head_timer(self) -> None:
        self._disarm_head_timer()
        self._head_timer = self.loop.call_later(self.head_timeout, self._head_timed_out)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if not self.transport.is_closing():
            self.transport.close()

    def send_400_response(self, msg: str) -> None:
        status = self._error_status
        messages = {
            400: "malformed HTTP request",
            414: f"request line too long (the request head is limited to {HEAD_LIMIT} bytes)",
            431: f"request headers too large (the request head is limited to {HEAD_LIMIT} bytes)",
        }
        body = envelope_bytes(status, messages[status], code="invalid_request")
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        self._disarm_head_timer()
        for event in (
            h11.Response(status_code=status, headers=headers),
            h11.Data(data=body),
            h11.EndOfMessage(),
        ):
            output = self.conn.send(event)
            if output:
                self.transport.write(output)
        self.transport.close()


def bounded_protocol(
    head_timeout: float, table: ConnectionTable | None = None
) -> type[BoundedH11Protocol]:
    """The protocol class with this server's head timeout and connection table (uvicorn
    instantiates it; `ConvergeServer` guards the listening sockets with the same table)."""
    attributes = {"head_timeout": head_timeout, "table": table}
    return type("BoundedH11Protocol", (BoundedH11Protocol,), attributes)
