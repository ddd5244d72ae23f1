"""The mirror's small key/value sync state, and which server and token it follows.

Two keys matter: the first index page's ETag (a pass sends it as `If-None-Match`) and the
connection identity (a hash of server URL and token). An ETag only means something to the
server and principal that issued it, so binding another identity forgets it. The functions
take the caller's connection or session and never commit.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from sync.mirror_schema import SyncState

ETAG_KEY = "sessions_first_page_etag"
IDENTITY_KEY = "connection_identity"


def get_state(session: Session, key: str) -> str | None:
    rec = session.get(SyncState, key)
    return rec.value if rec is not None else None


def set_state(conn: Any, key: str, value: str | None) -> None:
    stmt = sqlite_insert(SyncState)
    stmt = stmt.on_conflict_do_update(index_elements=["key"], set_={"value": stmt.excluded.value})
    conn.execute(stmt, [{"key": key, "value": value}])


def rebind_identity(conn: Any, identity: str) -> bool:
    """Inside a write transaction: record `identity` and forget the ETag when it differs
    from the recorded one; returns whether it did."""
    current = conn.execute(
        select(SyncState.value).where(SyncState.key == IDENTITY_KEY)
    ).scalar_one_or_none()
    if current == identity:
        return False
    set_state(conn, IDENTITY_KEY, identity)
    set_state(conn, ETAG_KEY, None)
    return True
