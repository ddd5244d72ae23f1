"""The mirror a profile kept before per-account mirrors, and which account it belongs to.

Before CONTRACT §9.3's one mirror per account, a profile held one `mirror.sqlite3` at its
top. Opening the profile with today's client adopts it as an account's mirror
(`Profile.ensure_dirs`), and a reader (`converge ls`, the window's first paint) adopts it
too, so an upgrade never shows "No conversations yet" until the first sync.

Only for the account it belonged to: since the mirror recorded its connection (the engine's
`bind_identity`, a digest of the server URL and the token), that record decides, offline;
another account's opening leaves the file where it is. A mirror without the record (made
before it existed, or never synced) is adopted by the first account opened: the older
client followed exactly one server and token per profile, the ones its settings saved, and
the first pass of the adopting account point-reads and prunes whatever that account cannot
see (decision 0103).
"""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path

from sync.mirror import sqlite_driver
from sync.mirror.schema import open_read_only

#: The `sync_state` key of the connection a mirror follows. Defined here, where it is read
#: by `sync.profile.profile` to tell which account an old mirror belonged to.
IDENTITY_KEY = "connection_identity"


def connection_identity(server: str, token: str) -> str:
    """What a mirror records of the server and token it follows (the token is not in it)."""
    return hashlib.sha256(f"{server}\n{token}".encode()).hexdigest()


def recorded_identity(path: Path) -> str | None:
    """The connection a mirror file recorded, read without migrating or writing it; None
    when it recorded none or cannot be read (a damaged file is adopted, and then the
    mirror's own checks speak)."""
    try:
        conn = open_read_only(path, timeout=1.0)
    except sqlite_driver.Error:
        return None
    with contextlib.closing(conn):
        try:
            row = conn.execute(
                "SELECT value FROM sync_state WHERE key = ?", (IDENTITY_KEY,)
            ).fetchone()
        except sqlite_driver.Error:
            return None
    value = row[0] if row else None
    return value if isinstance(value, str) and value else None


def belongs_to(path: Path, identity: str | None) -> bool:
    """Whether the pre-account mirror at `path` may be adopted by the account `identity`
    (None: an account whose connection is not known yet, which adopts only a mirror that
    recorded none)."""
    recorded = recorded_identity(path)
    return recorded is None or recorded == identity
