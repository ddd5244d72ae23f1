"""A model of the server's routes for the simulation, and the transport that reaches it.

`ModelServer` holds one principal's sessions, their events and runs, the tombstones and an
index version, with CONTRACT §3's semantics: keyset pages ordered by `(updated_at DESC, id
DESC)`, a first-page ETag that every change bumps, 304 on a matching `If-None-Match`, a held
watch (`Prefer: wait=N`), the idempotent delete and its 409, the point read's 404, event
pages after a sequence, runs and their cancel. Timestamps come from the virtual clock and
never go backwards. `SimTransport` is an `httpx` transport: each request passes the
schedule's `Faults` first, which may change the server, delay the answer, refuse it (429,
503), cut it before it is sent, after the server committed it, or in the middle of its body,
or kill the device.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote

import httpx

from qa.simulation.clock import WALL_START, VirtualClock
from sync.wire.models import SessionView

PAGE_MAX = 200
EVENT_PAGE_MAX = 1000


class Killed(BaseException):
    """The device's process ends here (not an `Exception`: nothing in the engine catches it)."""


def _stamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class _Run:
    id: str
    session_id: str
    status: str
    created_at: str
    updated_at: str
    completed_at: str | None = None
    cancel_requested: bool = False

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class ModelServer:
    clock: VirtualClock
    sessions: dict[str, SessionView] = field(default_factory=dict)
    events: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    runs: dict[str, _Run] = field(default_factory=dict)
    tombstones: set[str] = field(default_factory=set)
    #: Every session the server ever created, with the word only its messages hold.
    words: dict[str, str] = field(default_factory=dict)
    version: int = 0
    _last: float = 0.0
    _ids: int = 0
    _changed: asyncio.Event | None = None

    # -- what other devices and agents do ----------------------------------------------------

    def _now(self) -> str:
        """A stamp after every earlier one (server time never goes back)."""
        self._last = max(self._last + 1e-6, WALL_START + self.clock.now)
        return _stamp(self._last)

    def _bump(self) -> None:
        self.version += 1
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    def _next_id(self, prefix: str) -> str:
        self._ids += 1
        return f"{prefix}_{self._ids:05d}"

    def create(self) -> str:
        sid = self._next_id("ses")
        word = f"zq{self._ids:05d}x"
        self.words[sid] = word
        at = self._now()
        self.sessions[sid] = SessionView(sid, f"Talk {word}", at, at, None, None)
        self.events[sid] = []
        self._append(sid, None, "message.user", f"hello {word}")
        return sid

    def _append(self, sid: str, run_id: str | None, kind: str, text: str) -> None:
        at = self._now()
        log = self.events[sid]
        data = {"role": kind.split(".")[1], "content": [{"type": "text", "text": text}]}
        log.append(
            {
                "session_id": sid,
                "run_id": run_id,
                "sequence": len(log) + 1,
                "type": kind,
                "created_at": at,
                "data": data,
            }
        )
        self.sessions[sid] = self.sessions[sid]._replace(updated_at=at)
        self._bump()

    def open_session(self) -> SessionView:
        """`POST /v1/sessions`: an empty session; its title comes with its first message."""
        sid = self._next_id("ses")
        self.words[sid] = f"zq{self._ids:05d}x"
        at = self._now()
        self.sessions[sid] = SessionView(sid, None, at, at, None, None)
        self.events[sid] = []
        self._bump()
        return self.sessions[sid]

    def send(self, sid: str, text: str) -> _Run | None:
        """`POST /v1/sessions/{id}/runs`: the user's message and a run (None: one runs)."""
        view = self.sessions[sid]
        if view.active_run_id is not None:
            return None
        word = self.words[sid]
        if view.title is None:
            self.sessions[sid] = view._replace(title=f"{text} {word}"[:64])
        self._append(sid, None, "message.user", f"{text} {word}")
        self.start_run(sid)
        return self.runs[self.sessions[sid].active_run_id or ""]

    def turn(self, sid: str) -> None:
        """A message appended: the conversation moves to the top of the index."""
        if sid in self.sessions:
            self._append(sid, None, "message.user", f"more about {self.words[sid]}")

    def start_run(self, sid: str) -> None:
        view = self.sessions.get(sid)
        if view is None or view.active_run_id is not None:
            return
        rid = self._next_id("run")
        at = self._now()
        self.runs[rid] = _Run(rid, sid, "running", at, at)
        self.sessions[sid] = view._replace(active_run_id=rid, updated_at=at)
        self._bump()

    def finish_run(self, sid: str, status: str = "completed") -> None:
        view = self.sessions.get(sid)
        if view is None or view.active_run_id is None:
            return
        run = self.runs[view.active_run_id]
        run.status, run.completed_at = status, self._now()
        run.updated_at = run.completed_at
        self._append(sid, run.id, "message.assistant", f"reply on {self.words[sid]}")
        self.sessions[sid] = self.sessions[sid]._replace(active_run_id=None, last_run_id=run.id)
        self._bump()

    def delete(self, sid: str) -> int:
        """The route's semantics: 204, 404 or 409."""
        if sid in self.tombstones:
            return 204
        view = self.sessions.get(sid)
        if view is None:
            return 404
        if view.active_run_id is not None:
            return 409
        del self.sessions[sid]
        del self.events[sid]
        for rid in [r.id for r in self.runs.values() if r.session_id == sid]:
            del self.runs[rid]
        self.tombstones.add(sid)
        self._bump()
        return 204

    @property
    def etag(self) -> str:
        return f'"v{self.version}"'

    def ordered(self) -> list[SessionView]:
        return sorted(self.sessions.values(), key=lambda v: (v.updated_at, v.id), reverse=True)

    # -- the routes ----------------------------------------------------------------------------

    async def handle(self, request: httpx.Request) -> tuple[int, dict[str, str], Any]:
        """(status, headers, JSON body or None); a state-changing route commits here."""
        path = unquote(request.url.path)
        parts = path.strip("/").split("/")
        method = request.method
        params = request.url.params
        if parts[:2] != ["v1", "sessions"] and parts[:2] != ["v1", "runs"]:
            return _error(404, "not_found")
        if parts[1] == "sessions" and len(parts) == 2 and method == "GET":
            return await self._index(request)
        if parts[1] == "sessions" and len(parts) == 2 and method == "POST":
            return 201, {}, self.open_session().to_view_json()
        if parts[1] == "sessions" and len(parts) == 4 and parts[3] == "runs" and method == "POST":
            if parts[2] not in self.sessions:
                return _error(404, "not_found")
            message = json.loads(request.content or b"{}").get("input", {})
            blocks = message.get("content") or [{}]
            run = self.send(parts[2], str(blocks[0].get("text", "")))
            if run is None:
                return _error(409, "invalid_state", {"reason": "run_in_progress"})
            return 202, {}, run.to_json()
        if parts[1] == "sessions" and len(parts) == 3:
            sid = parts[2]
            if method == "GET":
                view = self.sessions.get(sid)
                if view is None:
                    gone = {"reason": "deleted"} if sid in self.tombstones else {}
                    return _error(404, "not_found", gone)
                return 200, {}, view.to_view_json()
            if method == "DELETE":
                status = self.delete(sid)
                if status == 409:
                    rid = self.sessions[sid].active_run_id
                    running = {"reason": "active_run_exists", "active_run_id": rid or ""}
                    return _error(409, "invalid_state", running)
                return (204, {}, None) if status == 204 else _error(404, "not_found")
        if parts[1] == "sessions" and len(parts) == 4 and parts[3] == "events":
            log = self.events.get(parts[2])
            if log is None:
                return _error(404, "not_found")
            after = int(params.get("after", 0))
            limit = min(int(params.get("limit", 200)), EVENT_PAGE_MAX)
            items = [e for e in log if e["sequence"] > after][:limit]
            full = len(items) == limit
            return 200, {}, {"items": items, "next_after": items[-1]["sequence"] if full else None}
        if parts[1] == "runs" and len(parts) >= 3:
            run = self.runs.get(parts[2])
            if run is None:
                return _error(404, "not_found")
            if len(parts) == 4 and parts[3] == "cancel" and method == "POST":
                run.cancel_requested = True
                self.finish_run(run.session_id, "cancelled")
                return 202, {}, run.to_json()
            if len(parts) == 3 and method == "GET":
                return 200, {}, run.to_json()
        return _error(404, "not_found")

    async def _index(self, request: httpx.Request) -> tuple[int, dict[str, str], Any]:
        params = request.url.params
        limit = min(int(params.get("limit", 50)), PAGE_MAX)
        cursor = params.get("cursor")
        match = request.headers.get("If-None-Match")
        prefer = request.headers.get("Prefer", "")
        headers: dict[str, str] = {}
        if cursor is None and match is not None and match == self.etag:
            if not prefer.startswith("wait="):
                return 304, {"ETag": self.etag}, None
            wait = int(prefer.removeprefix("wait="))
            headers["Preference-Applied"] = f"wait={wait}"
            changed = self._changed = self._changed or asyncio.Event()
            try:
                await asyncio.wait_for(changed.wait(), wait)
            except TimeoutError:
                return 304, {**headers, "ETag": self.etag}, None
        ordered = self.ordered()
        if cursor is not None:
            at, _, last = cursor.partition("|")
            if not last:
                return _error(400, "invalid_request")
            ordered = [v for v in ordered if (v.updated_at, v.id) < (at, last)]
        items = ordered[:limit]
        more = len(ordered) > limit
        body = {
            "items": [v.to_view_json() for v in items],
            "next_cursor": f"{items[-1].updated_at}|{items[-1].id}" if more else None,
        }
        if cursor is None:
            headers["ETag"] = self.etag
        return 200, headers, body


