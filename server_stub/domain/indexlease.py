"""PostgreSQL: the index-cache lease, so that one process may answer a 304 (and resend an
unchanged first page) from the versions it remembers, and still keep read-your-writes
across a fleet (CONTRACT §1, §9.4; decision 0190).

The lease is one `server_meta` row, `index_cache_lease`, whose value is empty (free),
`held <holder> <expiry>` or `revoked <holder> <expiry>`; `<expiry>` is seconds since the
epoch by the database's clock (`clock_timestamp()`), `<holder>` a `Database.instance_id`.

- **The holder** (`IndexLease`, on the loop) trusts its remembered versions only until its
  own monotonic deadline: the moment before it sent the statement that set `<expiry>`,
  plus `LEASE_SECONDS` minus `MARGIN_SECONDS`, so always before `<expiry>` in real time.
  It takes the lease only while it looks alone (one liveness lock, `server_stub.domain.bus`),
  under an exclusive transaction advisory lock (`LEASE_SPACE`), renews it every
  `RENEW_SECONDS` (only while it is still `held` by it and unexpired), and stops trusting
  at once when the bus brings a revoke (then it frees the row).
- **Every writer** (`guard`, inside each transaction that bumps an index version,
  `history.bump_version`) first takes the same advisory lock *shared* for the rest of its
  transaction, so no lease can be taken between its check and its commit; then, in a new
  statement (a new snapshot), reads the row. Held by another holder and not expired: it
  marks the row `revoked` (which also ends any renewal), sends a revoke on the bus, and
  waits until the holder frees the row or `<expiry>` passes by the database's clock; only
  then does it go on to commit. So no commit that changes an index is visible while any
  process other than its writer still trusts an older version; the writer's own process
  forgets at its commit (`Database.index_listener`), before its request answers.

A lost connection, a hung or partitioned holder, or a PostgreSQL restart cannot break this:
the holder's trust ends by its own clock, the writer's wait by the database's, and the row
survives a restart. The cost is on writes: two statements each, and while a lease is held
by another process, one wait of a bus round trip (at most `LEASE_SECONDS` if the holder is
gone without freeing it). A writer of an older build (no guard) must not share a database
with a holder: upgrade a fleet by stopping the old processes first.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session

from server_stub.domain.bus import CHANNEL, LIVENESS_SPACE
from server_stub.domain.indexversions import IndexVersions

log = logging.getLogger(__name__)

LEASE_KEY = "index_cache_lease"
#: The advisory-lock namespace of the lease (key 0): shared by writers, exclusive to take it.
LEASE_SPACE = 0x434F4E57  # "CONW"
LEASE_SECONDS = 2.0
RENEW_SECONDS = 0.5
MARGIN_SECONDS = 0.3
#: Bus message kind of a revoke (`server_stub.domain.bus`, on its channel).
REVOKE_KIND = "cache"
_GUARDED = "converge_lease_guarded"

_SHARED = text("SELECT pg_advisory_xact_lock_shared(:space, 0)")
_READ = text(
    "SELECT value, extract(epoch FROM clock_timestamp())::float8 FROM server_meta WHERE key = :key"
)
_MARK_REVOKED = text(
    "UPDATE server_meta SET value = 'revoked' || substr(value, 5) WHERE key = :key AND value = :old"
)
_NOTIFY = text("SELECT pg_notify(:channel, :payload)")


def _foreign_live(value: str | None, now: float, me: str) -> tuple[str, str] | None:
    """(state, holder) of a lease another process may still trust at `now`, else None."""
    parts = (value or "").split()
    if len(parts) != 3 or parts[0] not in ("held", "revoked") or parts[1] == me:
        return None
    try:
        expiry = float(parts[2])
    except ValueError:
        return None
    return (parts[0], parts[1]) if expiry > now else None


def guard(s: Session, origin: str, read: tuple[str | None, float] | None = None) -> None:
    """Before a version bump commits (PostgreSQL): no other process may trust an older
    version after the commit. Once per transaction; blocking (a worker thread).

    `read`: the lease row's value (None without a row) and the database's clock, read by the
    caller in a statement after it took the shared lock (`server_stub.domain.purge` folds
    both into its own statements)."""
    if s.info.get(_GUARDED):
        return
    s.info[_GUARDED] = True
    conn = s.connection()
    if read is None:
        conn.execute(_SHARED, {"space": LEASE_SPACE})
    # The database's expiry ends the wait first: once marked revoked, a lease can be neither
    # renewed nor taken again while this transaction holds the shared lock.
    deadline = time.monotonic() + LEASE_SECONDS + 5.0
    notified_at = 0.0
    while True:
        row = read if read is not None else conn.execute(_READ, {"key": LEASE_KEY}).first()
        read = None
        if row is None or row[0] is None:
            return
        value, now = row
        live = _foreign_live(value, float(now), origin)
        if live is None:
            return
        if time.monotonic() > deadline:  # a row no build of ours writes: never commit past it
            raise RuntimeError(f"the index-cache lease {value!r} does not expire")
        if time.monotonic() - notified_at > 0.1:  # again now and then: a bus may reconnect
            _revoke(s, str(value), live[1], origin)
            notified_at = time.monotonic()
        time.sleep(0.002)


def _revoke(s: Session, value: str, holder: str, origin: str) -> None:
    """Mark the lease revoked and tell its holder, outside the writer's transaction (so at
    once, not at its commit)."""
    payload = json.dumps({"k": REVOKE_KIND, "h": holder, "o": origin}, separators=(",", ":"))
    engine = s.get_bind().engine
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as other:
        if value.startswith("held "):
            other.execute(_MARK_REVOKED, {"key": LEASE_KEY, "old": value})
        other.execute(_NOTIFY, {"channel": CHANNEL, "payload": payload})


_TRY_TAKE = "SELECT pg_try_advisory_xact_lock(%(space)s, 0)"
_TAKE = (
    "UPDATE server_meta SET value = 'held ' || %(me)s || ' ' ||"
    " (extract(epoch FROM clock_timestamp()) + %(seconds)s)::text"
    " WHERE key = %(key)s AND CASE WHEN value = '' OR value LIKE 'held ' || %(me)s || ' %%'"
    " THEN true"
    " ELSE split_part(value, ' ', 3)::float8 < extract(epoch FROM clock_timestamp()) END"
    " RETURNING 1"
)
_RENEW = (
    "UPDATE server_meta SET value = 'held ' || %(me)s || ' ' ||"
    " (extract(epoch FROM clock_timestamp()) + %(seconds)s)::text"
    " WHERE key = %(key)s AND CASE WHEN value LIKE 'held ' || %(me)s || ' %%'"
    " THEN split_part(value, ' ', 3)::float8 > extract(epoch FROM clock_timestamp())"
    " ELSE false END RETURNING 1"
)
_FREE = (
    "UPDATE server_meta SET value = '' WHERE key = %(key)s"
    " AND split_part(value, ' ', 2) = %(me)s RETURNING 1"
)
_ALONE = (
    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
    " AND classid::bigint = %(space)s AND objsubid = 2"
    " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
)


class IndexLease:
    """This process's side of the lease (loop only): take it while alone, renew it, give
    it up on a revoke; `versions` trusts its memory only as long as the lease allows."""

    def __init__(self, reader: Any, versions: IndexVersions, me: str) -> None:
        self._reader = reader  # server_stub.db.pgloop.PgLoopReader
        self._versions = versions
        self._me = me
        self._holding = False
        #: Revokes and losses so far: a take or renewal in flight across one trusts nothing.
        self._ends = 0
        self._frees: set[asyncio.Task[None]] = set()
        self.taken = 0  # how many times it was taken (tests, metrics)

    def lost(self) -> None:
        """The bus lost its connection (on the loop): no revoke could reach this process, so
        it stops trusting now rather than at its deadline (a writer then waits for expiry)."""
        self._ends += 1
        self._versions.distrust()
        self._holding = False

    def revoked(self, holder: str) -> None:
        """The bus brought a revoke (on the loop): stop trusting now, then free the row."""
        if holder != self._me:
            return
        self._ends += 1
        self._versions.distrust()
        self._holding = False
        task = asyncio.get_running_loop().create_task(self._free(), name="index-lease-free")
        self._frees.add(task)
        task.add_done_callback(self._freed)

    def _freed(self, task: asyncio.Task[None]) -> None:
        self._frees.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.debug("freeing the index lease failed: %s", task.exception())

    async def run(self) -> None:
        """Forever (a background task): renew while held, else take it when alone."""
        while True:
            try:
                if self._holding:
                    await self._renew()
                elif await self._alone():
                    await self._take()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # an outage: trust ends with the deadline anyway
                self._versions.distrust()
                self._holding = False
                log.debug("index lease turn failed: %s", exc)
            await asyncio.sleep(RENEW_SECONDS)

    async def close(self) -> None:
        """At shutdown: stop trusting, and free the row so no writer waits for its expiry."""
        self._versions.distrust()
        if self._frees:  # revokes being answered: their connections go back before closing
            await asyncio.gather(*self._frees, return_exceptions=True)
        if self._holding:
            self._holding = False
            with contextlib.suppress(Exception):
                await self._free()

    async def _alone(self) -> bool:
        rows = await self._reader.fetch(_ALONE, {"space": LIVENESS_SPACE})
        return bool(rows) and int(rows[0][0]) == 1

    async def _take(self) -> None:
        # A revoke's free still on its way would free the row after this take (a writer
        # re-notifies every 0.1 s, so one write's later revokes can arrive after the take
        # began): trusted versions with a free row, and the next writer would not revoke.
        while self._frees:
            await asyncio.gather(*list(self._frees), return_exceptions=True)
        started, ends = time.monotonic(), self._ends
        params = {"space": LEASE_SPACE, "me": self._me, "seconds": LEASE_SECONDS, "key": LEASE_KEY}
        results = await self._reader.fetch_in_transaction(
            [(_TRY_TAKE, params), (_TAKE, params)], stop_unless_first=True
        )
        if len(results) < 2 or not results[1]:
            return
        if ends != self._ends:  # revoked (or cut off) while the statement was in flight
            await self._free()
            return
        self._holding = True
        self.taken += 1
        self._versions.trust(started + LEASE_SECONDS - MARGIN_SECONDS, clear=True)

    async def _renew(self) -> None:
        started, ends = time.monotonic(), self._ends
        lapsed = not self._versions.trusted()
        rows = await self._reader.fetch(
            _RENEW, {"me": self._me, "seconds": LEASE_SECONDS, "key": LEASE_KEY}
        )
        if not rows or ends != self._ends:  # not ours any more, or revoked meanwhile
            self._versions.distrust()
            self._holding = False
            await self._free()  # a waiting writer need not wait for the expiry
            return
        self._versions.trust(started + LEASE_SECONDS - MARGIN_SECONDS, clear=lapsed)

    async def _free(self) -> None:
        await self._reader.fetch(_FREE, {"key": LEASE_KEY, "me": self._me})
