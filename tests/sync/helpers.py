"""Helpers for the integration tests: devices (profiles + engines) and server-side set-up."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Coroutine
from pathlib import Path
from typing import Any

import httpx

from sync.api.client import ApiClient
from sync.engine import SyncEngine
from sync.errors import SyncError
from sync.profile.profile import Profile
from sync.reconcile.walk import PageHook
from sync.wire.models import SessionView, text_message
from tests.sync.faults import FaultTransport

TEST_DEADLINE = 60.0


def run[T](coro: Coroutine[Any, Any, T], timeout: float = TEST_DEADLINE) -> T:
    """Run one test coroutine on a fresh loop, bounded so a hang fails instead of blocking."""

    async def bounded() -> T:
        async with asyncio.timeout(timeout):
            return await coro

    return asyncio.run(bounded())


@contextlib.asynccontextmanager
async def device(
    url: str,
    folder: Path,
    *,
    token: str = "dev-alice",
    page_limit: int = 200,
    use_etag: bool = True,
    page_hook: PageHook | None = None,
) -> AsyncIterator[tuple[SyncEngine, FaultTransport]]:
    """One client device: its own profile folder, mirror and fault-injecting transport."""
    transport = FaultTransport()
    profile = Profile.load(folder, server=url, token=token, environ={})
    engine = await SyncEngine.open(
        profile,
        transport=transport,
        page_limit=page_limit,
        use_etag=use_etag,
        retry_attempts=2,
        page_hook=page_hook,
    )
    try:
        yield engine, transport
    finally:
        await engine.close()


class Server:
    """Server-side set-up through the public API and the control plane (not the engine)."""

    def __init__(self, url: str, token: str = "dev-alice") -> None:
        self.url = url
        self.token = token
        self.api = ApiClient(url, token)
        self.http = httpx.AsyncClient(base_url=url, timeout=10)

    async def __aenter__(self) -> Server:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.api.aclose()
        await self.http.aclose()

    async def create(self, text: str | None = None) -> SessionView:
        """A session; with `text`, its first run is started and awaited to its end."""
        view = await self.api.create_session()
        if text is not None:
            run_view = await self.api.start_run(view.id, text_message(text))
            await self.wait_run(run_view.id)
            view = await self.api.get_session(view.id)
        return view

    async def start(self, session_id: str, text: str) -> str:
        return (await self.api.start_run(session_id, text_message(text))).id

    async def wait_run(self, run_id: str, timeout: float = 20.0) -> None:
        async with asyncio.timeout(timeout):
            while not (await self.api.get_run(run_id)).is_terminal:
                await asyncio.sleep(0.02)

    async def control_session(self, text: str, updated_at: str | None = None) -> SessionView:
        body: dict[str, Any] = {
            "token": self.token,
            "messages": [text_message(text)],
        }
        if updated_at is not None:
            body["updated_at"] = updated_at
        response = await self.http.post("/_stub/sessions", json=body)
        response.raise_for_status()
        return SessionView.from_json(response.json())

    async def index(self) -> dict[str, SessionView]:
        """The whole index, walked with a plain client."""
        out: dict[str, SessionView] = {}
        cursor: str | None = None
        while True:
            page = await self.api.list_sessions(limit=200, cursor=cursor)
            assert page is not None
            for item in page.items:
                out[item.id] = item
            if page.next_cursor is None:
                return out
            cursor = page.next_cursor

    async def wait_quiet(self, timeout: float = 20.0) -> None:
        """Until no session of the principal has an active run."""
        async with asyncio.timeout(timeout):
            while any(v.active_run_id for v in (await self.index()).values()):
                await asyncio.sleep(0.05)

    async def delete(self, session_id: str) -> None:
        await self.api.delete_session(session_id)

    async def exists(self, session_id: str) -> bool:
        try:
            await self.api.get_session(session_id)
        except SyncError as exc:
            if getattr(exc, "status", None) == 404:
                return False
            raise
        return True
