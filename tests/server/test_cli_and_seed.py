"""`converge-server` as a process, the demo seed, principals files and the thread runner."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from server_stub.cli import main as cli_main
from server_stub.config import ServerSettings
from server_stub.domain.timestamps import parse
from server_stub.runner import ServerStartError, ServerThread
from tests.conftest import S3_BUCKET, LiveServer, PostgresCluster
from tests.server.conftest import wait_terminal

CLI = [sys.executable, "-m", "server_stub.cli"]


class _Process:
    def __init__(self, args: list[str], tmp: Path) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "0"}
        self.stderr_path = tmp / "stderr.log"
        self.stderr = self.stderr_path.open("wb")
        self.proc = subprocess.Popen(
            [*CLI, *args], stdout=subprocess.PIPE, stderr=self.stderr, env=env
        )
        assert self.proc.stdout is not None
        self.first_line = self.proc.stdout.readline().decode()
        self.url = self.first_line.strip().removeprefix("listening on ")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15.0) -> tuple[int, bytes]:
        self.proc.send_signal(sig)
        rest, _ = self.proc.communicate(timeout=timeout)
        self.stderr.close()
        return self.proc.returncode, rest


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Callable[..., _Process]]:
    started: list[_Process] = []

    def start(*args: str) -> _Process:
        process = _Process(list(args), tmp_path)
        started.append(process)
        return process

    yield start
    for process in started:
        if process.proc.poll() is None:
            process.proc.kill()
            process.proc.wait()
        if process.proc.stdout is not None:
            process.proc.stdout.close()
        process.stderr.close()


def test_cli_prints_one_line_serves_and_exits_zero_on_sigterm(
    cli: Callable[..., _Process], tmp_path: Path
) -> None:
    process = cli(
        "--port",
        "0",
        "--database",
        f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "--artifacts",
        str(tmp_path / "objects"),
        "--agent-delay",
        "0",
    )
    assert process.first_line.startswith("listening on http://127.0.0.1:")
    assert process.first_line.endswith("\n")
    response = httpx.get(f"{process.url}/v1/sessions", headers={"Authorization": "Bearer dev-bob"})
    assert response.status_code == 200 and response.json() == {"items": [], "next_cursor": None}
    assert httpx.get(f"{process.url}/_stub/maintenance").status_code == 404  # no --control
    code, rest = process.stop(signal.SIGTERM)
    assert code == 0
    assert rest == b""  # nothing on stdout after the first line
    log = process.stderr_path.read_text()
    assert "GET /v1/sessions" in log  # the access log goes to stderr
    assert (tmp_path / "objects").is_dir()


def test_cli_with_principals_file_seed_and_control_exits_zero_on_sigint(
    cli: Callable[..., _Process], tmp_path: Path
) -> None:
    principals = tmp_path / "principals.toml"
    principals.write_text(
        '[[principal]]\ntoken = "t-one"\ntenant = "acme"\nprincipal = "alice"\nscopes = ["*"]\n'
        '[[principal]]\ntoken = "t-ro"\ntenant = "acme"\nprincipal = "alice"\n'
        'scopes = ["session.read"]\n'
    )
    process = cli(
        "--port",
        "0",
        "--database",
        f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "--principals",
        str(principals),
        "--seed",
        "demo",
        "--control",
    )
    one = httpx.get(f"{process.url}/v1/sessions", headers={"Authorization": "Bearer t-one"})
    assert one.status_code == 200 and len(one.json()["items"]) > 10
    assert (
        httpx.get(
            f"{process.url}/v1/sessions", headers={"Authorization": "Bearer dev-alice"}
        ).status_code
        == 401
    )
    ro = httpx.delete(f"{process.url}/v1/sessions/ses_x", headers={"Authorization": "Bearer t-ro"})
    assert ro.status_code == 403
    assert httpx.post(f"{process.url}/_stub/maintenance", json={}).status_code == 200
    assert process.stop(signal.SIGINT) == (0, b"")  # Ctrl+C: a clean exit too


def test_cli_refuses_a_bad_principals_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[[principal]]\ntoken = 1\n")
    done = subprocess.run(
        [*CLI, "--principals", str(bad), "--port", "0"], capture_output=True, timeout=30
    )
    assert done.returncode == 2 and done.stdout == b""
    assert b"principal" in done.stderr


def test_cli_exits_non_zero_when_the_port_is_taken(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        done = subprocess.run(
            [*CLI, "--port", str(port), "--database", f"sqlite:///{tmp_path / 'db.sqlite3'}"],
            capture_output=True,
            timeout=30,
        )
    assert done.returncode != 0 and done.stdout == b""


def test_a_taken_port_is_one_sentence_on_stderr(tmp_path: Path) -> None:
    """Someone starting a second server needs the reason, not uvicorn's start-up log and an
    asyncio traceback; the address is checked before anything else starts."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        done = subprocess.run(
            [*CLI, "--port", str(port), "--database", f"sqlite:///{tmp_path / 'db.sqlite3'}"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"converge-server: cannot listen on 127.0.0.1:{port}: the address is already in use"
    ]
    assert not (tmp_path / "db.sqlite3").exists()  # nothing was started


