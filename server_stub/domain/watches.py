"""Watching the session index (CONTRACT §9.1): per-principal wake-ups for held first pages.

A first page with a matching `If-None-Match` and `Prefer: wait=N` is held until the
caller's index changes. Holding it costs one `asyncio.Event` wait on the event loop: no
thread, no database connection. What wakes it is the one entry point
`IndexWatches.principal_index_changed(tenant, principal)`, callable from any thread. The
database layer calls it after each commit of this process that bumped a principal's index
version (`Database.index_listener`), and the fleet bus (`server_stub.domain.bus`, PostgreSQL
`LISTEN`/`NOTIFY`) for the commits of other processes on the same database.

Held watches are capped per principal and per process (CONTRACT §10.2; each is an open
socket): `admit` refuses a hold past either cap, and the route then answers at once as if no
wait had been asked (304 without `Preference-Applied`), which a client handles already.

The database stays the source of truth: a waiter takes its event *before* reading the
version, so a commit between the read and the wait still wakes it, and a woken waiter reads
the version again rather than trusting the wake-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: `Prefer: wait=N` above this counts as this (CONTRACT §9.1).
MAX_WAIT = 60

PrincipalKey = tuple[str, str]  # (tenant, principal)
#: `principal_index_changed("", "")`: wake every watch. The fleet bus sends it after its
#: connection came back, since changes of other processes may have passed unheard.
WAKE_ALL: PrincipalKey = ("", "")

# One preference of RFC 7240 §2: `token [BWS "=" BWS word] *(OWS ";" [OWS parameter])`.
_WAIT = re.compile(r'\s*wait\s*=\s*(?:"(\d+)"|(\d+))\s*(?:;.*)?', re.IGNORECASE | re.DOTALL)
_NAME = re.compile(r"\s*([^\s=;]+)")


async def client_gone(receive: Callable[[], Awaitable[Mapping[str, Any]]]) -> None:
    """Return once the client has disconnected (ASGI `http.disconnect`).

    For a request whose body was read (or is empty: a GET), `receive` waits until the
    connection goes; a held watch listens for it so that a client that went away (a window
    closed, a watch cancelled) stops costing memory at once rather than at its deadline.
    """
    while (await receive())["type"] != "http.disconnect":
        pass


def parse_wait(headers: Iterable[str]) -> int | None:
    """N from the `Prefer` header lines (capped at `MAX_WAIT`), or None.

    None when there is no `wait` preference or when the first one is malformed (`wait=abc`,
    `wait=-1`, `wait=`, `wait=1.5`): a malformed preference is ignored, never an error.
    Leading zeros are part of a valid number (`wait=00001` is 1 s, not "long, so 60"). Only
    the first `wait` counts (RFC 7240 §2). Commas inside quoted parameter values are not
    split correctly; no preference this server knows uses them.
    """
    for line in headers:
        for item in line.split(","):
            name = _NAME.match(item)
            if name is None or name.group(1).lower() != "wait":
                continue
            match = _WAIT.fullmatch(item)
            if match is None:
                return None
            # delta-seconds (RFC 7240 §4.3, RFC 9111 §1.2.2) is 1*DIGIT: `00001` is 1, so the
            # leading zeros go before the length test; a 5,000-digit number must still not
            # reach int() (Python refuses those), and past 4 significant digits it is > 60.
            digits = (match.group(1) or match.group(2)).lstrip("0") or "0"
            return MAX_WAIT if len(digits) > 4 else min(int(digits), MAX_WAIT)
    return None


@dataclass
class _Slot:
    """The event the next change of one principal sets, and how many waiters hold it."""

    event: asyncio.Event = field(default_factory=asyncio.Event)
    holders: int = 0


class IndexWatches:
    """Per-principal wake-ups for held index watches, bound to the app's event loop."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        *,
        max_per_principal: int = 1 << 30,
        max_per_process: int = 1 << 30,
    ) -> None:
        self._loop = loop
        self._slots: dict[PrincipalKey, _Slot] = {}
        self._closing = False
        self.held = 0  # watches waiting right now (the benchmark reads it)
        self.max_per_principal = max_per_principal
        self.max_per_process = max_per_process
        self._admitted: dict[PrincipalKey, int] = {}
        self.admitted = 0  # watches admitted past the caps (held, or between two waits)
        #: The reads in flight for the watches one wake-up woke (`read_once`).
        self._reads: dict[tuple[asyncio.Event, int], asyncio.Future[Any]] = {}

    def admit(self, tenant: str, principal: str) -> str | None:
        """Count one more held watch of the principal; None when admitted, else the cap
        that refused it (`"principal"` or `"process"`). Pair an admission with `leave`.
        On the loop."""
        key = (tenant, principal)
        count = self._admitted.get(key, 0)
        if count >= self.max_per_principal:
            return "principal"
        if self.admitted >= self.max_per_process:
            return "process"
        self._admitted[key] = count + 1
        self.admitted += 1
        return None

    def leave(self, tenant: str, principal: str) -> None:
        """Give back an admission of `admit`."""
        key = (tenant, principal)
        count = self._admitted.get(key, 0)
        if count <= 0:
            return
        self.admitted -= 1
        if count == 1:
            del self._admitted[key]
        else:
            self._admitted[key] = count - 1

    @property
    def closing(self) -> bool:
        return self._closing

    def principal_index_changed(self, tenant: str, principal: str) -> None:
        """The principal's index changed and the change is committed: wake its watches.

        Thread-safe. Call it only after the commit (a watch woken earlier would read the old
        version and wait again, losing the change until its timeout).
        """
        key = (tenant, principal)  # ("", ""): wake every watch (the bus may have missed some)
        try:
            on_loop = asyncio.get_running_loop() is self._loop
        except RuntimeError:
            on_loop = False
        if on_loop:
            self._fire(key)
        else:
            with contextlib.suppress(RuntimeError):  # the loop closed during shutdown
                self._loop.call_soon_threadsafe(self._fire, key)

    def _fire(self, key: PrincipalKey) -> None:
        if key == WAKE_ALL:
            slots, self._slots = list(self._slots.values()), {}
        else:
            slot = self._slots.pop(key, None)
            slots = [] if slot is None else [slot]
        for slot in slots:
            slot.event.set()  # a woken watch re-reads its version: a spurious wake is harmless

    def subscribe(self, tenant: str, principal: str) -> asyncio.Event:
        """The event the principal's next change sets; call on the loop *before* reading the
        version, and pair with `unsubscribe`."""
        key = (tenant, principal)
        slot = self._slots.get(key)
        if slot is None:
            slot = self._slots[key] = _Slot()
        slot.holders += 1
        return slot.event

    def unsubscribe(self, tenant: str, principal: str, event: asyncio.Event) -> None:
        """Drop one hold on `event`; the last one forgets the principal's slot."""
        key = (tenant, principal)
        slot = self._slots.get(key)
        if slot is None or slot.event is not event:
            return  # already fired (and popped)
        slot.holders -= 1
        if slot.holders <= 0:
            del self._slots[key]

    async def hold(
        self, event: asyncio.Event, timeout: float, gone: asyncio.Future[None] | None = None
    ) -> bool:
        """Wait up to `timeout` s for `event`; True when it was set by a change, False on the
        timeout, when the server is shutting down, or when `gone` (the client disconnected)
        completed first."""
        if self._closing or (gone is not None and gone.done()):
            return False
        self.held += 1
        changed = asyncio.ensure_future(event.wait())
        try:
            waiting: set[asyncio.Future[Any]] = {changed} if gone is None else {changed, gone}
            await asyncio.wait(waiting, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self.held -= 1
            changed.cancel()
        return event.is_set() and not self._closing and not (gone is not None and gone.done())

    async def read_once[T](
        self, woken_by: asyncio.Event, limit: int, read: Callable[[], Awaitable[T]]
    ) -> T:
        """`read()` (the principal's version and first page of `limit` items), once for all
        the watches that the same wake-up (`woken_by`, their principal's event) woke and
        that ask while it is in flight. Every one of them was woken after the commit that
        set the event, and the read began after the first of them woke, so it sees that
        commit: one change of a principal watched by many devices costs this process one
        read, not one per device (where versions are not remembered: the PostgreSQL fleet).
        A caller that goes away leaves the read to the others."""
        key = (woken_by, limit)
        flight = self._reads.get(key)
        if flight is None:
            flight = asyncio.ensure_future(read())
            self._reads[key] = flight
            flight.add_done_callback(lambda _: self._reads.pop(key, None))
        return await asyncio.shield(flight)

    def close(self) -> None:
        """Shutting down: answer every held watch now (304) and hold no new one. On the
        loop."""
        self._closing = True
        slots, self._slots = self._slots, {}
        for slot in slots.values():
            slot.event.set()

    @property
    def principals_watched(self) -> int:
        return len(self._slots)
