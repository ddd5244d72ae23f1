"""How much of a server's answers the client will take: bytes, items, pages and time.

CONTRACT §10.1: a server may be wrong or hostile, so nothing it sends may make the client
hang or grow without bound. Every limit lives here, in one `Bounds` value (the defaults are
the documented ones, `docs/sync.md` "Bounds"; tests pass smaller ones), and so does the
`WalkGuard` that a paginated walk (the index, a transcript) feeds page by page: it refuses
a cursor seen before, a page that does not advance, more items than asked, and a walk past
its page, item, byte or memory budget. Each refusal is a typed `SyncError` with a sentence
for the user; the caller ends its pass and prunes nothing. The index walk is resumable
(`sync.reconcile.walk`): its item, byte and memory budgets are a pass's share of the walk, and
reaching one ends the pass as progress (`PassBudgetSpent`, then `WalkUnfinished`), not as
a refusal; its page cap (a walk of empty pages) stays one.

The deadline of a pass (or of any operation with its own, like `converge delete`'s) reaches
the API client through a context variable (`operation_deadline`), not a parameter: a
rate-limit wait (`Retry-After`) is only worth taking if it ends before the operation must,
and the point-read workers inherit the variable with their context.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from sync.errors import PassTooSlow, UnexpectedResponse, WalkOutOfBounds, WalkUnfinished

KIB = 1024
MIB = 1024 * KIB
#: What one walked-but-unwritten session costs the client besides its strings' characters
#: (which the page's body bytes stand for): its `SessionView`, six string headers, its
#: planner slot, and the pass's transient share. The charge is the slope of a pass's peak
#: RSS per walked session, rounded up (`python -m bench client_rss`, ADR-0070; the figures
#: are in docs/performance.md, "Client memory").
WALK_ITEM_BYTES = 350
#: The memory a walk may hold (`Bounds.walk_memory`), chosen by measurement (ADR-0070).
WALK_MEMORY = 128 * MIB


@dataclass(frozen=True)
class Bounds:
    """Every limit the client puts on a server's answers (values: `docs/sync.md`)."""

    #: One index page (`limit` ≤ 200): 20 KiB per session is far above a real one.
    index_page_bytes: int = 4 * MIB
    #: One event page (`limit` ≤ 1000): a message body is at most 1 MiB on the way in.
    event_page_bytes: int = 32 * MIB
    #: One resource: a session, a run, an approval, an artifact's metadata, a run's events.
    view_bytes: int = 8 * MIB
    #: An error answer: its envelope is a few hundred bytes; past this it is read as absent.
    error_body_bytes: int = 64 * KIB
    #: Artifact content: its metadata's `size` plus `artifact_slack` (a near miss is left to
    #: the sha256 check to name), and a `size` above `artifact_bytes` is not downloaded.
    artifact_bytes: int = 256 * MIB
    artifact_slack: int = 64 * KIB
    #: Total time for one request: connect, headers and the whole body. A body that
    #: trickles a byte every few seconds never trips the per-read timeout; this cuts it.
    request_seconds: float = 20.0
    #: Total time for one reconcile pass (walk and point reads), window and CLI alike.
    pass_seconds: float = 50.0
    #: A pass's walk is charged `WALK_ITEM_BYTES` a session plus each page's body bytes
    #: (`WalkGuard`), and the pass stops past `walk_memory`. The walk writes each page as it
    #: arrives and holds one page at a time, so the charge is a conservative budget per
    #: pass, not a ceiling on the account: a pass at its budget keeps its pages and the next
    #: pass resumes (`sync.reconcile.walk`; `walk_total_items` caps all passes together).
    #: The page, item and byte caps stay for a walk of empty pages and for tests; the item
    #: and byte defaults are what the budget could hold at most, so they never bind first.
    walk_memory: int = WALK_MEMORY
    walk_pages: int = 10_000
    walk_items: int = WALK_MEMORY // WALK_ITEM_BYTES
    walk_bytes: int = WALK_MEMORY
    #: A walk resumed over several passes (`sync.reconcile.walk`) writes as it goes, so these
    #: cap what an endless index can add to the mirror: items and page bytes over all its
    #: passes. An abandoned walk is not started again by the window's own triggers.
    walk_total_items: int = 2_000_000
    walk_total_bytes: int = 1024 * MIB
    #: A transcript (`GET /v1/sessions/{id}/events` pages): events and bytes in all.
    transcript_pages: int = 1_000
    transcript_events: int = 200_000
    transcript_bytes: int = 256 * MIB
    #: The longest `Retry-After` a request waits out before retrying (429, 503).
    retry_after_seconds: float = 30.0
    # -- a live run's SSE stream (route 8): each frame is held whole before it is parsed --
    #: One line of the stream, its end not yet seen: a real frame is one `data:` line of
    #: one event (a message's text is at most 1 MiB on the way in, up to ~6 MiB escaped).
    sse_line_bytes: int = 8 * MIB
    #: One frame (its `data:` lines joined), the blank line that ends it not yet seen.
    sse_frame_bytes: int = 8 * MIB
    #: One event from its first byte to the blank line that ends it: long enough for a whole
    #: 8 MiB frame over a slow link. Silence is the read timeout's; this cuts bytes trickled
    #: a few at a time.
    sse_event_seconds: float = 120.0

    def index_walk(self) -> WalkGuard:
        """The guard of one walk of the session index: its caps and its memory budget."""
        return WalkGuard(
            "session index",
            self.walk_pages,
            self.walk_items,
            self.walk_bytes,
            max_memory=self.walk_memory,
            resumable=True,
        )