@pytest.mark.postgres
def test_cli_runs_on_postgresql(
    cli: Callable[..., _Process], postgres_cluster: PostgresCluster
) -> None:
    url = postgres_cluster.new_database()
    process = cli("--port", "0", "--database", url, "--agent-delay", "0", "--seed", "demo")
    headers = {"Authorization": "Bearer dev-carol"}
    page = httpx.get(f"{process.url}/v1/sessions", headers=headers, params={"limit": 200}).json()
    assert len(page["items"]) >= 12
    assert process.stop()[0] == 0


def test_demo_seed_is_realistic_and_idempotent(
    server_factory: Callable[..., LiveServer], tmp_path: Path
) -> None:
    """How long seeding takes is a figure: `python -m bench micro`."""
    url = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    server = server_factory(database_url=url, artifacts_dir=tmp_path / "o", seed="demo")
    counts = {}
    for token in ("dev-alice", "dev-bob", "dev-carol"):
        client = server.client(token)
        items = client.get("/v1/sessions", params={"limit": 200}).json()["items"]
        counts[token] = len(items)
        assert len(items) >= 12
        titles = [i["title"] for i in items]
        assert len(set(titles)) > len(titles) // 2
        times = sorted(parse(i["updated_at"]) for i in items)
        assert times[-1] - times[0] > timedelta(days=7)  # spread over weeks
        assert sum(1 for i in items if i["last_run_id"]) >= len(items) - 1
        legacy = [i for i in items if i["last_run_id"] is None]
        assert len(legacy) == 1 and legacy[0]["title"]  # derived from its first message
        assert client.get("/v1/memories").json()["items"]
        docs = client.get("/v1/knowledge/documents").json()["items"]
        assert docs
        artifact = client.get(f"/v1/artifacts/{docs[0]['source_artifact_id']}/content")
        assert artifact.status_code == 200 and artifact.content
        transcripts = [client.get(f"/v1/sessions/{i['id']}/events").json()["items"] for i in items]
        types = {e["type"] for events in transcripts for e in events}
        assert {
            "approval.requested",
            "run.failed",
            "skill.published",
            "artifact.created",
            "memory.formed",
            "message.assistant",
        } <= types
        assert max(sum(e["type"] == "run.started" for e in events) for events in transcripts) > 1
    server.stop()
    again = server_factory(database_url=url, artifacts_dir=tmp_path / "o", seed="demo")
    for token, count in counts.items():
        items = again.client(token).get("/v1/sessions", params={"limit": 200}).json()["items"]
        assert len(items) == count


