"""`--log-format json`: one JSON object per stderr line with time, level,
logger, message, request id, route, status and duration, never content; a request id per
request, a sane inbound `X-Request-ID` kept and anything else replaced, echoed in the
response. `converge-server` runs as a child process; the tests parse its lines."""

from __future__ import annotations

import json
import logging
import re
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from server_stub.domain.timestamps import is_valid
from server_stub.observe.logformat import JsonFormatter
from server_stub.observe.requests import RequestIds
from tests.server.conftest import message, wait_until
from tests.server.test_cli_and_seed import _Process

SECRET = "Zebra-Quokka secret text 7731"
GENERATED = re.compile(r"[0-9a-f]{16}")


@pytest.fixture
def json_server(tmp_path: Path) -> Iterator[_Process]:
    process = _Process(
        [
            "--port",
            "0",
            "--database",
            f"sqlite:///{tmp_path / 'db.sqlite3'}",
            "--agent-delay",
            "0",
            "--log-format",
            "json",
        ],
        tmp_path,
    )
    yield process
    if process.proc.poll() is None:
        process.proc.kill()
        process.proc.wait()
    if process.proc.stdout is not None:
        process.proc.stdout.close()
    process.stderr.close()


def lines(process: _Process) -> list[dict[str, Any]]:
    """Every stderr line so far, each parsed as one JSON object (fails on any other line)."""
    text = process.stderr_path.read_text("ascii")
    parsed = [json.loads(line) for line in text.splitlines() if line]
    assert all(isinstance(item, dict) for item in parsed)
    return parsed


def access(process: _Process, request_id: str) -> dict[str, Any]:
    """The access line of the request `request_id` (polled: the line follows the answer)."""

    def found() -> dict[str, Any] | None:
        for line in lines(process):
            if line["logger"] == "server_stub.access" and line.get("request_id") == request_id:
                return line
        return None

    return dict(wait_until(found))


def test_json_lines_carry_the_request_fields_and_no_content(json_server: _Process) -> None:
    auth = {"Authorization": "Bearer dev-alice"}
    with httpx.Client(base_url=json_server.url, headers=auth, timeout=10) as alice:
        created = alice.post(
            "/v1/sessions", json={"title": SECRET}, headers={"X-Request-ID": "r-1"}
        )
        assert created.status_code == 201
        assert created.headers["x-request-id"] == "r-1"
        sid = created.json()["id"]
        run = alice.post(f"/v1/sessions/{sid}/runs", json={"input": message(SECRET)})
        assert run.status_code == 202
        missing = alice.get("/v1/sessions/ses_nope")
        assert missing.status_code == 404
        plain_id = missing.headers["x-request-id"]
        assert GENERATED.fullmatch(plain_id)
    line = access(json_server, "r-1")
    assert line["level"] == "INFO"
    assert is_valid(line["time"])
    assert (line["method"], line["route"], line["status"]) == ("POST", "/v1/sessions", 201)
    assert isinstance(line["duration_ms"], float) and line["duration_ms"] >= 0
    assert line["message"] == "POST /v1/sessions 201"
    absent = access(json_server, plain_id)
    assert (absent["route"], absent["status"]) == ("/v1/sessions/{session_id}", 404)
    code, _ = json_server.stop()
    assert code == 0
    text = json_server.stderr_path.read_text("ascii")
    for needle in (SECRET, "Zebra", "dev-alice", sid):
        assert needle not in text  # no titles, messages, tokens, nor raw paths with ids
    every = lines(json_server)
    assert {"time", "level", "logger", "message"} <= set(every[0])
    assert not any(line["logger"] == "uvicorn.access" for line in every)  # ours replaces it


@pytest.mark.parametrize(
    "header",
    [
        "x" * 65,  # too long
        "<script>alert(1)</script>",
        "a b",
        "ünïcode",
        "",
    ],
)
def test_an_insane_request_id_is_replaced_by_a_fresh_one(
    json_server: _Process, header: str
) -> None:
    host, _, port = json_server.url.removeprefix("http://").rpartition(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(
            b"GET /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer dev-alice"
            b"\r\nX-Request-ID: " + header.encode() + b"\r\nConnection: close\r\n\r\n"
        )
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1").lower()
    echoed = re.search(r"^x-request-id: (.*)$", head, re.M)
    assert echoed is not None, head
    assert GENERATED.fullmatch(echoed.group(1).strip()), echoed.group(1)
    assert access(json_server, echoed.group(1).strip())["status"] == 200


def test_two_request_ids_are_both_ignored(json_server: _Process) -> None:
    host, _, port = json_server.url.removeprefix("http://").rpartition(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(
            b"GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-ID: one\r\n"
            b"X-Request-ID: two\r\nConnection: close\r\n\r\n"
        )
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1").lower()
    echoed = re.search(r"^x-request-id: (.*)$", head, re.M)
    assert echoed is not None and GENERATED.fullmatch(echoed.group(1).strip())


def test_the_human_format_stays_the_default(tmp_path: Path) -> None:
    process = _Process(
        ["--port", "0", "--database", f"sqlite:///{tmp_path / 'db.sqlite3'}"], tmp_path
    )
    try:
        headers = {"X-Request-ID": "h-1", "Authorization": "Bearer dev-alice"}
        reply = httpx.get(f"{process.url}/v1/sessions", headers=headers)
        assert reply.headers["x-request-id"] == "h-1"  # an id either way
        code, _ = process.stop()
        assert code == 0
    finally:
        if process.proc.poll() is None:
            process.proc.kill()
            process.proc.wait()
        if process.proc.stdout is not None:
            process.proc.stdout.close()
    text = process.stderr_path.read_text()
    assert '"GET /v1/sessions HTTP/1.1" 200' in text  # uvicorn's access line, as before
    first = text.splitlines()[0]
    assert not first.startswith("{") and " INFO " in first


def test_an_exception_is_named_by_its_class_never_by_its_text() -> None:
    try:
        raise ValueError(f"parameters: ('{SECRET}',)")
    except ValueError:
        record = logging.LogRecord(
            "server_stub.test", logging.ERROR, __file__, 1, "failed %s", ("x",), sys.exc_info()
        )
    line = json.loads(JsonFormatter().format(record))
    assert line["exception"] == "ValueError"
    assert line["message"] == "failed x"
    assert SECRET not in json.dumps(line)


def test_fresh_request_ids_do_not_count_other_principals_requests() -> None:
    """Between two of bob's requests carol made some: bob's two ids must not say how many
    (no shared prefix, no counter in the clear)."""
    ids = RequestIds()
    bobs_first = ids.fresh()
    for _ in range(7):  # carol's
        ids.fresh()
    bobs_second = ids.fresh()
    assert GENERATED.fullmatch(bobs_first.decode()) and GENERATED.fullmatch(bobs_second.decode())
    assert bobs_first[:8] != bobs_second[:8]
    assert abs(int(bobs_second, 16) - int(bobs_first, 16)) > 2**32
