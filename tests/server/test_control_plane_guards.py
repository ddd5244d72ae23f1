"""The control plane trusts no client (CONTRACT §10.2): loopback peers only, JSON writes only,
and `converge-server` refuses `--control` with a public `--host`."""

from __future__ import annotations

import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from server_stub.runner import ServerThread
from tests.conftest import LiveServer, ServerFactory

CLI = [sys.executable, "-m", "server_stub.cli"]


@pytest.fixture
def live_server(server_factory: ServerFactory) -> LiveServer:
    """One SQLite server: the guards sit in front of the database, whichever it is."""
    return server_factory()


def _outward_address() -> str | None:
    """This machine's address on its default route (no packet is sent), if it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(("192.0.2.123", 9))
        except OSError:
            return None
        address = str(sock.getsockname()[0])
    return None if address.startswith("127.") else address


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("text/plain", b'{"object_store": "down"}'),
        ("application/x-www-form-urlencoded", b"object_store=down"),
        ("multipart/form-data; boundary=x", b"--x--"),
        ("application/jsonx", b'{"object_store": "down"}'),
        (None, b'{"object_store": "down"}'),
    ],
)
def test_a_control_write_that_is_not_json_is_refused_and_changes_nothing(
    live_server: LiveServer, content_type: str | None, body: bytes
) -> None:
    control = live_server.client(None)  # no default Content-Type, unlike `.control()`
    headers = {"Content-Type": content_type} if content_type else {}
    if content_type is None:  # httpx adds no Content-Type to raw bytes
        assert "content-type" not in control.build_request("PUT", "/", content=body).headers
    answer = control.put("/_stub/faults", content=body, headers=headers)
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "invalid_request"
    assert live_server.thread.app.state.converge.store.available  # the fault was not set


def test_a_body_less_control_post_is_refused_and_json_one_is_served(
    live_server: LiveServer,
) -> None:
    control = live_server.client(None)
    refused = control.post("/_stub/maintenance")  # what a web page can send with no preflight
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "invalid_request"
    served = control.post("/_stub/maintenance", json={})
    assert served.status_code == 200 and served.json() == {"outbox_pending": 0}
    charset = control.put(
        "/_stub/faults",
        content=b'{"object_store": "up"}',
        headers={"Content-Type": "Application/JSON; charset=utf-8"},
    )
    assert charset.status_code == 204


def test_the_control_plane_answers_only_loopback_peers(server_factory: ServerFactory) -> None:
    outward = _outward_address()
    if outward is None:
        pytest.skip("this machine has no non-loopback address to connect from")
    probe = server_factory()  # for its settings: a fresh database, control on
    thread = ServerThread(replace(probe.settings, database_url=_fresh(probe)), host="0.0.0.0")
    thread.start()
    try:
        port = thread.url.rsplit(":", 1)[1]
        # The peer is this machine's outward address; the Host header still says loopback,
        # so only the peer address can tell the two apart.
        with httpx.Client(base_url=f"http://{outward}:{port}", timeout=10) as far:
            headers = {"Host": f"127.0.0.1:{port}"}
            refused = far.post("/_stub/maintenance", json={}, headers=headers)
            assert refused.status_code == 404
            assert refused.json()["error"]["code"] == "not_found"
            assert far.get("/_stub/outbox", headers=headers).status_code == 404
            api = far.get("/v1/sessions", headers={**headers, "Authorization": "Bearer dev-bob"})
            assert api.status_code == 200  # the API itself is not loopback-only
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as near:
            assert near.post("/_stub/maintenance", json={}).status_code == 200
    finally:
        thread.stop()


def _fresh(server: LiveServer) -> str:
    path = Path(server.settings.database_url.removeprefix("sqlite:///"))
    return f"sqlite:///{path.with_name('second.sqlite3')}"


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.2", "::"])
def test_the_cli_refuses_control_with_a_public_host(tmp_path: Path, host: str) -> None:
    done = subprocess.run(
        [
            *CLI,
            "--control",
            "--host",
            host,
            "--port",
            "0",
            "--database",
            f"sqlite:///{tmp_path / 'db.sqlite3'}",
        ],
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == b""
    assert b"--control is refused with --host" in done.stderr
    assert b"Traceback" not in done.stderr
