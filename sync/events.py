"""What `SyncEngine` tells its listeners, and the one place those events are sent from.

Two kinds of event: `IndexChanged` after anything changed the mirror's rows and
`StatusChanged` when the sync state moves. `IndexChanged` says "the mirror changed up to
`seq`" (its change sequence, decision 0209) and which ids, for listeners that count them;
it carries no rows. A screen that shows the mirror at some number pulls what changed since
(`SyncEngine.changes_since`) when an event names a larger one, and ignores it otherwise, so
the order in which events arrive, or one that never does, cannot leave it wrong.

`TriggerReason` goes the other way: why the window (or a timer, or the watch) asks for a
pass.

Value types only and no I/O here: a window imports them, and paints its first rows, before
httpx is loaded (docs/performance.md, first paint).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from sync.errors import (
    MirrorDamaged,
    NetworkError,
    SyncError,
    TlsError,
    Unavailable,
    WalkUnfinished,
)

if TYPE_CHECKING:
    from sync.mirror.apply import ApplyResult
    from sync.reconcile.reconciler import ReconcileReport

log = logging.getLogger("sync.engine")  # the events are the engine's to tell


class TriggerReason(Enum):
    """Why a pass runs; the window drives these (ADR-0050 §8)."""

    CONNECT = "connect"
    FOREGROUND = "foreground"
    TIMER = "timer"
    MANUAL = "manual"
    WATCH = "watch"  # the index watch saw a change (CONTRACT §9.1)


class EngineState(Enum):
    IDLE = "idle"  # the last pass concluded
    SYNCING = "syncing"  # a pass is running
    OFFLINE = "offline"  # the last pass could not reach the server, on its walk or on a
    # point read (then the rows it could not check were kept)
    TROUBLE = "trouble"  # the server answered 503 (its database, say) past the retries:
    # it is having trouble for a while, neither offline nor refusing; passes go on
    WALKING = "walking"  # the pass ran out of time or budget mid-walk (WalkUnfinished): pages
    # kept and the next pass goes on from there; progress, neither offline nor an error
    ERROR = "error"  # the server refused us (401/403) or answered nonsense, likewise
    DAMAGED = "damaged"  # the mirror file is damaged (MirrorDamaged): rebuild it (sync.repair)


@dataclass(frozen=True)
class EngineStatus:
    state: EngineState
    message: str = ""
    last_success: float | None = None  # time.time() of the last conclusive pass
    #: What ended the last pass (None when it concluded): the window names its cause
    #: (a refused token, a host it can't reach) and the fix; never compared.
    problem: SyncError | None = field(default=None, compare=False)


@dataclass(frozen=True)
class IndexChanged:
    """The mirror changed up to change sequence `seq`: ids inserted, updated, removed by
    the write that took it. `report` when a pass did it. A listener that already shows
    `seq` or more ignores it; otherwise it pulls what changed since what it shows."""

    inserted: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    report: ReconcileReport | None = field(default=None, compare=False)
    seq: int = field(default=0, compare=False)


@dataclass(frozen=True)
class StatusChanged:
    status: EngineStatus


@dataclass(frozen=True)
class TranscriptChanged:
    """Events were added to these conversations' mirrored transcripts (the content phase,
    `SyncEngine.refresh_transcript`): a pane showing one pulls the events after the last
    sequence it shows with `SyncEngine.mirrored_transcript`. A transcript removed with its
    row comes as `IndexChanged.removed`; an evicted one changes nothing a pane shows."""

    session_ids: tuple[str, ...]


EngineEvent = IndexChanged | StatusChanged | TranscriptChanged
Listener = Callable[[EngineEvent], None]


class EngineEvents:
    """The listeners of one engine; events go out on the caller's (the event loop's) thread.

    A listener that raises is logged and the others still get the event.
    """

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add a listener; returns the function that removes it."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._listeners.remove(listener)

        return unsubscribe

    def emit(self, event: EngineEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                log.exception("engine listener failed on %r", type(event).__name__)

    def announce_pass(self, report: ReconcileReport) -> None:
        """A pass's write, when it changed anything (`Reconciler`'s `on_report`)."""
        if report.changed:
            self.emit(
                IndexChanged(report.inserted, report.updated, report.pruned, report, report.seq)
            )

    def announce_transcripts(self, session_ids: tuple[str, ...]) -> None:
        """Transcripts that gained events (`sync.reconcile.content`'s `on_changed`)."""
        if session_ids:
            self.emit(TranscriptChanged(session_ids))

    def announce_write(self, applied: ApplyResult) -> None:
        """Any other write (a delete, a refreshed row), when it changed rows."""
        if applied.seq:
            self.emit(
                IndexChanged(
                    tuple(applied.inserted),
                    tuple(applied.updated),
                    tuple(applied.removed),
                    seq=applied.seq,
                )
            )


def state_after(problem: SyncError) -> EngineState:
    """The state a pass that ended with `problem` leaves: a 503 is the server having
    trouble for a while (CONTRACT §10.2), no answer is offline, and anything else, a
    refused certificate included (a setting to fix, not a network that comes back), is an
    error. A walk cut by its deadline or budget, its pages kept, is progress (`WALKING`)."""
    if isinstance(problem, Unavailable):
        return EngineState.TROUBLE
    if isinstance(problem, WalkUnfinished):  # before NetworkError: the server answers, slowly
        return EngineState.WALKING
    if isinstance(problem, MirrorDamaged):
        return EngineState.DAMAGED
    if isinstance(problem, NetworkError) and not isinstance(problem, TlsError):
        return EngineState.OFFLINE
    return EngineState.ERROR
