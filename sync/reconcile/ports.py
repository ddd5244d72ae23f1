"""What the engine core needs from a server, as a protocol: the network-free seam.

`Reconciler` and `DeleteService` (the two places where CONTRACT §7's rules live: prune only
on a 404, delete server-first) talk to a `SessionIndexApi`, not to HTTP. `sync.api.client.ApiClient`
is the implementation over the sixteen routes; an in-memory server index is another
(`tests/sync/memory_index.py`), which lets a Hypothesis state machine drive several devices
and a server through thousands of steps in seconds, the way vdirsyncer tests its sync against
`MemoryStorage`. Implementations raise `sync.errors` classes with the contract's meaning:
`NotFound` only for the contract's own 404, `ActiveRunExists` for the 409, `ConnectionFailed`
when nothing was sent, `NetworkError` when an answer was lost.
"""

from __future__ import annotations

from typing import Protocol

from sync.api.bounds import Bounds
from sync.wire.models import EventPage, RunView, SessionPage, SessionView


class SessionIndexApi(Protocol):
    """The routes the reconcile and the delete use (1, 3, 4, 7, 9)."""

    @property
    def base_url(self) -> str:
        """Where the server is (for messages)."""
        ...

    async def list_sessions(
        self, *, limit: int = ..., cursor: str | None = None, etag: str | None = None
    ) -> SessionPage | None:
        """One index page; with `etag` on the first page, None means unchanged (304)."""
        ...

    async def get_session(self, session_id: str) -> SessionView:
        """The point read: a SessionView, or NotFound (the contract's 404)."""
        ...

    async def delete_session(self, session_id: str) -> None:
        """204 returns; NotFound, ActiveRunExists, … raise."""
        ...

    async def get_run(self, run_id: str) -> RunView:
        """One run (to observe a cancelled run's end before deleting)."""
        ...

    async def cancel_run(self, run_id: str) -> RunView:
        """Ask a run to stop (cooperative)."""
        ...


class TranscriptApi(Protocol):
    """The route the content phase uses (6: a session's events after a sequence)."""

    @property
    def bounds(self) -> Bounds:
        """The limits on the server's answers (`sync.api.bounds`)."""
        ...

    async def session_events(
        self, session_id: str, *, after: int | None = None, limit: int = ...
    ) -> EventPage:
        """One page of events after `after` (exclusive); NotFound for a gone session."""
        ...
