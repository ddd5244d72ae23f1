"""The proxies the environment names, as httpx mounts on transports the client configures.

httpx reads `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` and `NO_PROXY` only when it builds its
own transport; the client passes one (for TCP keepalive, `sync.api.keepalive`), which turns
that off, and a user behind a corporate proxy would lose the server without a word. So the
same reading is done here, with `urllib.request.getproxies` (which also asks the system
settings on Windows and macOS) and httpx's rules for `NO_PROXY`
(https://curl.se/libcurl/c/CURLOPT_NOPROXY.html): each proxy gets a transport with the
client's certificate checks and socket options, and a host `NO_PROXY` names maps to None,
which httpx reads as "the client's own transport".

Through a proxy the sockets carry no keepalive: httpcore 1.0 does not hand a proxy pool's
socket options to the connections it makes (encode/httpcore's `HTTPProxy.create_connection`).
Little is lost: a proxy's own kernel answers the probes anyway (`sync.api.keepalive`), and the
watch's short hold and read margin bound a silent proxy (decision 0100).
"""

from __future__ import annotations

import ipaddress
import ssl
from urllib.request import getproxies

import httpx

from sync.api.keepalive import SocketOption
from sync.api.network_backend import cancel_safe


def environment_mounts(
    verify: ssl.SSLContext, socket_options: list[SocketOption]
) -> dict[str, httpx.AsyncBaseTransport | None]:
    """`httpx.AsyncClient(mounts=...)` for the proxies the environment names ({}: none)."""
    mounts: dict[str, httpx.AsyncBaseTransport | None] = {}
    for pattern, proxy in proxy_patterns().items():
        mounts[pattern] = (
            None
            if proxy is None
            else cancel_safe(
                httpx.AsyncHTTPTransport(proxy=proxy, verify=verify, socket_options=socket_options)
            )
        )
    return mounts


def proxy_patterns() -> dict[str, str | None]:
    """URL pattern -> proxy URL, or None for a host reached directly (as httpx maps them)."""
    info = getproxies()
    patterns: dict[str, str | None] = {}
    for scheme in ("http", "https", "all"):
        if info.get(scheme):
            url = info[scheme]
            patterns[f"{scheme}://"] = url if "://" in url else f"http://{url}"
    for host in (name.strip() for name in info.get("no", "").split(",")):
        if host == "*":
            return {}
        if host:
            patterns[_no_proxy_pattern(host)] = None
    return patterns


def _no_proxy_pattern(host: str) -> str:
    """`example.com` matches it and its subdomains; `.example.com` only the subdomains."""
    if "://" in host:
        return host
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return f"all://{host}" if host.lower() == "localhost" else f"all://*{host}"
    return f"all://[{host}]" if address.version == 6 else f"all://{host}"
