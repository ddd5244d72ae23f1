"""The `Host` check: only loopback names and the operator's `--allowed-host` names are served.

A server on a desktop listens on loopback, but a web page the user opens can still reach it
through DNS rebinding: the page's own name is made to resolve to 127.0.0.1, and its script
then talks to the server as a same-origin page, sending `Host: attacker.example`. Refusing
every `Host` that is not loopback (or named by the operator) closes that door for every path,
before authentication (CONTRACT §10.2). What counts as loopback is recorded in
docs/contract-notes.md: `localhost`, names under `.localhost` (RFC 6761: they never leave
the machine), any `127.0.0.0/8` address and `[::1]`, each with any port or none.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable

from starlette.types import ASGIApp, Receive, Scope, Send

from server_stub.edge.errors import envelope_bytes

#: `host[:port]` as RFC 9110 allows it: a bracketed IPv6 literal or a run of name characters,
#: then an optional port of at most five digits. Anything else is malformed.
_HOST = re.compile(
    r"(?:\[(?P<ip6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9._~-]+))(?::(?P<port>\d{0,5}))?"
)
_NAME = re.compile(r"(?:\*\.)?[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?")


def normalized_name(value: str) -> str:
    """An `--allowed-host` value as it is compared (lower case); ValueError when it is not a
    plain host name or address (`*.` may start a name, to admit every name under it)."""
    name = value.strip().lower()
    if ":" in name:  # an IPv6 literal, with or without its brackets
        try:
            return f"[{ipaddress.IPv6Address(name.removeprefix('[').removesuffix(']'))}]"
        except ValueError:
            raise ValueError(f"--allowed-host {value!r} is not a host name or address") from None
    if not _NAME.fullmatch(name) or ".." in name:
        raise ValueError(f"--allowed-host {value!r} is not a host name or address")
    return name


def _is_loopback_ip(text: str) -> bool:
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def is_loopback_name(host: str) -> bool:
    """True for a name or address that can only mean this machine (no port, no brackets
    except around IPv6): what `--host` must be for `--control`, and what Host may name."""
    host = host.lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if ":" in host:  # an IPv6 literal
        return _is_loopback_ip(host)
    if host == "localhost" or host.endswith(".localhost"):
        return bool(_NAME.fullmatch(host)) and not host.startswith("*") and ".." not in host
    return bool(re.fullmatch(r"\d{1,3}(?:\.\d{1,3}){3}", host)) and _is_loopback_ip(host)


class HostPolicy:
    """Which `Host` values are served: loopback always, plus the operator's names."""

    def __init__(self, allowed: Iterable[str] = ()) -> None:
        names = [normalized_name(a) for a in allowed]
        self._exact = frozenset(n for n in names if not n.startswith("*."))
        self._suffixes = tuple(n[1:] for n in names if n.startswith("*."))  # ".example.com"

    def admits(self, header: str) -> bool:
        """Whether a raw `Host` header value (with any port) is served."""
        match = _HOST.fullmatch(header)
        if match is None:
            return False
        port = match["port"]
        if port and int(port) > 65535:
            return False
        if match["ip6"] is not None:
            literal = match["ip6"]
            try:
                ipaddress.IPv6Address(literal)
            except ValueError:
                return False
            return _is_loopback_ip(literal) or f"[{ipaddress.IPv6Address(literal)}]" in self._exact
        name = match["name"].lower()
        if is_loopback_name(name):
            return True
        if name in self._exact:
            return True
        return any(name.endswith(suffix) for suffix in self._suffixes)

    def refuses_bind(self, bind: str) -> bool:
        """Whether clients that name the server by its `--host` would be refused (0.0.0.0
        and :: are never a usable Host: a client names some address of the machine)."""
        if bind in ("0.0.0.0", "::", ""):
            return True
        shown = f"[{bind}]" if ":" in bind else bind
        return not self.admits(shown)


_REFUSED = "the Host header names a server this process does not serve"
#: Host values whose verdict is remembered (then forgotten all at once).
MAX_VERDICTS = 256


class HostCheckMiddleware:
    """Answer 400 `invalid_request` (in the envelope) to any request whose `Host` is
    missing, repeated, malformed or not admitted by the policy; pure ASGI, outermost, so it
    runs before body limits, routing and authentication."""

    def __init__(self, app: ASGIApp, policy: HostPolicy) -> None:
        self.app = app
        self.policy = policy
        #: Verdicts of Host values seen (a client sends the same one every time; parsing an
        #: address is a visible share of a 304 in process); bounded, since the values are
        #: the client's.
        self._verdicts: dict[bytes, bool] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        values = [v for k, v in scope.get("headers", []) if k == b"host"]
        ok = len(values) == 1 and self._admits(values[0])
        if ok:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        message = "a single Host header is required" if len(values) != 1 else _REFUSED
        body = envelope_bytes(400, message)
        await send(
            {
                "type": "http.response.start",
                "status": 400,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    def _admits(self, raw: bytes) -> bool:
        verdict = self._verdicts.get(raw)
        if verdict is None:
            try:
                verdict = self.policy.admits(raw.decode("ascii"))
            except UnicodeDecodeError:
                verdict = False
            if len(self._verdicts) >= MAX_VERDICTS:
                self._verdicts.clear()
            self._verdicts[raw] = verdict
        return verdict
