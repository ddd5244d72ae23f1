"""A foreign id and a missing one cost the server the same work.

Byte-identical bodies are not enough: a foreign live session's 404 that skipped the
tombstone read a missing one makes would take less time, which a caller can time to learn
that an id exists. These
tests record the SQL statements each 404 executes (a `before_cursor_execute` listener on
the server's engine) and require the same statements, in the same order, for both cases.
Background work that could interleave statements (lease renewals, reaping, maintenance) is
set to hours for these servers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import event

from server_stub.state import AppState
from tests.conftest import LiveServer
from tests.server.test_errors_and_auth import MISSING, _requests
from tests.server.test_errors_and_auth import bobs_world as bobs_world  # the fixture

QUIET = {
    "run_lease_seconds": 7200.0,
    "run_heartbeat_seconds": 3600.0,
    "run_reap_seconds": 3600.0,
}


@pytest.fixture
def live_server(start_server: Callable[..., LiveServer]) -> LiveServer:
    """A server whose background loops stay quiet during the test."""
    return start_server(**QUIET)


class _Statements:
    """Every statement the server's engines execute while `recording` is set."""

    def __init__(self, server: LiveServer) -> None:
        state = server.thread.app.state.converge
        assert isinstance(state, AppState)
        # The worker threads' engine and, on SQLite, the loop's (`Database.read_now`).
        quick = state.db._quick
        self.engines = [state.db.engine] + ([] if quick is None else [quick])
        self.seen: list[str] = []
        self._lock = threading.Lock()
        for engine in self.engines:
            event.listen(engine, "before_cursor_execute", self._record)

    def _record(self, _conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        with self._lock:
            self.seen.append(statement)

    def take(self) -> list[str]:
        with self._lock:
            taken, self.seen = self.seen, []
        return taken

    def close(self) -> None:
        for engine in self.engines:
            event.remove(engine, "before_cursor_execute", self._record)


@pytest.fixture
def statements(live_server: LiveServer) -> Iterator[_Statements]:
    recorder = _Statements(live_server)
    yield recorder
    recorder.close()


def test_a_foreign_id_and_a_missing_one_execute_the_same_statements(
    live_server: LiveServer, bobs_world: dict[str, str], statements: _Statements
) -> None:
    alice = live_server.client("dev-alice")
    for (method, path, kw), (_, missing_path, mkw) in zip(
        _requests(bobs_world), _requests(MISSING), strict=True
    ):
        statements.take()
        assert alice.request(method, path, **kw).status_code == 404
        foreign = statements.take()
        assert alice.request(method, missing_path, **mkw).status_code == 404
        missing = statements.take()
        assert foreign, (method, path)
        assert foreign == missing, (method, path)
