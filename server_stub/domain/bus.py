"""The fleet's message bus: PostgreSQL `LISTEN`/`NOTIFY`, and each process's liveness.

Two kinds of message, both sent from inside the transaction that makes the change (PostgreSQL
delivers a `NOTIFY` at commit, and only if the transaction commits; identical messages of
one transaction are delivered once):

- `run`: something about run `r` was committed (an event, a cancel request, a decision).
  Receivers wake the run's waiters (`RunNotifier`): SSE feeds re-read, and the agent
  executing the run sees a cancel or a decision at once.
- `index`: the index of principal (`t`, `p`) changed (its version was bumped). Receivers
  call the callbacks registered with `FleetBus.on_index_change` (the hook for watches of
  the session list, CONTRACT §9.1).
- `cache`: a writer revokes the index-cache lease of holder `h`, sent at once from outside
  its transaction (`server_stub.domain.indexlease`); `FleetBus.on_cache_revoke` callbacks hear it.

Each message names its origin (the sending `Database`); a process skips its own, since it
already woke its local waiters. On SQLite (one process) nothing is sent.

Liveness: each process holds a session-level advisory lock named after its owner id on its
listening connection, for its whole life. PostgreSQL releases it the moment the process's
connection dies (a crash, `kill -9`), so `owner_alive` can tell a dead process from a live
one at once; run leases (server_stub.domain.leases) cover a process that hangs or is cut off.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
from collections.abc import Callable, Iterator

from sqlalchemy import make_url, text
from sqlalchemy.orm import Session

from server_stub.db.engine import Database
from server_stub.domain.notifier import RunNotifier

log = logging.getLogger(__name__)

CHANNEL = "converge_bus"
ORIGIN_KEY = "bus_origin"
_LOCK_SPACE = 0x434F4E56  # "CONV": the advisory-lock namespace of owner liveness locks
#: The same namespace, for counting live processes (`server_stub.domain.indexlease`).
LIVENESS_SPACE = _LOCK_SPACE

IndexCallback = Callable[[str, str], None]
RevokeCallback = Callable[[str], None]

_NOTIFY = text("SELECT pg_notify(:channel, :payload)")


def _payload(message: dict[str, str], origin: str) -> str:
    message["o"] = origin
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


def _announce(s: Session, message: dict[str, str]) -> None:
    if s.get_bind().dialect.name != "postgresql":
        return
    payload = _payload(message, str(s.info.get(ORIGIN_KEY, "")))
    s.connection().execute(_NOTIFY, {"channel": CHANNEL, "payload": payload})


def announce_run(s: Session, run_id: str) -> None:
    """Tell every process, at commit, that run `run_id` changed."""
    _announce(s, {"k": "run", "r": run_id})


def announce_index(s: Session, tenant: str, principal: str) -> None:
    """Tell every process, at commit, that the principal's session index changed."""
    _announce(s, {"k": "index", "t": tenant, "p": principal})


def index_payload(tenant: str, principal: str, origin: str) -> str:
    """The payload `announce_index` sends, for a statement that notifies by itself
    (`server_stub.domain.purge`)."""
    return _payload({"k": "index", "t": tenant, "p": principal}, origin)


def owner_key(owner: str) -> int:
    """The advisory-lock key (int4) of an owner id (8 hex digits)."""
    return int(owner, 16) - 2**31


