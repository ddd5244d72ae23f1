"""The HTTP client of the sixteen `/v1` routes, on one long-lived `httpx.AsyncClient`.

Why one client: connection reuse (a reconcile pass is many small requests) and one place for
timeouts, the bearer token and retries. How one request is sent, bounded and retried is
`sync.api.request`; how much of each answer kind is read (`Bounds`: an index page, an event
page, a view, an artifact by its metadata's size) is decided here, per route, and more
items than the `limit` asked is refused. What an error answer or a lost connection means
(the typed error and its words) is `sync.api.failures`.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import ssl
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from sync.api.body import Answer, json_of, parse_json, read_capped
from sync.api.bounds import DEFAULT_BOUNDS, Bounds, check_items
from sync.api.failures import error_from_response, network_error
from sync.api.keepalive import keepalive_socket_options
from sync.api.network_backend import cancel_safe
from sync.api.proxies import environment_mounts
from sync.api.request import Requester
from sync.api.sse import frames
from sync.api.tls import client_context
from sync.errors import (
    BadId,
    NotFound,
    ResponseTooLarge,
    SyncError,
    UnexpectedResponse,
)
from sync.reconcile.primed import PrimedPage
from sync.wire.models import (
    Approval,
    Artifact,
    Event,
    EventPage,
    RunView,
    SessionPage,
    SessionView,
)

log = logging.getLogger(__name__)

# httpcore reaches anyio's asyncio backend at the first request, and anyio imports it by
# name then: a few dozen modules on the event loop's thread, the window's UI thread (the
# longest step of a first pass, `python -m bench ui`). Imported with the client instead,
# so it loads where the engine does (the window: on a worker thread).
with contextlib.suppress(ImportError):  # a private module: only an optimisation
    importlib.import_module("anyio._backends._asyncio")

DEFAULT_TIMEOUT = httpx.Timeout(10.0, connect=5.0)
#: An SSE stream gets a keep-alive comment at least every 15 s, so 45 s of silence is a
#: dead connection, not a quiet run.
STREAM_TIMEOUT = httpx.Timeout(10.0, connect=5.0, read=45.0)
PAGE_LIMIT = 200
#: A held watch answers within its `wait`; this much more silence is a dead connection
#: (a middlebox that stopped forwarding: keepalive cannot see it). Decision 0100.
WATCH_READ_MARGIN = 5.0


@dataclass(frozen=True)
class WatchAnswer:
    """The answer to a watch: `changed` (200: the index differs from the ETag sent),
    `applied` (the server held it: `Preference-Applied: wait=…`), the current `etag`."""

    changed: bool
    applied: bool
    etag: str | None


def _touches_index(method: str, path: str) -> bool:
    """Whether an answer can tell the mirror's index rows something: every request but the
    reads of transcripts, runs and artifacts (the content phase's traffic)."""
    if method.upper() != "GET":
        return True
    return path.startswith("/v1/sessions") and not path.endswith("/events")


def _session_page(response: Answer, limit: int, *, first: bool) -> SessionPage:
    """An index page's body, checked; `first` pages carry the answer's ETag."""
    body = json_of(response)
    if not isinstance(body, Mapping) or not isinstance(body.get("items"), list):
        raise UnexpectedResponse(
            "The server sent a malformed session page.", status=response.status
        )
    check_items("session index", len(body["items"]), limit)
    next_cursor = body.get("next_cursor")
    return SessionPage(
        items=[SessionView.from_json(item) for item in body["items"]],
        next_cursor=next_cursor if isinstance(next_cursor, str) and next_cursor else None,
        etag=response.headers.get("ETag") if first else None,
        nbytes=len(response.body),
    )


#: An index page at least this big is parsed on a worker thread: parsing a full page on
#: the event loop's thread (with a young collection inside it) would be the longest step of
#: a cold pass in the window (`python -m bench ui`).
OFF_LOOP_PAGE_BYTES = 16 * 1024


async def _parsed_page(response: Answer, limit: int, *, first: bool) -> SessionPage:
    """`_session_page`, off the event loop's thread for a big page."""
    if len(response.body) < OFF_LOOP_PAGE_BYTES:
        return _session_page(response, limit, first=first)
    return await asyncio.to_thread(_session_page, response, limit, first=first)


def _seg(value: str) -> str:
    """Quote an opaque id for use as one path segment (ids are never parsed, only echoed).

    Quoting makes a `/` harmless, but an id that is empty, `.` or `..` would still be
    normalised away by URL handling (`DELETE /v1/sessions/.` is sent as `DELETE
    /v1/sessions`), so it is refused before any request is made."""
    if value in ("", ".", ".."):
        raise BadId(f"{value!r} is not a valid id; nothing was sent to the server.")
    return quote(value, safe="")


class ApiClient:
    """Typed access to the contract's routes; raises `sync.errors` classes, never httpx's."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        retry_attempts: int = 3,
        retry_initial_wait: float = 0.2,
        retry_max_wait: float = 2.0,
        tls: ssl.SSLContext | None = None,
        bounds: Bounds = DEFAULT_BOUNDS,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.bounds = bounds
        # Certificates are checked against the OS trust store (and the profile's CA bundle
        # when the caller built `tls` with `sync.api.tls.client_context`), never certifi's.
        # Sockets carry TCP keepalive (`sync.api.keepalive`): a vanished peer ends in seconds.
        # The proxies the environment names keep both (`sync.api.proxies`): httpx would drop
        # them once a transport is given.
        mounts: dict[str, httpx.AsyncBaseTransport | None] = {}
        if transport is None:
            verify = tls if tls is not None else client_context()
            options = keepalive_socket_options()
            transport = cancel_safe(httpx.AsyncHTTPTransport(verify=verify, socket_options=options))
            mounts = environment_mounts(verify, options)
        self._client = httpx.AsyncClient(
            base_url=self.base_url,
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
            timeout=timeout,
            transport=transport,
            mounts=mounts,
            follow_redirects=False,
        )
        self._requester = Requester(
            self._client,
            self.base_url,
            bounds,
            retry_attempts=retry_attempts,
            retry_initial_wait=retry_initial_wait,
            retry_max_wait=retry_max_wait,
        )
        #: The server's clock from the `Date` of its answers (`sync.api.server_clock`).
        self.clock = self._requester.clock
        self._send = self._requester.request
        #: The first page a watch brought, for the pass it triggers (`sync.reconcile.primed`).
        self.primed = PrimedPage()

    async def request(self, method: str, path: str, **options: Any) -> Answer:
        """One bounded request with retries where safe (`sync.api.request.Requester`): the
        routes below and the few callers outside this module send through it."""
        if not _touches_index(method, path):
            return await self._send(method, path, **options)
        self.primed.begin()
        try:
            return await self._send(method, path, **options)
        finally:
            self.primed.end()

    async def aclose(self) -> None:
        await self._client.aclose()

    async def __aenter__(self) -> ApiClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- plumbing ---------------------------------------------------------------------------

    # -- sessions ---------------------------------------------------------------------------

    async def list_sessions(
        self, *, limit: int = PAGE_LIMIT, cursor: str | None = None, etag: str | None = None
    ) -> SessionPage | None:
        """One index page. With `etag` on the first page, None means 304: unchanged. A
        first page a watch has just brought (`sync.reconcile.primed`) is answered without a
        request."""
        if not cursor:
            primed = self.primed.take(limit)
            if primed is not None:
                return None if etag and primed.etag == etag else primed
        params: dict[str, Any] = {"limit": limit}
        headers: dict[str, str] = {}
        if cursor:
            params["cursor"] = cursor
        elif etag:
            headers["If-None-Match"] = etag
        try:
            response = await self.request(
                "GET",
                "/v1/sessions",
                params=params,
                headers=headers,
                ok=(200, 304),
                has_cursor=bool(cursor),
                cap=self.bounds.index_page_bytes,
            )
        except (NotFound, UnexpectedResponse) as exc:
            if exc.status != 404:
                raise
            # The index route always exists on a Converge server.
            raise UnexpectedResponse(
                f"The server at {self.base_url} does not serve the Converge API "
                "(404 on /v1/sessions). Check the server URL.",
                status=404,
                code=exc.code,
                method="GET",
                path="/v1/sessions",
            ) from exc
        if response.status == 304:
            return None
        return await _parsed_page(response, limit, first=not cursor)

    async def watch_sessions(
        self, etag: str, wait: int, margin: float = WATCH_READ_MARGIN, *, limit: int = 1
    ) -> WatchAnswer:
        """Hold a conditional first page up to `wait` s for a change (CONTRACT §9.1).

        The ETag does not depend on the limit. With `limit` the walk's page size, a 200's
        page is kept for the pass it triggers (`sync.reconcile.primed`, decision 0195); `limit=1`
        only says whether the index changed. Silence `margin` s past the wait is a dead
        connection (`ResponseTooSlow` or a network error).
        """
        mark = self.primed.mark()
        response = await self._send(
            "GET",
            "/v1/sessions",
            params={"limit": limit},
            headers={"If-None-Match": etag, "Prefer": f"wait={wait}"},
            ok=(200, 304),
            timeout=httpx.Timeout(10.0, connect=5.0, read=wait + margin),
            cap=self.bounds.index_page_bytes,
            deadline=self.bounds.request_seconds + wait + margin,
        )
        applied = response.headers.get("Preference-Applied", "")
        if response.status == 200 and limit > 1:
            # A page the pass could not use either is not kept: the pass asks, and says why.
            with contextlib.suppress(SyncError):
                page = await _parsed_page(response, limit, first=True)
                self.primed.keep(mark, limit, page)
        return WatchAnswer(
            changed=response.status == 200,
            applied="wait=" in applied.replace(" ", "").lower(),
            etag=response.headers.get("ETag"),
        )

    async def get_session(self, session_id: str) -> SessionView:
        response = await self.request("GET", f"/v1/sessions/{_seg(session_id)}")
        return SessionView.from_json(json_of(response))

    async def create_session(self) -> SessionView:
        response = await self.request("POST", "/v1/sessions", json_body={}, ok=(201,))
        return SessionView.from_json(json_of(response))

    async def delete_session(self, session_id: str) -> None:
        """204 (deleted now or before). Raises NotFound, ActiveRunExists, ... otherwise."""
        await self.request("DELETE", f"/v1/sessions/{_seg(session_id)}", ok=(204,))

    # -- runs and events --------------------------------------------------------------------

    async def start_run(self, session_id: str, message: Mapping[str, Any]) -> RunView:
        response = await self.request(
            "POST",
            f"/v1/sessions/{_seg(session_id)}/runs",
            json_body={"input": dict(message)},
            ok=(202,),
        )
        return RunView.from_json(json_of(response))

    async def session_events(
        self, session_id: str, *, after: int | None = None, limit: int = 1000
    ) -> EventPage:
        params: dict[str, Any] = {"limit": limit}
        if after is not None:
            params["after"] = after
        response = await self.request(
            "GET",
            f"/v1/sessions/{_seg(session_id)}/events",
            params=params,
            cap=self.bounds.event_page_bytes,
        )
        body = json_of(response)
        if not isinstance(body, Mapping) or not isinstance(body.get("items"), list):
            raise UnexpectedResponse("The server sent a malformed event page.", status=200)
        check_items("event", len(body["items"]), limit)
        next_after = body.get("next_after")
        return EventPage(
            items=[Event.from_json(item) for item in body["items"]],
            next_after=next_after if isinstance(next_after, int) else None,
            nbytes=len(response.body),
        )

    async def get_run(self, run_id: str) -> RunView:
        response = await self.request("GET", f"/v1/runs/{_seg(run_id)}")
        return RunView.from_json(json_of(response))

    async def run_events(self, run_id: str) -> list[Event]:
        """The run's events so far, as JSON (route 8 without SSE)."""
        response = await self.request(
            "GET", f"/v1/runs/{_seg(run_id)}/events", cap=self.bounds.event_page_bytes
        )
        body = json_of(response)
        if not isinstance(body, Mapping) or not isinstance(body.get("items"), list):
            raise UnexpectedResponse("The server sent a malformed event list.", status=200)
        return [Event.from_json(item) for item in body["items"]]

    async def cancel_run(self, run_id: str) -> RunView:
        response = await self.request("POST", f"/v1/runs/{_seg(run_id)}/cancel", ok=(202,))
        return RunView.from_json(json_of(response))

    async def decide_approval(self, approval_id: str, decision: str) -> Approval:
        response = await self.request(
            "POST",
            f"/v1/approvals/{_seg(approval_id)}/decision",
            json_body={"decision": decision},
        )
        return Approval.from_json(json_of(response))

    async def stream_run_events(
        self, run_id: str, *, last_event_id: int | None = None
    ) -> AsyncIterator[Event]:
        """One SSE connection to a run's events; ends when the server closes the stream.

        Keep-alive comments (and frames with empty data) are skipped. Bounded
        (`sync.api.sse`): a line or a frame past its cap ends the stream with
        `ResponseTooLarge`, an event trickled past its time with `ResponseTooSlow`; a
        frame's JSON is parsed as a page's is (`parse_json`, then the event's depth
        check), so a deep one is an `UnexpectedResponse`. Raises NetworkError when the
        connection drops; `sync.api.conversation.follow_run` resumes with Last-Event-ID.
        Consumers should cancel the consuming task rather than break out (PITFALLS §2).
        """
        path = f"/v1/runs/{_seg(run_id)}/events"
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        bounds = self.bounds
        self.primed.begin()  # a stream's frames may reach the mirror too
        try:
            async with self._client.stream(
                "GET", path, headers=headers, timeout=STREAM_TIMEOUT
            ) as response:
                if response.status_code != 200:
                    body = await read_capped(response, bounds.error_body_bytes, hint_only=True)
                    answer = Answer(response.status_code, response.headers, body, "GET", path)
                    raise error_from_response(answer, self.base_url)
                async for frame in frames(
                    response,
                    line_bytes=bounds.sse_line_bytes,
                    frame_bytes=bounds.sse_frame_bytes,
                    event_seconds=bounds.sse_event_seconds,
                ):
                    if not frame.data:
                        continue
                    payload = parse_json(
                        frame.data, status=200, method="GET", path=path, what="an SSE frame"
                    )
                    yield Event.from_json(payload)
        except SyncError:
            raise
        except httpx.HTTPError as exc:
            raise network_error(exc, self.base_url, "GET", path) from exc
        finally:
            self.primed.end()

    # -- artifacts --------------------------------------------------------------------------

    async def get_artifact(self, artifact_id: str) -> Artifact:
        response = await self.request("GET", f"/v1/artifacts/{_seg(artifact_id)}")
        return Artifact.from_json(json_of(response))

    async def artifact_content(self, artifact_id: str, *, size: int | None = None) -> bytes:
        """The artifact's bytes: at most its metadata's `size` (plus a little slack, so a
        near miss is named by the sha256 check as `IntegrityError`) and never past the
        artifact cap."""
        ceiling = self.bounds.artifact_bytes
        if size is not None and size > ceiling:
            raise ResponseTooLarge(
                f"The artifact is {size:,} bytes, more than the {ceiling // (1 << 20)} MiB "
                "this client downloads.",
                status=200,
            )
        response = await self.request(
            "GET",
            f"/v1/artifacts/{_seg(artifact_id)}/content",
            headers={"Accept": "*/*"},
            cap=min(max(0, size) + self.bounds.artifact_slack, ceiling)
            if size is not None
            else ceiling,
        )
        return response.body
