"""How the client trusts a server: the OS trust store, an optional CA bundle, plain-HTTP words.

Why the operating system's store (`truststore`) and not certifi's bundle: a company CA that
IT installed on the machine is trusted by the browser, so it must be trusted here too, and a
CA the user removed from the system must stop being trusted here as well. A private CA that
is not in the system store (a test server, a home lab) is added with a CA bundle file
(`--ca-bundle FILE`, Settings): its certificates are trusted *in addition to* the system's.

A plain `http://` server is accepted, since the bundled demo server and a server on the same
machine use it, but one that is not on loopback sends the token and every conversation in
the clear, so every entry point says so (`plain_http_warning`).
"""

from __future__ import annotations

import ipaddress
import ssl
from pathlib import Path
from urllib.parse import urlsplit

from sync.errors import ProfileError

#: A CA bundle is a few PEM certificates; a bigger file is not one (and is not read whole).
MAX_CA_BUNDLE_BYTES = 4 * 1024 * 1024


def client_context(ca_bundle: str | Path | None = None) -> ssl.SSLContext:
    """A TLS client context that verifies against the OS trust store, plus `ca_bundle`.

    Hostnames and certificates are always checked (PROTOCOL_TLS_CLIENT). A CA bundle that
    cannot be read or holds no certificate is a ProfileError naming the file, raised here
    rather than as a confusing handshake failure later. truststore is imported here: the
    window imports this module (for `plain_http_warning`) before its first paint.
    """
    import truststore

    context = truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if ca_bundle:
        path = Path(ca_bundle).expanduser()
        pem = _read_bundle(path)
        try:
            context.load_verify_locations(cadata=pem)
        except (ssl.SSLError, ValueError) as exc:
            raise ProfileError(
                f"The CA bundle {path} holds no usable PEM certificate ({_reason(exc)})."
            ) from exc
    return context


def _read_bundle(path: Path) -> str:
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_CA_BUNDLE_BYTES + 1)
    except OSError as exc:
        raise ProfileError(f"Cannot read the CA bundle {path}: {exc.strerror or exc}.") from exc
    if len(data) > MAX_CA_BUNDLE_BYTES:
        raise ProfileError(
            f"The CA bundle {path} is larger than {MAX_CA_BUNDLE_BYTES // (1024 * 1024)} MiB; "
            "it is not a certificate file."
        )
    text = data.decode("ascii", errors="replace")
    if "-----BEGIN CERTIFICATE-----" not in text:
        raise ProfileError(
            f"The CA bundle {path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)."
        )
    return text


def _reason(exc: Exception) -> str:
    if isinstance(exc, ssl.SSLError) and exc.reason:
        return str(exc.reason).replace("_", " ").lower()
    return str(exc) or type(exc).__name__


def is_loopback_host(host: str) -> bool:
    """`localhost` or a loopback address (127.0.0.0/8, ::1): traffic that never leaves the
    machine."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def plain_http_warning(server: str | None) -> str | None:
    """A sentence when `server` is plain `http://` to a machine other than this one, else
    None. The token and the conversations would cross the network unencrypted."""
    if not server:
        return None
    try:
        parts = urlsplit(server.strip())
    except ValueError:  # a half-typed IPv6 literal: not a URL yet, so no server to warn of
        return None
    if parts.scheme.lower() != "http":
        return None
    if is_loopback_host(parts.hostname or ""):
        return None
    return (
        f"The server {parts.hostname} is reached over plain http://: the token and your "
        "conversations cross the network unencrypted. Use an https:// address if the "
        "server offers one."
    )


def certificate_failure_message(reason: str) -> str:
    """What a user reads when the server's certificate is refused (never "offline")."""
    return (
        f"The server's certificate could not be verified: {reason}. If it uses a private "
        "CA, set a CA bundle in Settings or --ca-bundle."
    )