class FleetBus:
    """One process's membership of the fleet: liveness lock, listener, dispatch."""

    def __init__(self, db: Database, notifier: RunNotifier) -> None:
        self.db = db
        self.owner = db.instance_id
        self.notifier = notifier
        self.distributed = not db.is_sqlite
        self._index_callbacks: list[IndexCallback] = []
        self._revoke_callbacks: list[RevokeCallback] = []
        #: Called on the loop when the listening connection is lost (no revoke can arrive).
        self.on_disconnect: Callable[[], None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self.received = 0

    def on_index_change(self, callback: IndexCallback) -> None:
        """Hook: `callback(tenant, principal)` on the loop when another process changed that
        principal's index (the index watches of CONTRACT §9.1 register here)."""
        self._index_callbacks.append(callback)

    def on_cache_revoke(self, callback: RevokeCallback) -> None:
        """Hook: `callback(holder)` on the loop when a writer revokes the index-cache lease
        of `holder` (`server_stub.domain.indexlease`)."""
        self._revoke_callbacks.append(callback)

    def owner_alive(self, owner: str) -> bool:
        """Whether the process `owner` still runs (blocking; call off the loop)."""
        if owner == self.owner:
            return True
        if not self.distributed:
            return False  # SQLite is single-process: any other owner was a previous process
        key = owner_key(owner)
        with self.db.engine.connect() as conn:
            got = conn.execute(
                text("SELECT pg_try_advisory_lock(:space, :key)"),
                {"space": _LOCK_SPACE, "key": key},
            ).scalar()
            if got:
                conn.execute(
                    text("SELECT pg_advisory_unlock(:space, :key)"),
                    {"space": _LOCK_SPACE, "key": key},
                )
            conn.commit()
        return not got

    async def start(self) -> None:
        """Join the fleet (PostgreSQL: connect, take the liveness lock, listen); returns once
        listening, so no commit after it goes unheard. Raises when the database is
        unreachable (the server does not start)."""
        if not self.distributed:
            return
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        self._task = loop.create_task(self._listen(), name="fleet-bus")
        await self._ready

    async def close(self) -> None:
        """Leave the fleet (closing the connection releases its locks)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task

    def _conninfo(self) -> str:
        url = make_url(self.db.url).set(drivername="postgresql")
        return url.render_as_string(hide_password=False)

    async def _listen(self) -> None:
        import psycopg

        backoff = 0.1
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(
                    self._conninfo(), autocommit=True
                ) as conn:
                    await conn.execute(
                        "SELECT pg_advisory_lock(%s, %s)", (_LOCK_SPACE, owner_key(self.owner))
                    )
                    await conn.execute(f"LISTEN {CHANNEL}")
                    if self._ready is not None and not self._ready.done():
                        self._ready.set_result(None)
                    else:
                        self._wake_everything()  # messages may have passed while cut off
                    backoff = 0.1
                    async for notify in conn.notifies():
                        self._dispatch(notify.payload)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if self._ready is not None and not self._ready.done():
                    self._ready.set_exception(exc)
                    return
                log.warning("fleet bus connection lost (%s); reconnecting", exc)
                if self.on_disconnect is not None:
                    self.on_disconnect()
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 5.0)

    def _wake_everything(self) -> None:
        self.notifier.notify_all()
        for callback in self._index_callbacks:
            with contextlib.suppress(Exception):
                callback("", "")

    def _dispatch(self, payload: str) -> None:
        try:
            message = json.loads(payload)
        except ValueError:
            return
        if not isinstance(message, dict) or message.get("o") == self.db.instance_id:
            return
        self.received += 1
        if message.get("k") == "run":
            self.notifier.notify(str(message.get("r", "")))
        elif message.get("k") == "cache":
            for revoke in self._revoke_callbacks:
                try:
                    revoke(str(message.get("h", "")))
                except Exception:
                    log.exception("cache revoke callback failed")
        elif message.get("k") == "index":
            tenant, principal = str(message.get("t", "")), str(message.get("p", ""))
            for callback in self._index_callbacks:
                try:
                    callback(tenant, principal)
                except Exception:
                    log.exception("index change callback failed")


@contextlib.contextmanager
def only_one(db: Database, name: str) -> Iterator[bool]:
    """Yields whether this process may do the fleet-wide job `name` now: on PostgreSQL, a
    session advisory lock taken without waiting (held by another process: False, skip this
    turn); on SQLite, always True (one process)."""
    if db.is_sqlite:
        yield True
        return
    key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)
    with db.engine.connect() as conn:
        got = bool(conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": key}).scalar())
        conn.commit()
        try:
            yield got
        finally:
            if got:
                conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": key})
                conn.commit()
