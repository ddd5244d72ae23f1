"""A seeded stub server per test module, on SQLite and (where it can run) PostgreSQL.

The reliability suites probe the API from outside, through HTTP only, so they need a server
full of real resources of several principals: sessions with finished runs, artifacts,
memories, knowledge documents and skills, a run waiting for approval, and a deleted session
whose ids are remembered. Seeding goes through the public API (plus nothing else), so that
every id is one the server really handed out.

The server is module-scoped (seeding costs a few seconds), which the root `server_factory`
(function-scoped) cannot give; it is built the same way (loopback, control plane on, agent
delay 0) and reuses the root `LiveServer` and `postgres_cluster`.
"""

from __future__ import annotations

import errno
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import LiveServer

ALICE, BOB, CAROL, READONLY = "dev-alice", "dev-bob", "dev-carol", "dev-alice-readonly"
OWNERS = (ALICE, BOB, CAROL)
TERMINAL = ("completed", "failed", "cancelled")


def message(text: str) -> dict[str, Any]:
    """A user message with one text block."""
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def wait_until(predicate: Callable[[], Any], timeout: float = 15.0) -> Any:
    """Poll `predicate` until it returns something truthy, or fail after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.01)


@dataclass
class Graph:
    """The ids of one session and of everything its runs produced."""

    session: str
    runs: list[str] = field(default_factory=list)
    approvals: list[str] = field(default_factory=list)
    artifacts: list[str] = field(default_factory=list)
    memories: list[str] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)
    kdocs: list[str] = field(default_factory=list)

    def ids(self) -> set[str]:
        """Every id of the graph."""
        return {
            self.session,
            *self.runs,
            *self.approvals,
            *self.artifacts,
            *self.memories,
            *self.skills,
            *self.kdocs,
        }


@dataclass
class Holdings:
    """What one principal owns after seeding.

    - `done`: a session whose runs all finished (an artifact with its knowledge document, a
      memory, a skill, a denied approval); idle, so a new run could start in it.
    - `waiting`: a session whose run waits for approval (`waiting_run`, `pending_approval`).
    - `deleted`: a session with the same kind of graph, deleted through the API.
    - `spare`: empty sessions that the fuzzer may delete.
    """

    token: str
    done: Graph
    waiting: Graph
    waiting_run: str
    pending_approval: str
    deleted: Graph
    spare: list[str]


@dataclass
class World:
    """A running server and what every development principal owns in it."""

    server: LiveServer
    holdings: dict[str, Holdings]

    def client(self, token: str | None) -> httpx.Client:
        """A client of the world's server for `token` (None: no Authorization header)."""
        return self.server.client(token)


def _follow(client: httpx.Client, run_id: str) -> dict[str, Any]:
    """Wait until the run is terminal (its SSE stream closes after the terminal event)."""
    with client.stream(
        "GET", f"/v1/runs/{run_id}/events", headers={"Accept": "text/event-stream"}, timeout=30
    ) as stream:
        assert stream.status_code == 200
        for _ in stream.iter_bytes():
            pass
    view = dict(client.get(f"/v1/runs/{run_id}").json())
    assert view["status"] in TERMINAL, view
    return view


def _run(client: httpx.Client, graph: Graph, text: str) -> str:
    response = client.post(f"/v1/sessions/{graph.session}/runs", json={"input": message(text)})
    assert response.status_code == 202, response.text
    run_id = str(response.json()["id"])
    graph.runs.append(run_id)
    return run_id


def _collect(client: httpx.Client, graph: Graph) -> None:
    """Fill the graph's ids from its session's events."""
    page = client.get(f"/v1/sessions/{graph.session}/events", params={"limit": 1000})
    assert page.status_code == 200, page.text
    for event in page.json()["items"]:
        data = event["data"]
        kind = event["type"]
        if kind == "approval.requested":
            graph.approvals.append(data["approval_id"])
        elif kind == "artifact.created":
            graph.artifacts.append(data["artifact_id"])
        elif kind == "memory.formed" and not data.get("reinforced"):
            graph.memories.append(data["memory_id"])
        elif kind == "skill.published":
            graph.skills.append(data["skill_id"])
    documents = client.get("/v1/knowledge/documents", params={"limit": 200}).json()["items"]
    graph.kdocs = [d["id"] for d in documents if d["source_session_id"] == graph.session]


