"""The server suite runs every test on SQLite and on a real PostgreSQL.

`live_server` is overridden here, parametrized over both backends; PostgreSQL cases skip
with a printed reason where the binaries are absent. The artifact byte store is the folder,
unless a module parametrizes `object_store` (indirect) with "s3": then its servers keep
their bytes in the session's SeaweedFS bucket (skipped where `weed` is absent).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import LiveServer, ServerFactory, s3_overrides

TEXT = "hello world"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def object_store(request: pytest.FixtureRequest) -> str:
    """ "folder" (the default) or "s3", where a module parametrizes it (indirect)."""
    return str(getattr(request, "param", "folder"))


#: `pytestmark = BOTH_STORES` runs a module on the folder store and on SeaweedFS.
BOTH_STORES = pytest.mark.parametrize("object_store", ["folder", "s3"], indirect=True)


@pytest.fixture
def start_server(
    backend: str,
    object_store: str,
    server_factory: ServerFactory,
    request: pytest.FixtureRequest,
) -> Iterator[Callable[..., LiveServer]]:
    """`start(**settings)`: a fresh server on the parametrized backend (a new database).

    At teardown, asserts that no response of any server it started was a 500.
    """
    started: list[LiveServer] = []

    def start(**overrides: Any) -> LiveServer:
        if backend == "postgres" and "database_url" not in overrides:
            cluster = request.getfixturevalue("postgres_cluster")
            overrides["database_url"] = cluster.clean_database()
        if object_store == "s3" and "s3_url" not in overrides:
            overrides.update(s3_overrides(request.getfixturevalue("seaweed")))
        server = server_factory(backend=backend, **overrides)
        started.append(server)
        return server

    yield start
    for server in started:
        failures = [s for s in server.statuses if s[2] >= 500]
        assert not failures, f"server answered 5xx: {failures}"


@pytest.fixture
def live_server(start_server: Callable[..., LiveServer]) -> LiveServer:
    """A fresh server on the parametrized backend (a new database per test)."""
    return start_server()


def message(text: str = TEXT) -> dict[str, Any]:
    """A user message with one text block."""
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def wait_until(predicate: Callable[[], Any], timeout: float = 10.0, interval: float = 0.01) -> Any:
    """Poll `predicate` until it returns something truthy (or fail after `timeout`)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(interval)


def new_session(client: httpx.Client) -> str:
    response = client.post("/v1/sessions", json={})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def start_run(client: httpx.Client, session_id: str, text: str = TEXT) -> dict[str, Any]:
    response = client.post(f"/v1/sessions/{session_id}/runs", json={"input": message(text)})
    assert response.status_code == 202, response.text
    return dict(response.json())


def wait_terminal(client: httpx.Client, run_id: str, timeout: float = 15.0) -> dict[str, Any]:
    """Follow the run's SSE stream until the server closes it (after the terminal event)."""
    with client.stream(
        "GET",
        f"/v1/runs/{run_id}/events",
        headers={"Accept": "text/event-stream"},
        timeout=timeout,
    ) as stream:
        assert stream.status_code == 200
        for _ in stream.iter_bytes():
            pass
    view = client.get(f"/v1/runs/{run_id}").json()
    assert view["status"] in ("completed", "failed", "cancelled"), view
    return dict(view)


def wait_status(client: httpx.Client, run_id: str, status: str) -> dict[str, Any]:
    def check() -> dict[str, Any] | None:
        view = client.get(f"/v1/runs/{run_id}").json()
        return view if view["status"] == status else None

    return dict(wait_until(check))


def run_to_end(client: httpx.Client, session_id: str, text: str = TEXT) -> dict[str, Any]:
    run = start_run(client, session_id, text)
    return wait_terminal(client, run["id"])


def run_events(client: httpx.Client, run_id: str) -> list[dict[str, Any]]:
    response = client.get(f"/v1/runs/{run_id}/events")
    assert response.status_code == 200, response.text
    return list(response.json()["items"])


def residue(server: LiveServer, session_id: str) -> dict[str, Any]:
    response = server.control().get(f"/_stub/sessions/{session_id}/residue")
    assert response.status_code == 200, response.text
    return dict(response.json())