DEFAULT_BOUNDS = Bounds()
#: Nesting an event's `data` may have (tool output, content blocks): far above real ones.
JSON_DEPTH = 64

_pass_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "converge_pass_deadline", default=None
)


@contextlib.contextmanager
def operation_deadline(seconds: float) -> Iterator[float]:
    """Within the block, `remaining()` counts down to `seconds` from now (monotonic): the
    operation (a pass, a command) ends then, so no request should wait past it."""
    token = _pass_deadline.set(time.monotonic() + seconds)
    try:
        yield seconds
    finally:
        _pass_deadline.reset(token)


def remaining() -> float | None:
    """Seconds left before the current operation must end; None outside one."""
    deadline = _pass_deadline.get()
    return None if deadline is None else deadline - time.monotonic()


def pass_too_slow(seconds: float) -> PassTooSlow:
    """The error of a pass cut by its deadline (nothing of it is written)."""
    return PassTooSlow(
        f"The server did not finish answering within {seconds:.0f} s; "
        "the sync stopped there and nothing was removed."
    )


def walk_unfinished(
    seen: int, estimate: int, why: str = "The server answered slowly"
) -> WalkUnfinished:
    """The error of a pass cut mid-walk whose pages are kept (`sync.reconcile.walk`): by its
    deadline, or (`why` "The index is long") by its share of the walk's budget.

    The index has no total: "about N" is the mirror's row count when the walk began, shown
    only while it is above what the walk has seen (a first sync has none to show)."""
    so_far = f"{seen:,} of about {estimate:,}" if estimate > seen else f"{seen:,}"
    return WalkUnfinished(
        f"{why}: {so_far} conversations so far; Converge will go on.",
        seen=seen,
        estimate=estimate,
    )


class PassBudgetSpent(Exception):
    """A resumable walk's page would take the pass past its item, byte or memory budget:
    the pass ends its share of the walk there (the page unwritten, fetched again by the
    next pass). Not a `SyncError`: the walk turns it into `WalkUnfinished`."""


@dataclass
class WalkGuard:
    """The bounds of one paginated walk, fed each page's position, item count and size.

    `what` names the listing in messages ("session index", "conversation log"), and
    `consequence` says what the user is left with.
    Positions are opaque cursors (the index) or sequence numbers (events, which must
    strictly increase); either way one seen before means the walk would never end.

    `max_memory` is checked on a charge, `item_bytes` a session plus the page's bytes,
    rather than on measured memory: measuring costs more than the page, and the charge is
    the measured upper estimate (ADR-0070). A `resumable` walk (the index's, which writes
    each page and holds one at a time) reaching its item, byte or memory budget raises
    `PassBudgetSpent` instead of a refusal: the next pass goes on from there.
    """

    what: str
    max_pages: int
    max_items: int
    max_bytes: int
    #: The memory budget (0: none): each page costs `item_bytes` an item plus its bytes.
    max_memory: int = 0
    item_bytes: int = WALK_ITEM_BYTES
    consequence: str = "the sync stopped there and nothing was removed"
    resumable: bool = False
    pages: int = 0
    items: int = 0
    nbytes: int = 0
    charged: int = 0
    _seen: set[str] = field(default_factory=set)
    _last: int | None = None

    def _refuse(self, why: str) -> WalkOutOfBounds:
        return WalkOutOfBounds(
            f"The server's {self.what} {why}; {self.consequence}.",
            status=200,
        )

    def page(self, items: int, nbytes: int) -> None:
        """Count one page; past the walk's budget, refuse it."""
        self.pages += 1
        self.items += items
        self.nbytes += nbytes
        if self.pages > self.max_pages:
            raise self._refuse(f"went on past {self.max_pages:,} pages")
        self.charged += items * self.item_bytes + nbytes
        if self.resumable and self.pages > 1 and self._spent():  # one page is always taken
            raise PassBudgetSpent
        if self.items > self.max_items:
            raise self._refuse(f"went on past {self.max_items:,} items")
        if self.max_memory and self.charged > self.max_memory:
            raise self._refuse(
                f"went on past the {self.max_memory // MIB:,} MiB of memory this client "
                f"gives one walk, after {self.items:,} items"
            )
        if self.nbytes > self.max_bytes:
            raise self._refuse(f"went on past {self.max_bytes // MIB:,} MiB")

    def _spent(self) -> bool:
        over_memory = bool(self.max_memory) and self.charged > self.max_memory
        return over_memory or self.items > self.max_items or self.nbytes > self.max_bytes

    def cursor(self, cursor: str) -> None:
        """The next page's cursor: one this walk already followed would loop for ever."""
        if cursor in self._seen:
            raise self._refuse("hands out a page cursor it gave before (the walk would loop)")
        self._seen.add(cursor)

    def after(self, after: int) -> None:
        """The next page's `after`: it must strictly increase, or the walk stands still."""
        if self._last is not None and after <= self._last:
            raise self._refuse(f"does not move forward (next_after {after} after {self._last})")
        self._last = after


def check_items(what: str, count: int, limit: int) -> None:
    """More items than the `limit` asked for is an answer the contract does not allow."""
    if count > limit:
        raise UnexpectedResponse(
            f"The server sent {count:,} items on a {what} page that asked for at most "
            f"{limit:,}; the answer was refused.",
            status=200,
        )


def json_depth_ok(value: object, limit: int) -> bool:
    """True when `value` (as `json.loads` makes it) nests at most `limit` deep; iterative,
    so a deep value cannot exhaust the stack here or in whatever walks it later."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: list[object] | tuple[object, ...] = list(item.values())
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth >= limit:
            return False
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return True
