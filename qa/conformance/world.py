"""What the checks stand on: sessions, runs and walks made through the public routes.

Everything a check creates is recorded here and deleted at the end (`cleanup`), whatever the
verdicts: the checker is pointed at real deployments. The scripted agent's commands
(CONTRACT §4: `/wait`, `/artifact`, `/remember`, `/skill`, `/approve`) are how a run with a
known effect is made without the control plane. Ids of never-existed resources carry the
right prefix and a random tail, so a server cannot tell them from real ones by their shape.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from qa.conformance.probe import Answer, Probe, RuleFailed, expect, seg

TERMINAL = frozenset({"completed", "failed", "cancelled"})
ACTIVE = frozenset({"queued", "running", "waiting_for_approval"})
#: How long a scripted run may take to reach a state (a real server's agent delay included).
RUN_SECONDS = 30.0
#: Pages a walk may take before it is called endless (200 items each at most).
MAX_PAGES = 500


def message(text: str) -> dict[str, Any]:
    """A user message of one text block (the `input` of a run)."""
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def never_existed(prefix: str) -> str:
    """An id of the right shape that no server has handed out."""
    return f"{prefix}{secrets.token_hex(12)}"


@dataclass(frozen=True)
class Walk:
    """One complete walk of an index: its items in order and the pages' answers."""

    items: list[dict[str, Any]]
    pages: list[Answer]

    def ids(self) -> list[str]:
        return [str(item.get("id")) for item in self.items]


