"""Mirror writes that listeners hear about, announced in the order they committed.

Why this exists: a reconcile pass, a delete and a single-row refresh each write the mirror in
a worker thread (`asyncio.to_thread(mirror.apply, ...)`) and then tell the listeners. The
writes themselves are serialised (the mirror's lock and `BEGIN IMMEDIATE`), but the
coroutines resume on the loop in whatever order their threads' results arrive, and a pass
has more work between its write and its event. So a pass could commit "ses_x updated", a
delete could then commit "ses_x removed", and the listeners hear "removed" then "updated":
a row that seems to come back (the 50-device soak's false "reappeared", docs/reliability.md).

The rule: **emission order is commit order.** `IndexWriter.apply` holds one `asyncio.Lock`
from before the write until its announcement has run, and the announcement is a plain
synchronous callback (no `await` inside it), so no other announced write can commit between
a write and its announcement. This costs no parallelism: mirror writes were serialised
already. Every announced `ApplyResult` carries the mirror's commit sequence (`seq`), which
the engine copies onto `IndexChanged.seq`; within one engine it strictly increases, so a
listener can check the order instead of trusting it.

Writes that nobody announces (the ETag alone, the artifact index, the identity) go to the
mirror directly; they only leave gaps in the sequence.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from sync.mirror import Mirror
from sync.mirror_apply import ApplyResult
from sync.models import SessionView

#: Runs on the event loop right after the write committed, before any other announced write.
Announce = Callable[[ApplyResult], None]


class IndexWriter:
    """The one path for announced mirror writes of one engine (one mirror object)."""

    def __init__(self, mirror: Mirror) -> None:
        self.mirror = mirror
        self._lock = asyncio.Lock()
        self.last_seq = 0  # the commit sequence of the last announced write

    async def apply(
        self,
        upserts: Sequence[SessionView] = (),
        removals: Sequence[str] = (),
        *,
        state: dict[str, str | None] | None = None,
        skip: Callable[[str], bool] | None = None,
        announce: Announce | None = None,
        settle: Sequence[str] = (),
        seen_at: float | None = None,
    ) -> ApplyResult:
        """`Mirror.apply` in a worker thread, then `announce(result)`, as one step.

        Raises what `Mirror.apply` raises (`MirrorError`); then nothing is announced.
        """
        async with self._lock:
            applied = await asyncio.to_thread(
                self.mirror.apply,
                upserts,
                removals,
                state=state,
                skip=skip,
                settle=settle,
                seen_at=seen_at,
            )
            self.last_seq = applied.seq
            if announce is not None:
                announce(applied)
            return applied
