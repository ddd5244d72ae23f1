"""An in-memory server index with the contract's semantics, and a `SessionIndexApi` over it.

The second implementation of `sync.reconcile.ports.SessionIndexApi` (the first is the HTTP
client): it
lets the engine's core (`Reconciler`, `DeleteService`) run against a server in the same
process, with no network and no sleeps, so that a Hypothesis state machine can drive
creates, turns, runs, deletes, 409s, outages, lost answers and sessions moving between pages
during a walk, thousands of steps a run. What it models, from CONTRACT §2–§3 and §7:

- one principal's sessions, ordered `(updated_at DESC, id DESC)`, keyset pages with an opaque
  cursor, a first-page ETag that changes with every change to the index;
- at most one active run per session; DELETE answers 409 while one is active, 204 (and again
  204 from the tombstone), or the contract's 404 for an id that never existed;
- faults: an outage (no connection: nothing happens), point reads failing while the index
  answers (a 503 on one route), and a lost answer (the delete happens, the answer does not
  arrive).

The API records every id it gave proof of absence for (a 404 point read, a 204 or 404
delete), which is what the state machine's "no prune without proof" invariant checks against.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from sync.errors import (
    ActiveRunExists,
    BadCursor,
    ConnectionFailed,
    NetworkError,
    NotFound,
    Unavailable,
)
from sync.wire.models import RunView, SessionPage, SessionView


def _stamp(tick: int) -> str:
    """A contract timestamp from a logical clock (string order is time order)."""
    seconds, micros = divmod(tick, 1_000_000)
    minutes, seconds = divmod(seconds, 60)
    return f"2026-01-01T00:{minutes:02d}:{seconds:02d}.{micros:06d}Z"


class MemoryIndex:
    """The authoritative index of one principal."""

    def __init__(self) -> None:
        self.sessions: dict[str, SessionView] = {}
        self.tombstones: set[str] = set()
        self.runs: dict[str, RunView] = {}
        self.version = 0
        self._clock = itertools.count(1)
        self._ids = itertools.count(1)

    def now(self) -> str:
        return _stamp(next(self._clock))

    @property
    def etag(self) -> str:
        return f'"v{self.version}"'

    def _changed(self) -> None:
        self.version += 1

    # -- what other clients and agents do ---------------------------------------------------

    def create(self, title: str | None = None) -> str:
        sid = f"ses_{next(self._ids):06d}"
        at = self.now()
        self.sessions[sid] = SessionView(sid, title, at, at, None, None)
        self._changed()
        return sid

    def turn(self, sid: str) -> None:
        """An event appended: the session's activity advances (it moves to the top)."""
        if sid in self.sessions:
            self.sessions[sid] = self.sessions[sid]._replace(updated_at=self.now())
            self._changed()

    def start_run(self, sid: str) -> str | None:
        view = self.sessions.get(sid)
        if view is None or view.active_run_id is not None:
            return None
        rid = f"run_{next(self._ids):06d}"
        at = self.now()
        self.runs[rid] = RunView(rid, sid, "running", at, at, None, False)
        self.sessions[sid] = view._replace(active_run_id=rid, updated_at=at)
        self._changed()
        return rid

    def finish_run(self, sid: str, status: str = "completed") -> None:
        view = self.sessions.get(sid)
        if view is None or view.active_run_id is None:
            return
        at = self.now()
        rid = view.active_run_id
        self.runs[rid] = replace(self.runs[rid], status=status, completed_at=at)
        self.sessions[sid] = view._replace(active_run_id=None, last_run_id=rid, updated_at=at)
        self._changed()

    # -- the routes -------------------------------------------------------------------------

    def delete(self, sid: str) -> None:
        if sid in self.tombstones:
            return
        view = self.sessions.get(sid)
        if view is None:
            raise _not_found()
        if view.active_run_id is not None:
            raise ActiveRunExists(
                "A run is still active.",
                status=409,
                code="invalid_state",
                details={"reason": "active_run_exists", "active_run_id": view.active_run_id},
            )
        del self.sessions[sid]
        self.tombstones.add(sid)
        self._changed()

    def page(self, limit: int, cursor: str | None) -> SessionPage:
        ordered = sorted(self.sessions.values(), key=lambda v: (v.updated_at, v.id), reverse=True)
        if cursor is not None:
            try:
                at, last = cursor.split("|")
            except ValueError:
                raise BadCursor("bad cursor", status=400, code="invalid_request") from None
            ordered = [v for v in ordered if (v.updated_at, v.id) < (at, last)]
        items = ordered[:limit]
        more = len(ordered) > limit
        next_cursor = f"{items[-1].updated_at}|{items[-1].id}" if more and items else None
        return SessionPage(items, next_cursor, etag=self.etag if cursor is None else None)


def _not_found() -> NotFound:
    return NotFound("Not found on the server.", status=404, code="not_found")


Hook = Callable[[int], Awaitable[None]]


@dataclass
class MemoryApi:
    """`SessionIndexApi` over a `MemoryIndex`, with faults, recording its proofs."""

    index: MemoryIndex
    outage: bool = False
    lose_delete_answers: bool = False
    failing_point_reads: bool = False  # the index answers, point reads fail (a 503)

    def __post_init__(self) -> None:
        self.proofs: set[str] = set()  # ids this API told its caller are gone
        self.point_reads: list[str] = []  # ids asked for, in order

    @property
    def base_url(self) -> str:
        return "memory://index"

    def _reach(self) -> None:
        if self.outage:
            raise ConnectionFailed("Cannot reach the server at memory://index.")

    async def list_sessions(
        self, *, limit: int = 200, cursor: str | None = None, etag: str | None = None
    ) -> SessionPage | None:
        self._reach()
        if cursor is None and etag is not None and etag == self.index.etag:
            return None
        return self.index.page(limit, cursor)

    async def get_session(self, session_id: str) -> SessionView:
        self._reach()
        self.point_reads.append(session_id)
        if self.failing_point_reads:
            raise Unavailable("The server is unavailable right now (503).", status=503)
        view = self.index.sessions.get(session_id)
        if view is None:
            self.proofs.add(session_id)
            raise _not_found()
        return view

    async def delete_session(self, session_id: str) -> None:
        self._reach()
        try:
            self.index.delete(session_id)
        except NotFound:
            self.proofs.add(session_id)
            raise
        if self.lose_delete_answers:
            raise NetworkError(
                "Cannot reach the server at memory://index (the connection was lost)."
            )
        self.proofs.add(session_id)

    async def get_run(self, run_id: str) -> RunView:
        self._reach()
        run = self.index.runs.get(run_id)
        if run is None:
            raise _not_found()
        return run

    async def cancel_run(self, run_id: str) -> RunView:
        self._reach()
        run = self.index.runs.get(run_id)
        if run is None:
            raise _not_found()
        self.index.finish_run(run.session_id, "cancelled")  # the agent stops at its next step
        return self.index.runs[run_id]
