"""The first page a watch brought, kept for the pass it triggers (decision 0195).

A watch that answers 200 has just rendered the index's first page; asking for it at the
page size of the walk (rather than `limit=1`) and handing it to the pass saves every
watching device one request, and the server one page, per change: with 50 devices of one
principal that is 50 requests less per change, all sent at the same instant.

Only a page that is the newest thing the client knows is kept: no other request of the
client was in flight or begun while the watch was held, so no answer the mirror has taken
(a prune, a delete's 204) can be newer than the page. Any request begun afterwards drops
it, and so does age: the page is used only by a first-page read within `PRIMED_SECONDS`,
once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from sync.wire.models import SessionPage

#: How long a watch's page stands in for the pass's first request.
PRIMED_SECONDS = 1.0


@dataclass
class _Kept:
    limit: int
    page: SessionPage
    at: float


class PrimedPage:
    """Bookkeeping of one `ApiClient`: requests in flight, and the page a watch kept."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._kept: _Kept | None = None
        self._begun = 0  # requests begun, the watches' own excluded
        self._in_flight = 0
        self.used = 0  # first pages answered from a watch's page (tests read it)

    def begin(self) -> None:
        """A request (not a watch) is about to be sent: a kept page is no longer newest."""
        self._kept = None
        self._begun += 1
        self._in_flight += 1

    def end(self) -> None:
        self._in_flight -= 1

    def mark(self) -> tuple[int, int]:
        """Taken when a watch is sent; `keep` compares it."""
        return self._begun, self._in_flight

    def keep(self, mark: tuple[int, int], limit: int, page: SessionPage) -> None:
        """A watch's 200 page, kept only if nothing else was asked while it was held."""
        if mark == (self._begun, 0) and self._in_flight == 0:
            self._kept = _Kept(limit, page, self._clock())

    def take(self, limit: int) -> SessionPage | None:
        """The kept page for a first-page read of `limit` items, once, while fresh."""
        kept, self._kept = self._kept, None
        if kept is None or kept.limit != limit or self._clock() - kept.at > PRIMED_SECONDS:
            return None
        self.used += 1
        return kept.page