def _wait_waiting(client: httpx.Client, run_id: str) -> None:
    def waiting() -> bool:
        return bool(client.get(f"/v1/runs/{run_id}").json()["status"] == "waiting_for_approval")

    wait_until(waiting)


def _new_session(client: httpx.Client) -> str:
    response = client.post("/v1/sessions", json={})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _full_graph(client: httpx.Client, name: str) -> Graph:
    """A session whose finished runs made an artifact (and its document), a memory, a skill
    and a denied approval."""
    graph = Graph(_new_session(client))
    for text in (
        f"/artifact {name}.txt the {name} notes",
        f"/remember {name} is a memorable word",
        f"/skill {name}-skill",
    ):
        _follow(client, _run(client, graph, text))
    approving = _run(client, graph, f"/approve {name}-tool")
    _wait_waiting(client, approving)
    _collect(client, graph)
    decided = client.post(
        f"/v1/approvals/{graph.approvals[-1]}/decision", json={"decision": "deny"}
    )
    assert decided.status_code == 200, decided.text
    _follow(client, approving)
    return graph


def seed(server: LiveServer, spare: int = 3) -> World:
    """Give each development principal the holdings described in `Holdings`."""
    holdings: dict[str, Holdings] = {}
    for token in OWNERS:
        client = server.client(token)
        who = token.removeprefix("dev-")
        done = _full_graph(client, f"{who}-kept")
        deleted = _full_graph(client, f"{who}-gone")
        waiting = Graph(_new_session(client))
        waiting_run = _run(client, waiting, f"/approve {who}-deploy")
        _wait_waiting(client, waiting_run)
        _collect(client, waiting)
        gone = client.delete(f"/v1/sessions/{deleted.session}")
        assert gone.status_code == 204, gone.text
        holdings[token] = Holdings(
            token=token,
            done=done,
            waiting=waiting,
            waiting_run=waiting_run,
            pending_approval=waiting.approvals[-1],
            deleted=deleted,
            spare=[_new_session(client) for _ in range(spare)],
        )
    return World(server=server, holdings=holdings)


@pytest.fixture(scope="module")
def module_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[[str], LiveServer]]:
    """`start(backend)`: a stub server for this module (control plane on, agent delay 0).

    At teardown, stops the servers and asserts that none answered a 5xx to the clients made
    through `LiveServer.client`.
    """
    from server_stub.config import ServerSettings
    from server_stub.runner import ServerThread

    started: list[LiveServer] = []

    def start(backend: str) -> LiveServer:
        folder = tmp_path_factory.mktemp("reliability")
        if backend == "postgres":
            database_url = request.getfixturevalue("postgres_cluster").new_database()
        else:
            database_url = f"sqlite:///{folder / 'server.sqlite3'}"
        settings = ServerSettings(
            database_url=database_url,
            artifacts_dir=folder / "objects",
            control=True,
            agent_delay=0.0,
            maintenance_interval=3600.0,
        )
        thread = ServerThread(settings).start()
        assert thread.url.startswith("http://127.0.0.1:")
        server = LiveServer(url=thread.url, backend=backend, settings=settings, thread=thread)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
    failures = [s for server in started for s in server.statuses if s[2] >= 500]
    assert not failures, f"server answered 5xx: {failures}"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 16 MiB tmpfs of its own (skips where mounting is not permitted)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "disk"
    mount.mkdir()
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {result.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, timeout=30)


def fill(disk: Path) -> Path:
    """Write a file until the file system has no byte left; returns it (unlink to free)."""
    filler = disk / "filler"
    chunk = b"\0" * 65536
    with filler.open("wb", buffering=0) as out:
        while True:
            try:
                out.write(chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
                break
    with filler.open("ab", buffering=0) as out:  # the last partial chunk's room too
        while True:
            try:
                out.write(b"\0")
            except OSError:
                break
    return filler
