"""Newest-first keyset pages of the caller's rows, with authenticated cursors.

The knowledge and memory lists page the same way: the principal's rows in
`(created_at DESC, id DESC)` order, a page of `limit` read as `limit + 1` to learn whether
another follows, and a cursor (HMAC-authenticated, bound to the list and the caller) holding
the last row's `(created_at, id)`. The session list pages on `updated_at` with prebuilt
statements of its own (routes/sessions.py).
"""

from __future__ import annotations

from sqlalchemy import or_, select
from sqlalchemy.orm import Session
from starlette.requests import Request

from server_stub.db.models import KnowledgeDocumentRow, MemoryRow
from server_stub.domain.cursors import CursorCodec, Position
from server_stub.edge.auth import Principal
from server_stub.routes.common import parse_cursor


def cursor_position(
    request: Request, cursors: CursorCodec, kind: str, who: Principal
) -> Position | None:
    """Where the requested page starts: None for the first page, else the position of a
    cursor minted for exactly this list and caller (400 otherwise)."""
    cursor = parse_cursor(request)
    return cursors.decode(cursor, kind, who.tenant, who.principal) if cursor else None


def newest_first_page[R: (KnowledgeDocumentRow, MemoryRow)](
    s: Session,
    model: type[R],
    who: Principal,
    after: Position | None,
    limit: int,
    cursors: CursorCodec,
    kind: str,
) -> tuple[list[R], str | None]:
    """The caller's page of `model` rows after `after`, and the cursor of the next page (None
    on the last)."""
    stmt = select(model).where(model.tenant == who.tenant, model.principal == who.principal)
    if after is not None:
        # The redundant `created_at <= ts` is what lets SQLite seek the index to the cursor
        # (see the session list); the OR alone walks the principal's rows from the top.
        stmt = stmt.where(
            model.created_at <= after.timestamp,
            or_(model.created_at < after.timestamp, model.id < after.item_id),
        )
    stmt = stmt.order_by(model.created_at.desc(), model.id.desc()).limit(limit + 1)
    rows = list(s.scalars(stmt))
    if len(rows) <= limit:
        return rows, None
    rows = rows[:limit]
    last = rows[-1]
    position = Position(last.created_at, last.id)
    return rows, cursors.encode(kind, who.tenant, who.principal, position)