def _error(
    status: int, code: str, details: dict[str, Any] | None = None
) -> tuple[int, dict[str, str], Any]:
    return status, {}, {"error": {"code": code, "message": code, "details": details or {}}}


class _CutBody(httpx.AsyncByteStream):
    """The first half of a body, then the connection drops."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.body[: len(self.body) // 2]
        raise httpx.ReadError("the connection was lost in the middle of the body")


@dataclass
class Faults:
    """What the schedule does to each request: decided by `rng`, at rates in [0, 1]."""

    rng: random.Random
    server: ModelServer
    rate: float = 0.0  # the chance that a request meets a fault at all
    change_rate: float = 0.0  # the chance that the server changes before a request
    kill_rate: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)
    trace: Callable[[str], None] | None = None  # told of every request and its fate

    def count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    def change_server(self) -> None:
        """One thing another device or an agent does, chosen by the schedule."""
        server, rng = self.server, self.rng
        live = sorted(server.sessions)
        kind = rng.choice(("create", "turn", "delete", "start_run", "finish_run"))
        if kind == "create" or not live:
            server.create()
            kind = "create"
        elif kind == "turn":
            server.turn(rng.choice(live))
        elif kind == "delete":
            server.delete(rng.choice(live))
        elif kind == "start_run":
            server.start_run(rng.choice(live))
        else:
            running = [s for s in live if server.sessions[s].active_run_id]
            if running:
                server.finish_run(rng.choice(running))
        self.count(f"server {kind}")

    def pick(self) -> str:
        """The fate of one request."""
        rng = self.rng
        if rng.random() < self.kill_rate:
            return "kill"
        if rng.random() >= self.rate:
            return "ok"
        return rng.choice(("cut before", "cut after", "cut body", "delay", "429", "503"))


class SimTransport(httpx.AsyncBaseTransport):
    """One device's connection to the model server, through the schedule's faults."""

    def __init__(self, server: ModelServer, faults: Faults, proofs: set[str]) -> None:
        """`proofs`: where the ids go that an answer received whole said are gone."""
        self.server, self.faults, self.proofs = server, faults, proofs
        self.requests = 0
        self.dead = False
        self.killed = asyncio.Event()  # set at the kill: whatever awaited the device ends

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.dead:
            raise Killed
        self.requests += 1
        faults = self.faults
        if faults.rng.random() < faults.change_rate:
            faults.change_server()
        fate = faults.pick()
        if fate != "ok":
            faults.count(fate)
        if faults.trace is not None:
            at = self.server.clock.now
            faults.trace(f"{at:9.3f} {request.method} {request.url.raw_path.decode()} {fate}")
        if fate == "kill":
            self.dead = True
            self.killed.set()
            raise Killed
        if fate == "cut before":
            raise httpx.ConnectError("the connection failed before the request was sent")
        # Every answer takes some time (or a busy engine would stop the virtual clock); a
        # delayed one long enough that answers of concurrent requests arrive reordered.
        await asyncio.sleep(faults.rng.uniform(0.0, 3.0 if fate == "delay" else 0.05))
        if fate in ("429", "503"):
            wait = str(faults.rng.randint(1, 5))
            code = "rate_limited" if fate == "429" else "unavailable"
            body = {"error": {"code": code, "message": code, "details": {}}}
            return _response(int(fate), {"Retry-After": wait}, body)
        status, headers, body = await self.server.handle(request)
        if fate == "cut after":
            raise httpx.ReadError("the connection was lost before the answer arrived")
        response = _response(status, headers, body)
        if fate == "cut body" and body is not None:
            return httpx.Response(
                status, headers=response.headers, stream=_CutBody(response.content)
            )
        parts = request.url.path.strip("/").split("/")
        if len(parts) == 3 and parts[1] == "sessions" and status in (204, 404):
            self.proofs.add(unquote(parts[2]))
        return response


def _response(status: int, headers: dict[str, str], body: Any) -> httpx.Response:
    if body is None:
        return httpx.Response(status, headers=headers)
    content = json.dumps(body).encode()
    return httpx.Response(
        status, headers={**headers, "Content-Type": "application/json"}, content=content
    )
