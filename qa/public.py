"""What `converge qa` learns through the sixteen public routes alone (CONTRACT §12).

Why a module of its own: the harness must prove convergence on any server that implements
the contract, so everything it needs that the stub's control plane could give (seeding,
the server's truth, the purge audit) has a public-route way here; the control plane only
adds to it (`qa.server.ControlPlane`). Every request goes straight to the server with the
harness's own client, never through a device or the fault proxy, and is bounded by the
client's caps and deadlines (`sync.api.bounds`).

- `Truth`: the server's index by a full walk, and what a point read says of one session
  (live, tombstoned: the owner's 404 with `reason: "deleted"`, or plainly absent).
- `seed_public`: the initial sessions, made as a client makes them (`POST /v1/sessions`
  and a run; every fifth one gets no run, so its title stays null until a turn).
- `PublicAudit`: before a delete, what the session holds (its runs and artifacts, from its
  events); after the workload, that every route answers the plain 404 for all of it
  (byte for byte the body of an id that never existed, CONTRACT §1) and that no memory or
  knowledge document still names the session as its source.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import partial
from typing import Any

import httpx

from sync.api.body import json_of
from sync.api.client import ApiClient
from sync.api.request import backoff
from sync.errors import BadCursor, ConnectionFailed, NotFound, SyncError, TlsError
from sync.wire.models import SessionView, text_message

log = logging.getLogger(__name__)

#: Sessions whose contents are recorded before their delete (and audited after).
AUDIT_LIMIT = 100
#: Runs and artifacts recorded per audited session.
ITEMS_PER_SESSION = 50
#: Pages of memories or knowledge documents read by the audit (200 each).
LIST_PAGES = 50
#: Ids that never existed, one per id prefix: their 404 is each route's plain body.
NEVER_EXISTED = {"ses": "ses_qa0never0existed", "run": "run_qa0never0existed",
                 "art": "art_qa0never0existed"}  # fmt: skip
#: Attempts of one of the harness's own requests: more than a device's, since a device
#: tries again on its next pass and the harness has no next pass.
ATTEMPTS = 5


class Presence(Enum):
    """What `GET /v1/sessions/{id}` says of a session to its owner."""

    LIVE = "live"  # 200
    TOMBSTONED = "tombstoned"  # 404 with details.reason "deleted"
    ABSENT = "absent"  # the plain 404 (never existed, or no tombstone kept)
    UNKNOWN = "unknown"  # anything else (5xx, network error)


class Truth:
    """The server's own answers, through a fresh client each time (never a device's)."""

    def __init__(
        self, url: str, token: str, transport: Callable[[str], httpx.AsyncBaseTransport]
    ) -> None:
        self.url = url
        self.token = token
        self._transport = transport

    def client(self) -> ApiClient:
        transport = self._transport(self.url)
        return ApiClient(self.url, self.token, transport=transport, retry_attempts=ATTEMPTS)

    async def index(self) -> list[SessionView]:
        """A full walk of `GET /v1/sessions` with a new client (restarted on a bad cursor)."""
        async with self.client() as api:
            for _attempt in range(3):
                items: list[SessionView] = []
                cursor: str | None = None
                try:
                    while True:
                        page = await api.list_sessions(limit=200, cursor=cursor)
                        assert page is not None  # no ETag sent, so never 304
                        items.extend(page.items)
                        if page.next_cursor is None:
                            return items
                        cursor = page.next_cursor
                except BadCursor:
                    continue
        raise SyncError("the server refused its own cursors three times")

    async def presence(self, session_id: str, api: ApiClient | None = None) -> Presence:
        """A point read of the session as its owner sees it."""
        if api is None:
            async with self.client() as own:
                return await self.presence(session_id, own)
        try:
            await api.get_session(session_id)
        except NotFound as exc:
            return Presence.TOMBSTONED if exc.reason == "deleted" else Presence.ABSENT
        except SyncError:
            return Presence.UNKNOWN
        return Presence.LIVE

    async def exists(self, session_id: str) -> bool | None:
        """200: True; 404: False; anything else: None."""
        found = await self.presence(session_id)
        return None if found is Presence.UNKNOWN else found is Presence.LIVE

    async def wait_idle(self, deadline: float, poll: float = 0.1) -> bool:
        """Poll the index until no session has an active run, or `deadline` (monotonic)."""
        while time.monotonic() < deadline:
            try:
                if not any(view.active_run_id for view in await self.index()):
                    return True
            except SyncError as exc:
                log.info("truth walk failed: %s", exc.message)
            await asyncio.sleep(poll)
        return False


async def unsent_retried[T](call: Callable[[], Awaitable[T]]) -> T:
    """`call()`, again while its request never left (`ConnectionFailed`, a TLS failure
    aside): the client repeats no POST, but one that never left made nothing."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return await call()
        except ConnectionFailed as exc:
            if isinstance(exc, TlsError) or attempt == ATTEMPTS:
                raise
            log.info("a request never left (%s); trying again", exc.message)
        await asyncio.sleep(backoff(attempt, 0.2, 2.0))
    raise AssertionError("unreachable")


