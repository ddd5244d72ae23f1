"""TCP keepalive on the client's sockets, so a peer that vanished is noticed in seconds.

A connection whose peer disappears without FIN or RST (a pulled cable, a NAT that forgot
the flow, a paused host) sends nothing and raises nothing: a held watch (CONTRACT §9.1)
would wait for its whole read timeout before it noticed. Keepalive probes an idle
connection after `IDLE` seconds, every `INTERVAL` seconds, and the kernel drops it after
`COUNT` unanswered probes: about `IDLE + INTERVAL * COUNT` seconds, for a few small packets.

It cannot help when a middlebox that terminates TCP itself (a proxy) stops forwarding: its
own kernel answers the probes. That case is bounded by the watch's short hold and read
margin (`sync.reconcile.watch`, decision 0100). The per-option constants exist only on some
platforms (Linux has all three; macOS names the idle time `TCP_KEEPALIVE`; Windows has
none of them in `socket`): what the platform lacks is left at its default.
"""

from __future__ import annotations

import socket

IDLE = 5  # seconds of silence before the first probe
INTERVAL = 3  # seconds between probes
COUNT = 3  # unanswered probes before the connection is dropped

#: (level, option, value) triples as `httpx.AsyncHTTPTransport(socket_options=...)` takes them.
SocketOption = tuple[int, int, int]


def keepalive_socket_options() -> list[SocketOption]:
    """SO_KEEPALIVE and, where the platform names them, the idle, interval and count."""
    options: list[SocketOption] = [(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)]
    idle = getattr(socket, "TCP_KEEPIDLE", getattr(socket, "TCP_KEEPALIVE", None))  # macOS
    for option, value in (
        (idle, IDLE),
        (getattr(socket, "TCP_KEEPINTVL", None), INTERVAL),
        (getattr(socket, "TCP_KEEPCNT", None), COUNT),
    ):
        if isinstance(option, int):
            options.append((socket.IPPROTO_TCP, option, value))
    return options