def test_seed_leaves_a_non_empty_database_alone(
    server_factory: Callable[..., LiveServer], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    first = server_factory(database_url=url, artifacts_dir=tmp_path / "o")
    alice = first.client()
    sid = alice.post("/v1/sessions", json={}).json()["id"]
    first.stop()
    second = server_factory(database_url=url, artifacts_dir=tmp_path / "o", seed="demo")
    assert [i["id"] for i in second.client().get("/v1/sessions").json()["items"]] == [sid]
    assert second.client("dev-bob").get("/v1/sessions").json()["items"] == []


def test_server_thread_reports_a_taken_port(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        settings = ServerSettings(
            database_url=f"sqlite:///{tmp_path / 'db.sqlite3'}", artifacts_dir=tmp_path / "o"
        )
        with pytest.raises(ServerStartError):
            ServerThread(settings, port=port).start(timeout=10)


def test_server_thread_is_a_context_manager(tmp_path: Path) -> None:
    settings = ServerSettings(
        database_url=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        artifacts_dir=tmp_path / "o",
        agent_delay=0,
    )
    with ServerThread(settings) as server:
        assert server.url.startswith("http://127.0.0.1:")
        assert httpx.get(f"{server.url}/openapi.json").status_code == 200
    assert not server.thread.is_alive()


def test_server_socket_is_tcp_so_replies_are_not_delayed(tmp_path: Path) -> None:
    """PITFALLS §3: asyncio sets TCP_NODELAY on accepted sockets only when the listening
    socket's proto is IPPROTO_TCP; a keep-alive request must not wait for a delayed ACK."""
    settings = ServerSettings(
        database_url=f"sqlite:///{tmp_path / 'db.sqlite3'}", artifacts_dir=tmp_path / "o"
    )
    with ServerThread(settings) as server:
        sock = server.server.servers[0].sockets[0]
        assert sock.proto == socket.IPPROTO_TCP
        with httpx.Client(base_url=server.url) as client:
            client.get("/v1/sessions")  # 401; the connection stays open (keep-alive)
            connections = list(server.server.server_state.connections)
            assert len(connections) == 1
            accepted = connections[0].transport.get_extra_info("socket")
            # What asyncio skips on a proto-0 listener: without it, Nagle plus the client's
            # delayed ACK hold every kept-alive reply ~40 ms (the figure: `bench server`).
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


def test_cli_keeps_artifact_bytes_in_a_bucket_with_credentials_from_the_environment(
    cli: Callable[..., _Process], tmp_path: Path, seaweed: Any
) -> None:
    prefix = f"cli-{os.getpid()}"
    server = cli(
        "--port", "0",
        "--database", f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "--artifacts", f"s3://{S3_BUCKET}/{prefix}",
        "--s3-endpoint", seaweed.endpoint,
        "--s3-compact-url", seaweed.vacuum_url,
        "--agent-delay", "0",
    )  # fmt: skip
    assert server.first_line.startswith("listening on http://127.0.0.1:")
    headers = {"Authorization": "Bearer dev-alice"}
    with httpx.Client(base_url=server.url, headers=headers, timeout=30) as alice:
        sid = alice.post("/v1/sessions", json={}).json()["id"]
        text = {"type": "text", "text": "/artifact a.txt in the bucket"}
        run = alice.post(
            f"/v1/sessions/{sid}/runs", json={"input": {"role": "user", "content": [text]}}
        ).json()
        assert wait_terminal(alice, run["id"])["status"] == "completed"
        listed = seaweed.client().list_objects_v2(Bucket=S3_BUCKET, Prefix=f"{prefix}/{sid}/")
        assert listed["KeyCount"] == 1
        assert alice.delete(f"/v1/sessions/{sid}").status_code == 204
        listed = seaweed.client().list_objects_v2(Bucket=S3_BUCKET, Prefix=f"{prefix}/")
        assert listed["KeyCount"] == 0
    code, _ = server.stop()
    assert code == 0


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--artifacts", "s3://"], "s3://BUCKET/PREFIX"),
        (["--artifacts", "s3://bucket/a/../b"], "s3://BUCKET/PREFIX"),
        (["--s3-endpoint", "http://127.0.0.1:1"], "need --artifacts s3://"),
        (["--artifacts", "s3://b/p", "--s3-endpoint", "file:///etc"], "not an http(s) URL"),
    ],
)
def test_cli_refuses_a_malformed_bucket_store_in_words(
    args: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """In process (the refusal comes before any server starts; a child costs ~4 s here)."""
    assert cli_main(["--port", "0", *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and words in err and "Traceback" not in err
