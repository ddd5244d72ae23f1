"""The `Host` check (CONTRACT §10.2): DNS rebinding is closed by serving loopback names and
the operator's `--allowed-host` names only, on every path, before authentication.

Requests are written on raw sockets: an HTTP client would not send two Host headers, none,
or one that disagrees with the address it connects to.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from server_stub.edge.hosts import (
    MAX_VERDICTS,
    HostCheckMiddleware,
    HostPolicy,
    is_loopback_name,
    normalized_name,
)
from tests.conftest import LiveServer, ServerFactory

CLI = [sys.executable, "-m", "server_stub.cli"]


def _exchange(server: LiveServer, head: bytes) -> tuple[int, bytes]:
    """Send one request head (no body) and read the whole answer (the connection closes)."""
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(head)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    raw = b"".join(chunks)
    status_line, _, rest = raw.partition(b"\r\n")
    return int(status_line.split(b" ", 2)[1]), rest.partition(b"\r\n\r\n")[2]


def _get(server: LiveServer, path: str, *hosts: str, version: str = "1.1") -> tuple[int, bytes]:
    lines = [f"GET {path} HTTP/{version}", *(f"Host: {h}" for h in hosts)]
    lines += ["Authorization: Bearer dev-alice", "Connection: close", "", ""]
    return _exchange(server, "\r\n".join(lines).encode())


def _port(server: LiveServer) -> str:
    return server.url.rsplit(":", 1)[1]


def _assert_refused(status: int, body: bytes) -> None:
    assert status == 400
    assert json.loads(body)["error"]["code"] == "invalid_request"


@pytest.fixture
def server(server_factory: ServerFactory) -> LiveServer:
    return server_factory()


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:{port}",
        "localhost.",
        "localhost.:{port}",
        "127.0.0.1.",
        "10.0.0.1:{port}",
        "[fe80::1]:{port}",
        "localhost:port",
        "127.0.0.1:99999",
        "local host",
        "127.1",
        "0x7f.0.0.1",
        "[::1",
        "localhost.evil.example",
        "a..localhost",
        "*.localhost",
    ],
)
def test_a_request_naming_another_host_is_refused_before_authentication(
    server: LiveServer, host: str
) -> None:
    # With a valid token: the Host check, not authentication, is what refuses it.
    _assert_refused(*_get(server, "/v1/sessions", host.format(port=_port(server))))


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:{port}",
        "127.0.0.1:1234",
        "127.9.8.7",
        "localhost:{port}",
        "LOCALHOST",
        "app.localhost:{port}",
        "[::1]:80",
        "[::1]",
        "[::ffff:127.0.0.1]:{port}",
    ],
)
def test_loopback_names_and_addresses_are_served_with_any_port(
    server: LiveServer, host: str
) -> None:
    status, body = _get(server, "/v1/sessions", host.format(port=_port(server)))
    assert status == 200, body
    assert "items" in json.loads(body)


def test_a_request_without_host_is_refused_in_the_envelope(server: LiveServer) -> None:
    _assert_refused(*_get(server, "/v1/sessions", version="1.0"))  # reaches the app
    _assert_refused(*_get(server, "/v1/sessions", version="1.1"))  # refused by the parser


def test_two_host_headers_are_refused_even_when_both_are_loopback(server: LiveServer) -> None:
    _assert_refused(*_get(server, "/v1/sessions", "127.0.0.1", "evil.example"))
    _assert_refused(*_get(server, "/v1/sessions", "127.0.0.1", "127.0.0.1"))


@pytest.mark.parametrize(
    "path", ["/openapi.json", "/docs", "/_stub/outbox", "/v1/nothing-here", "/"]
)
def test_every_path_is_behind_the_host_check(server: LiveServer, path: str) -> None:
    _assert_refused(*_get(server, path, "evil.example"))
    status, _ = _get(server, path, f"127.0.0.1:{_port(server)}")
    assert status != 400


def test_an_allowed_host_is_served_and_its_look_alikes_are_not(
    server_factory: ServerFactory,
) -> None:
    server = server_factory(allowed_hosts=("converge.example", "*.lan.example", "[fd00::2]"))
    for admitted in ["converge.example:443", "CONVERGE.example", "a.lan.example", "[fd00:0::2]"]:
        assert _get(server, "/v1/sessions", admitted)[0] == 200, admitted
    for refused in ["converge.example.", "xconverge.example", "lan.example", "evil.example"]:
        _assert_refused(*_get(server, "/v1/sessions", refused))
    assert _get(server, "/v1/sessions", "127.0.0.1")[0] == 200  # loopback still served


def test_allowed_host_values_are_checked_when_the_server_is_configured() -> None:
    assert normalized_name("Converge.Example") == "converge.example"
    assert normalized_name("fd00::2") == "[fd00::2]"
    for bad in ["", "a b", "http://x", "x:80", "*", "*.", "a..b", "x.", "[zz::1]"]:
        with pytest.raises(ValueError):
            HostPolicy([bad])


def test_a_bind_address_that_clients_could_not_name_is_reported() -> None:
    assert not HostPolicy().refuses_bind("127.0.0.1")
    assert not HostPolicy().refuses_bind("::1")
    assert HostPolicy().refuses_bind("0.0.0.0")
    assert HostPolicy().refuses_bind("192.0.2.2")
    assert not HostPolicy(["192.0.2.2"]).refuses_bind("192.0.2.2")
    assert is_loopback_name("localhost") and is_loopback_name("127.0.0.2")
    assert not is_loopback_name("0.0.0.0") and not is_loopback_name("localhost.")


def test_a_server_on_all_interfaces_still_checks_host_and_says_so_at_start(
    tmp_path: Path,
) -> None:
    stderr = tmp_path / "stderr.log"
    with stderr.open("wb") as err:
        process = subprocess.Popen(
            [
                *CLI,
                "--host",
                "0.0.0.0",
                "--port",
                "0",
                "--agent-delay",
                "0",
                "--database",
                f"sqlite:///{tmp_path / 'db.sqlite3'}",
            ],
            stdout=subprocess.PIPE,
            stderr=err,
        )
        try:
            assert process.stdout is not None
            line = process.stdout.readline().decode()
            port = int(line.strip().rsplit(":", 1)[1])
            url = f"http://127.0.0.1:{port}/v1/sessions"
            auth = {"Authorization": "Bearer dev-bob"}
            assert httpx.get(url, headers=auth).status_code == 200
            rebound = httpx.get(url, headers={**auth, "Host": f"evil.example:{port}"})
            assert rebound.status_code == 400
        finally:
            process.terminate()
            process.communicate(timeout=15)
    log = stderr.read_text()
    assert "serving on 0.0.0.0, but only requests whose Host is loopback" in log
    assert "--allowed-host NAME" in log


def test_the_cli_refuses_a_malformed_allowed_host(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            *CLI,
            "--allowed-host",
            "http://x",
            "--port",
            "0",
            "--database",
            f"sqlite:///{tmp_path / 'db.sqlite3'}",
        ],
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == b""
    assert b"--allowed-host 'http://x' is not a host name" in done.stderr


def test_remembered_host_verdicts_stay_bounded_and_never_change_a_verdict() -> None:
    async def app(scope: object, receive: object, send: object) -> None:
        raise AssertionError("not called")

    check = HostCheckMiddleware(app, HostPolicy())
    for n in range(MAX_VERDICTS * 3):  # hostile clients send any number of distinct values
        assert not check._admits(f"evil{n}.example".encode())
        assert len(check._verdicts) <= MAX_VERDICTS
    for _ in range(2):  # the second time from memory
        assert check._admits(b"127.0.0.1:8765")
        assert not check._admits(b"evil.example")
        assert not check._admits(b"\xff127.0.0.1")
