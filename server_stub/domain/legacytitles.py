"""The derived titles of legacy sessions, remembered by this process.

A legacy session's title is derived from its first `message.user` event (the title rule,
`server_stub.domain.titles`) on every read path. Deriving it costs a query per legacy row per
page, a large share of the index route's time under many watching devices, and it would send
a page holding a legacy session off the direct read path onto a worker thread. The value is
immutable once the message exists: events are append-only and ordered by sequence, so
the first `message.user` never changes, and the only writes that touch a legacy session's
title replace the state (the first run stores a title: `title_state` becomes "stored",
and the stored title is read from the row from then on).

So a derived title is remembered per session id, once its message exists (a legacy
session with no user message yet derives None and is not remembered: a later message
would change that answer). A delete drops the entry in the process that purged the
session (CONTRACT §9.2: nothing of a deleted conversation is kept to be served); on a
fleet the other processes keep theirs until evicted, which serves nothing: session ids are
random and never reused, so no live row can ever ask for them again. The bound keeps the
memory fixed (an entry is an id and at most 64 code points).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Final

#: Remembered sessions (least recently used evicted first): a few MiB at most.
MAX_REMEMBERED: Final = 50_000


class Missing:
    """The type of `MISSING`."""


#: What `get` answers for a session it does not remember (None is a title: "no text").
MISSING: Final = Missing()


class DerivedTitles:
    """session id → derived title, bounded, thread-safe (the index reads on the loop and on
    request threads)."""

    def __init__(self, capacity: int = MAX_REMEMBERED) -> None:
        self.capacity = capacity
        self._lock = threading.Lock()
        self._titles: OrderedDict[str, str | None] = OrderedDict()
        self.derivations = 0  # titles derived from the database (tests count them)

    def get(self, session_id: str) -> str | Missing | None:
        """The remembered title, or `MISSING`."""
        with self._lock:
            if session_id not in self._titles:
                return MISSING
            self._titles.move_to_end(session_id)
            return self._titles[session_id]

    def knows(self, session_id: str) -> bool:
        with self._lock:
            return session_id in self._titles

    def put(self, session_id: str, title: str | None) -> None:
        """Remember the title derived from the session's (existing) first user message."""
        with self._lock:
            self._titles[session_id] = title
            self._titles.move_to_end(session_id)
            while len(self._titles) > self.capacity:
                self._titles.popitem(last=False)

    def drop(self, session_id: str) -> None:
        """The session was deleted: forget its title."""
        with self._lock:
            self._titles.pop(session_id, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._titles)