async def seed_public(truth: Truth, texts: Iterable[str]) -> list[str]:
    """Create the initial sessions through the public routes, as a client would; their ids
    in creation order. Every fifth one stays without a run (title null)."""
    ids: list[str] = []
    async with truth.client() as api:
        for i, text in enumerate(texts):
            view = await unsent_retried(api.create_session)
            if i % 5 != 4:
                await unsent_retried(partial(api.start_run, view.id, text_message(text)))
            ids.append(view.id)
    return ids


@dataclass
class Contents:
    """What a session held just before its delete: the ids a purge must make unreachable."""

    runs: list[str] = field(default_factory=list)
    artifacts: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Leftover:
    """One thing of a deleted session that a public route still serves."""

    session_id: str
    what: str  # e.g. "GET /v1/runs/run_… answered 200"


class PublicAudit:
    """The purge audit through public routes: record before, verify after (see the module)."""

    def __init__(self, truth: Truth, limit: int = AUDIT_LIMIT) -> None:
        self.truth = truth
        self.limit = limit
        self.contents: dict[str, Contents] = {}
        self._plain: dict[str, tuple[int, bytes]] = {}

    async def record(self, session_id: str) -> None:
        """Read the session's events (one page) and keep its run and artifact ids (again at
        each delete attempt: a refused delete is followed by more turns); at most `limit`
        sessions are recorded, and a failure keeps what was recorded before (the audit is
        then smaller, never wrong)."""
        if session_id not in self.contents and len(self.contents) >= self.limit:
            return
        try:
            async with self.truth.client() as api:
                page = await api.session_events(session_id, limit=1000)
        except SyncError:
            return
        found = Contents()
        for event in page.items:
            if event.run_id and event.run_id not in found.runs:
                found.runs.append(event.run_id)
            artifact = event.data.get("artifact_id")
            if event.type == "artifact.created" and isinstance(artifact, str):
                found.artifacts.append(artifact)
        found.runs = found.runs[:ITEMS_PER_SESSION]
        found.artifacts = found.artifacts[:ITEMS_PER_SESSION]
        self.contents[session_id] = found

    def _paths(self, session_id: str) -> list[tuple[str, str]]:
        """(route template, path) of everything the session held, except route 3."""
        held = self.contents.get(session_id, Contents())
        paths = [("ses/events", f"/v1/sessions/{session_id}/events")]
        for run in held.runs:
            paths += [("run", f"/v1/runs/{run}"), ("run/events", f"/v1/runs/{run}/events")]
        for art in held.artifacts:
            paths += [
                ("art", f"/v1/artifacts/{art}"),
                ("art/content", f"/v1/artifacts/{art}/content"),
            ]
        return paths

    async def _plain_404(self, api: ApiClient, template: str) -> tuple[int, bytes]:
        if template not in self._plain:
            prefix, _, rest = template.partition("/")
            made_up = NEVER_EXISTED[prefix]
            route = {"ses": "sessions", "run": "runs", "art": "artifacts"}[prefix]
            path = f"/v1/{route}/{made_up}" + (f"/{rest}" if rest else "")
            answer = await api.request("GET", path, ok=(200, 404))
            self._plain[template] = (answer.status, answer.body)
        return self._plain[template]

    async def verify(self, deleted: Iterable[str]) -> tuple[dict[str, bool], list[Leftover]]:
        """For each deleted session: whether route 3 shows its tombstone, and every route
        that still answers something other than its plain 404 for what it held; then the
        memories and knowledge documents that still name any deleted session."""
        tombstones: dict[str, bool] = {}
        leftovers: list[Leftover] = []
        gone = list(deleted)
        async with self.truth.client() as api:
            for sid in gone[: self.limit]:
                tombstones[sid] = await self.truth.presence(sid, api) is Presence.TOMBSTONED
                for template, path in self._paths(sid):
                    try:
                        plain = await self._plain_404(api, template)
                        answer = await api.request("GET", path, ok=(200, 304, 404))
                    except SyncError as exc:
                        leftovers.append(Leftover(sid, f"GET {path}: {exc.message}"))
                        continue
                    if (answer.status, answer.body) != plain:
                        leftovers.append(
                            Leftover(sid, f"GET {path} answered {answer.status}, not the plain 404")
                        )
            leftovers += await self._sources(api, set(gone))
        return tombstones, leftovers

    async def _sources(self, api: ApiClient, gone: set[str]) -> list[Leftover]:
        out: list[Leftover] = []
        for path in ("/v1/memories", "/v1/knowledge/documents"):
            cursor: str | None = None
            for _page in range(LIST_PAGES):
                params: dict[str, Any] = {"limit": 200}
                if cursor:
                    params["cursor"] = cursor
                try:
                    answer = await api.request(
                        "GET", path, params=params, has_cursor=bool(cursor),
                        cap=api.bounds.index_page_bytes,
                    )  # fmt: skip
                    body = json_of(answer)
                except SyncError as exc:
                    out.append(Leftover("", f"GET {path}: {exc.message}"))
                    break
                items = body.get("items") if isinstance(body, Mapping) else None
                for item in items if isinstance(items, list) else []:
                    source = item.get("source_session_id") if isinstance(item, Mapping) else None
                    if isinstance(source, str) and source in gone:
                        out.append(Leftover(source, f"{path} still lists {item.get('id')!s:.40}"))
                cursor = body.get("next_cursor") if isinstance(body, Mapping) else None
                if not isinstance(cursor, str) or not cursor:
                    break
        return out
