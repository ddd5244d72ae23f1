"""TLS against a REAL stub server on https:// (CONTRACT §10.1 "TLS").

The server is the stub under uvicorn with a certificate from a throwaway CA made in the test
(`tests.sync.tls_certs`). The operating system does not trust that CA: a client without the
CA bundle must name a certificate failure (never "cannot reach" or offline), and with
`--ca-bundle` (or the profile's saved bundle) it syncs.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sync.api.client import ApiClient
from sync.api.tls import client_context
from sync.engine import SyncEngine
from sync.errors import CertificateError, ProfileError, TlsError
from sync.events import EngineState, TriggerReason
from sync.profile.profile import Profile
from tests.sync.helpers import run
from tests.sync.test_cli_live import converge
from tests.sync.tls_certs import TlsServer, serve_tls

CERT_WORDS = "The server's certificate could not be verified"


@pytest.fixture
def tls_server(
    tmp_path_factory: pytest.TempPathFactory, sqlite_template: Path
) -> Iterator[TlsServer]:
    """A stub server on https://localhost:PORT, its certificate signed by a fresh test CA."""
    with serve_tls(tmp_path_factory.mktemp("tls-server"), sqlite_template) as server:
        yield server


def test_a_certificate_from_an_unknown_ca_is_named_a_certificate_failure(tls_server: Any) -> None:
    async def scenario() -> BaseException:
        async with ApiClient(tls_server.url, "dev-alice", retry_attempts=1) as api:
            with pytest.raises(CertificateError) as info:
                await api.list_sessions()
            return info.value

    error = run(scenario())
    assert isinstance(error, CertificateError)
    assert error.message.startswith(CERT_WORDS)
    assert "unable to get local issuer certificate" in error.message
    assert "--ca-bundle" in error.message and "Settings" in error.message
    assert "reach" not in error.message.lower()


def test_the_ca_bundle_makes_the_private_ca_trusted(tls_server: Any) -> None:
    made = tls_server.seed("over https")

    async def scenario() -> list[str]:
        tls = client_context(tls_server.certs.ca_file)
        async with ApiClient(tls_server.url, "dev-alice", tls=tls) as api:
            page = await api.list_sessions()
            assert page is not None
            return [item.id for item in page.items]

    assert run(scenario()) == [made]


def test_a_certificate_for_another_name_is_refused_even_with_its_ca(
    tls_server: Any, tmp_path: Path
) -> None:
    """The certificate is for `localhost`; reached as 127.0.0.1 its name does not match."""
    url = tls_server.url.replace("localhost", "127.0.0.1")

    async def scenario() -> CertificateError:
        tls = client_context(tls_server.certs.ca_file)
        async with ApiClient(url, "dev-alice", tls=tls, retry_attempts=1) as api:
            with pytest.raises(CertificateError) as info:
                await api.list_sessions()
            return info.value

    error = run(scenario())
    assert error.message.startswith(CERT_WORDS) and "127.0.0.1" in error.message


def test_the_engine_shows_a_certificate_failure_as_an_error_not_offline(
    tls_server: Any, tmp_path: Path
) -> None:
    async def scenario() -> tuple[EngineState, str]:
        profile = Profile.load(tmp_path / "p", server=tls_server.url, token="dev-alice", environ={})
        engine = await SyncEngine.open(profile, retry_attempts=1)
        try:
            report = await engine.reconcile(TriggerReason.MANUAL)
            assert isinstance(report.error, TlsError)
            return engine.status.state, engine.status.message
        finally:
            await engine.close()

    state, message = run(scenario())
    assert state is EngineState.ERROR
    assert message.startswith(CERT_WORDS)


def test_converge_sync_names_the_certificate_and_syncs_with_ca_bundle(
    tls_server: Any, tmp_path: Path
) -> None:
    made = tls_server.seed("synced over https")
    profile = tmp_path / "p"
    env = {"CONVERGE_TOKEN": "dev-alice"}
    base = ["sync", "--server", tls_server.url, "--profile", str(profile)]
    refused = converge(*base, env=env)
    assert refused.returncode == 1
    assert CERT_WORDS in refused.stderr and "--ca-bundle" in refused.stderr
    assert "reach" not in refused.stderr.lower()
    trusted = converge(*base, "--ca-bundle", str(tls_server.certs.ca_file), env=env)
    assert trusted.returncode == 0, trusted.stderr
    assert f"inserted 1: {made}" in trusted.stdout


def test_the_profile_s_saved_ca_bundle_is_used(tls_server: Any, tmp_path: Path) -> None:
    made = tls_server.seed("saved bundle")
    folder = tmp_path / "p"
    Profile(folder, server=tls_server.url, ca_bundle=str(tls_server.certs.ca_file)).save()

    async def scenario() -> list[str]:
        profile = Profile.load(folder, token="dev-alice", environ={})
        engine = await SyncEngine.open(profile)
        try:
            report = await engine.reconcile(TriggerReason.MANUAL)
            assert report.error is None
            return list(report.inserted)
        finally:
            await engine.close()

    assert run(scenario()) == [made]


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, "Cannot read the CA bundle"),
        (b"not a certificate\n", "holds no PEM certificate"),
        (b"-----BEGIN CERTIFICATE-----\ngarbage\n-----END CERTIFICATE-----\n", "no usable"),
    ],
)
def test_an_unusable_ca_bundle_is_a_clear_error_naming_the_file(
    tmp_path: Path, content: bytes | None, words: str
) -> None:
    bundle = tmp_path / "bundle.pem"
    if content is not None:
        bundle.write_bytes(content)
    with pytest.raises(ProfileError) as info:
        client_context(bundle)
    assert words in info.value.message and str(bundle) in info.value.message


def test_a_plain_http_server_off_this_machine_gets_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The warning comes as the command resolves its profile, before any request (in
    process: a subprocess would wait for a TEST-NET address that never answers)."""
    from sync.cli import main as cli

    base = ["--profile", str(tmp_path / "p"), "--token-stdin"]
    for server, expected in (("http://192.0.2.1:9", True), ("http://127.0.0.1:9", False)):
        args = cli.build_parser().parse_args(["sync", "--server", server, *base])
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr("sys.stdin", io.StringIO("dev-alice\n"))
            cli._profile(args)
        err = capsys.readouterr().err
        assert ("plain http://" in err and "unencrypted" in err) is expected, err
        assert ("192.0.2.1" in err) is expected


@pytest.mark.parametrize(
    ("url", "warned"),
    [
        ("http://127.0.0.1:8000", False),
        ("http://localhost:8000", False),
        ("http://[::1]:8000", False),
        ("https://example.org", False),
        ("http://example.org", True),
        ("http://10.0.0.5:8000", True),
        ("HTTP://Example.org/api", True),
        ("http://[::1", False),  # typed half-way in Settings: no ValueError out of the slot
        ("http://[", False),
    ],
)
def test_only_plain_http_off_loopback_is_warned_about(url: str, warned: bool) -> None:
    from sync.api.tls import plain_http_warning

    assert (plain_http_warning(url) is not None) is warned
