"""A throwaway certificate authority, server certificates, and a stub server on https://.

Made with `cryptography` in a few milliseconds (EC P-256 keys), written as PEM files: the CA
certificate (what `--ca-bundle` is given), and a server certificate plus key (what uvicorn
serves). Nothing here is trusted by the operating system, which is the point.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import ipaddress
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class ServerCertificate:
    ca_file: Path  # the CA certificate (PEM): what a client trusts
    cert_file: Path  # the server's certificate (PEM)
    key_file: Path  # the server's private key (PEM)


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def make_server_certificate(
    folder: Path, *, dns_names: tuple[str, ...] = ("localhost",), ips: tuple[str, ...] = ()
) -> ServerCertificate:
    """A new CA and a server certificate it signed for `dns_names` and `ips`."""
    folder.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("Converge test CA")
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    alt_names: list[x509.GeneralName] = [x509.DNSName(n) for n in dns_names]
    alt_names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(dns_names[0] if dns_names else ips[0]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    paths = ServerCertificate(folder / "ca.pem", folder / "server.pem", folder / "server.key")
    paths.ca_file.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    paths.cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths.key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


@dataclass(frozen=True)
class TlsServer:
    url: str  # https://localhost:PORT
    certs: ServerCertificate

    def seed(self, title: str) -> str:
        """One session made through the control plane, over https with the CA trusted."""
        import httpx

        from sync.api.tls import client_context
        from sync.wire.models import text_message

        verify = client_context(self.certs.ca_file)
        with httpx.Client(base_url=self.url, verify=verify, timeout=10) as client:
            body: dict[str, Any] = {"token": "dev-alice", "messages": [text_message(title)]}
            response = client.post("/_stub/sessions", json=body)
            response.raise_for_status()
            return str(response.json()["id"])


@contextlib.contextmanager
def serve_tls(folder: Path, sqlite_template: Path) -> Iterator[TlsServer]:
    """The real stub (uvicorn, SQLite copied from the template) on https://localhost:PORT,
    with a certificate for `localhost` signed by a fresh CA no system trusts."""
    from server_stub.config import ServerSettings
    from server_stub.runner import ServerThread

    certs = make_server_certificate(folder / "certs", dns_names=("localhost",))
    shutil.copyfile(sqlite_template, folder / "server.sqlite3")
    settings = ServerSettings(
        database_url=f"sqlite:///{folder / 'server.sqlite3'}",
        artifacts_dir=folder / "objects",
        control=True,
        agent_delay=0.0,
        maintenance_interval=3600.0,
    )
    thread = ServerThread(settings, tls=(str(certs.cert_file), str(certs.key_file))).start()
    port = thread.url.rsplit(":", 1)[1]
    try:
        yield TlsServer(f"https://localhost:{port}", certs)
    finally:
        thread.stop()
