"""One clock for what orders the index and what expires leases (CONTRACT §10.2).

Each process's own clock may be off (a fleet machine seconds behind, an administrator setting a
desktop's clock back): so the time of record is the database's. On PostgreSQL that is
`clock_timestamp()` of the server every process shares; on SQLite (one process only) it is
that process's clock. Either clock may still step back, so activity times are also made
monotonic: a session's new `updated_at` (a creation, an event) is
`max(now, the principal's latest updated_at + 1 µs)`. It never decreases, and a conversation
with new activity always comes to the top of its owner's list (ADR-0050 §2), whatever the
clock did meanwhile. The data functions here take the caller's Session and never commit.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import ColumnClause, String, bindparam, func, literal_column, select
from sqlalchemy.orm import Session

from server_stub.db.models import SessionRow
from server_stub.domain import timestamps

TICK = timedelta(microseconds=1)

# The contract's form, computed by PostgreSQL itself (to_char's `US` is six digits).
_PG_NOW: ColumnClause[str] = literal_column(
    "to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')",
    type_=String,
)
_LATEST = (
    select(func.max(SessionRow.updated_at))
    .where(SessionRow.tenant == bindparam("tenant"), SessionRow.principal == bindparam("principal"))
    .scalar_subquery()
)
# Built once each: one round trip gives the database's time and the principal's latest
# activity (an index seek on ix_sessions_index_order).
_PG_NOW_ONLY = select(_PG_NOW)
_PG_NOW_AND_LATEST = select(_PG_NOW, _LATEST)
_LATEST_ONLY = select(_LATEST)


def _is_postgres(s: Session) -> bool:
    return s.get_bind().dialect.name == "postgresql"


def database_now(s: Session) -> str:
    """The time of record, in the contract's form."""
    if _is_postgres(s):
        return str(s.connection().execute(_PG_NOW_ONLY).scalar_one())
    return timestamps.now()


def later(s: Session, seconds: float) -> str:
    """The time of record `seconds` from now (a lease's expiry)."""
    return timestamps.fmt(timestamps.parse(database_now(s)) + timedelta(seconds=seconds))


def after(text: str) -> str:
    """The timestamp one microsecond after `text` (a contract timestamp). `fromisoformat`
    and `isoformat`, both in C: `strptime` cost more than the query beside it."""
    moment = datetime.fromisoformat(text.removesuffix("Z")) + TICK
    return moment.isoformat(timespec="microseconds") + "Z"


def activity_time(s: Session, tenant: str, principal: str, floor: str | None = None) -> str:
    """The time of a new activity of (tenant, principal): a session's creation or a new event.

    `max(now, latest + 1 µs, floor)`, where `latest` is the principal's most recent
    `updated_at`: later than every session of the principal, so the one that gets it is on
    top, and never before `floor` (the session's last event, so events stay in time order).
    """
    s.flush()  # the statement below bypasses autoflush
    params = {"tenant": tenant, "principal": principal}
    if _is_postgres(s):
        now, latest = s.connection().execute(_PG_NOW_AND_LATEST, params).one()
        now = str(now)
    else:
        now, latest = timestamps.now(), s.connection().execute(_LATEST_ONLY, params).scalar()
    chosen = now
    if latest is not None and str(latest) >= chosen:  # the clock is not past it: step over
        chosen = after(str(latest))
    if floor is not None and floor > chosen:
        chosen = floor
    return chosen