@dataclass
class World:
    """The probe plus everything made so far (for the checks' reuse and the cleanup)."""

    probe: Probe
    nonce: str = field(default_factory=lambda: secrets.token_hex(4))
    created: list[tuple[str, str]] = field(default_factory=list)  # (token, session id)
    _cache: dict[str, Any] = field(default_factory=dict)
    _locks: dict[str, asyncio.Lock] = field(default_factory=dict)

    async def session(self, token: str | None = None) -> dict[str, Any]:
        """A new session of `token` (default A); its SessionView."""
        token = token or self.probe.a
        answer = await self.probe.call("POST", "/v1/sessions", token=token, body={})
        expect(answer.status == 201, f"{answer.what()}: creating a session, expected 201")
        view = answer.obj()
        expect(isinstance(view.get("id"), str), f"{answer.what()}: the SessionView has no id")
        self.created.append((token, view["id"]))
        return view

    async def start(self, session_id: str, text: str, token: str | None = None) -> dict[str, Any]:
        """Start a run (202); its RunView."""
        answer = await self.probe.call(
            "POST",
            f"/v1/sessions/{seg(session_id)}/runs",
            token=token or self.probe.a,
            body={"input": message(text)},
        )
        expect(answer.status == 202, f"{answer.what()}: starting a run, expected 202")
        view = answer.obj()
        expect(isinstance(view.get("id"), str), f"{answer.what()}: the RunView has no id")
        return view

    async def run_view(self, run_id: str, token: str | None = None) -> dict[str, Any]:
        answer = await self.probe.call(
            "GET", f"/v1/runs/{seg(run_id)}", token=token or self.probe.a
        )
        expect(answer.status == 200, f"{answer.what()}: reading a run, expected 200")
        return answer.obj()

    async def until(self, run_id: str, statuses: frozenset[str]) -> dict[str, Any]:
        """Poll the run until its status is one of `statuses` (bounded)."""
        end = time.monotonic() + min(RUN_SECONDS, max(self.probe.left(), 1.0))
        while True:
            view = await self.run_view(run_id)
            if view.get("status") in statuses:
                return view
            if time.monotonic() > end:
                raise RuleFailed(
                    f"run {run_id} still {view.get('status')!r} after {RUN_SECONDS:.0f} s "
                    f"(waited for {', '.join(sorted(statuses))})"
                )
            await asyncio.sleep(0.05)

    async def finished(self, text: str, session_id: str | None = None) -> tuple[str, str]:
        """(session id, run id) of a run of `text` that reached a terminal status."""
        if session_id is None:
            session_id = (await self.session())["id"]
        run = await self.start(session_id, text)
        await self.until(run["id"], TERMINAL)
        return session_id, run["id"]

    async def events(self, session_id: str, token: str | None = None) -> list[dict[str, Any]]:
        """Every event of the session (route 6, walked by `next_after`)."""
        items: list[dict[str, Any]] = []
        after = 0
        for _page in range(MAX_PAGES):
            answer = await self.probe.call(
                "GET",
                f"/v1/sessions/{seg(session_id)}/events",
                token=token or self.probe.a,
                params={"after": str(after), "limit": "1000"},
            )
            expect(answer.status == 200, f"{answer.what()}: reading events, expected 200")
            page = answer.obj()
            batch = page.get("items")
            if not isinstance(batch, list):
                raise RuleFailed(f"{answer.what()}: no items list")
            items.extend(batch)
            nxt = page.get("next_after")
            if nxt is None:
                return items
            expect(isinstance(nxt, int) and nxt > after, f"{answer.what()}: next_after {nxt!r}")
            after = nxt
        raise RuleFailed(f"the events of {session_id} did not end within {MAX_PAGES} pages")

    async def walk(
        self, path: str = "/v1/sessions", *, token: str | None = None, limit: int = 200
    ) -> Walk:
        """A whole index walk (routes 1, 13, 15); a cursor that repeats fails the rule."""
        items: list[dict[str, Any]] = []
        pages: list[Answer] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _page in range(MAX_PAGES):
            params = {"limit": str(limit)}
            if cursor is not None:
                params["cursor"] = cursor
            answer = await self.probe.call("GET", path, token=token or self.probe.a, params=params)
            expect(answer.status == 200, f"{answer.what()}: walking {path}, expected 200")
            page = answer.obj()
            batch = page.get("items")
            if not isinstance(batch, list):
                raise RuleFailed(f"{answer.what()}: no items list")
            items.extend(batch)
            pages.append(answer)
            cursor = page.get("next_cursor")
            if cursor is None:
                return Walk(items, pages)
            expect(isinstance(cursor, str) and cursor not in seen, f"{path}: a cursor repeats")
            seen.add(cursor)
        raise RuleFailed(f"the walk of {path} did not end within {MAX_PAGES} pages")

    async def shared(self, name: str, make: Any) -> Any:
        """A fixture made once and shared by the checks that need it (`make` a coroutine
        function); a fixture that failed fails each check that asks for it again."""
        lock = self._locks.setdefault(name, asyncio.Lock())
        async with lock:
            if name not in self._cache:
                try:
                    self._cache[name] = await make()
                except RuleFailed as exc:
                    self._cache[name] = RuleFailed(f"setup ({name}): {exc.evidence}")
            value = self._cache[name]
        if isinstance(value, RuleFailed):
            raise value
        return value

    async def cleanup(self) -> list[str]:
        """Delete every session made (a run still active is cancelled first); the ids that
        could not be deleted."""
        left: list[str] = []
        made, self.created = self.created, []
        for token, session_id in made:
            try:
                if not await self._delete(token, session_id):
                    left.append(session_id)
            except RuleFailed:
                left.append(session_id)
        return left

    async def _delete(self, token: str, session_id: str) -> bool:
        path = f"/v1/sessions/{seg(session_id)}"
        for _attempt in range(3):
            answer = await self.probe.call("DELETE", path, token=token)
            if answer.status in (204, 404):
                return True
            if answer.status != 409:
                return False
            active = answer.details().get("active_run_id")
            if isinstance(active, str):
                await self.probe.call("POST", f"/v1/runs/{seg(active)}/cancel", token=token)
                end = time.monotonic() + 10
                while time.monotonic() < end:
                    view = await self.probe.call("GET", f"/v1/runs/{seg(active)}", token=token)
                    if view.status != 200 or view.obj().get("status") in TERMINAL:
                        break
                    await asyncio.sleep(0.1)
        return False
