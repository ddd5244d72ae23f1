"""Recall: which of a principal's memories share a word with a message (CONTRACT §4).

The word index (`memory_words`) is written with the memory, in its transaction. A run asks
it in a read transaction, before its write transaction, with one seek per distinct word of
its message (in chunks): the cost follows the message, not the principal's total memory
size, and nothing is held while it runs. The write transaction then records the matches that
still exist (a purge may have removed some meanwhile).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from sqlalchemy import bindparam, insert, select, text
from sqlalchemy.orm import Session

from server_stub.db.engine import Database
from server_stub.db.models import MAX_WORD, MemoryRow, MemoryWordRow

_WORD = re.compile(r"\w+")
_CHUNK = 500  # bound parameters per IN list (SQLite allows 32,766; PostgreSQL 65,535)
BATCH = 2000  # word rows per write transaction (a short hold of the write lock)


def words_of(text: str) -> set[str]:
    """The distinct lowercased words of `text`, as the index stores them."""
    return {w.lower()[:MAX_WORD] for w in _WORD.findall(text)}


def _rows(memory: MemoryRow, words: list[str]) -> list[dict[str, str]]:
    return [
        {
            "tenant": memory.tenant,
            "principal": memory.principal,
            "word": word,
            "memory_id": memory.id,
            "memory_session_id": memory.source_session_id,
        }
        for word in words
    ]


def index_memory(
    s: Session, memory: MemoryRow, words: set[str] | None = None, limit: int | None = None
) -> list[str]:
    """Write the word rows of a flushed memory in its transaction: all of them, or the
    first `limit`; returns the words left for `index_rest` (sorted)."""
    ordered = sorted(words_of(memory.text) if words is None else words)
    head, rest = (ordered, []) if limit is None else (ordered[:limit], ordered[limit:])
    if head:
        s.connection().execute(insert(MemoryWordRow), _rows(memory, head))
    return rest


def index_rest(db: Database, memory: MemoryRow, words: list[str]) -> bool:
    """Write the rest of a memory's word rows, BATCH per write transaction, so that a large
    memory (a 1 MiB `/remember` can hold a hundred thousand distinct words) never
    holds the write lock long enough to stall other tenants. Each batch first checks that
    the memory still exists (key-share locked on PostgreSQL, like a recall): a purge in
    between ends the indexing (False). Until the last batch commits, a recall may miss
    the memory's later words; a crash in between leaves them unindexed."""
    for start in range(0, len(words), BATCH):
        with db.write() as s:
            alive = select(MemoryRow.id).where(MemoryRow.id == memory.id)
            if not db.is_sqlite:
                alive = alive.with_for_update(read=True, key_share=True)
            if s.execute(alive).first() is None:
                return False
            s.connection().execute(
                insert(MemoryWordRow), _rows(memory, words[start : start + BATCH])
            )
    return True


_MATCH = (
    select(MemoryWordRow.memory_id)
    .where(
        MemoryWordRow.tenant == bindparam("tenant"),
        MemoryWordRow.principal == bindparam("principal"),
        MemoryWordRow.word.in_(bindparam("words", expanding=True)),
    )
    .distinct()
)


# PostgreSQL: one index seek per word, whatever the statistics say. With `word IN (...)` the
# planner, before the table is analysed (or with a generic plan), reads the principal's
# whole index range and filters it, which scales with the memories, not the message.
# `OFFSET 0` keeps the lateral subquery from being flattened into a hash join; the collation
# matches the index's.
_PG_MATCH = text(
    "SELECT DISTINCT x.memory_id FROM unnest(CAST(:words AS text[])) AS q(word) "
    "CROSS JOIN LATERAL (SELECT w.memory_id FROM memory_words AS w "
    "WHERE w.tenant = :tenant AND w.principal = :principal "
    'AND w.word = q.word COLLATE "C" OFFSET 0) AS x'
)


def matching_memories(db: Database, tenant: str, principal: str, words: Iterable[str]) -> set[str]:
    """Ids of the principal's memories sharing a word with `words` (a read transaction)."""
    wanted = sorted(words)
    found: set[str] = set()
    if not wanted:
        return found
    with db.read() as s:
        conn = s.connection()
        if not db.is_sqlite:
            params = {"tenant": tenant, "principal": principal, "words": wanted}
            found.update(conn.execute(_PG_MATCH, params).scalars())
            return found
        for start in range(0, len(wanted), _CHUNK):
            params = {
                "tenant": tenant,
                "principal": principal,
                "words": wanted[start : start + _CHUNK],
            }
            found.update(conn.execute(_MATCH, params).scalars())
    return found


def backfill(db: Database) -> int:
    """Index memories written before the word index existed; returns how many."""
    with db.write() as s:
        missing = list(
            s.scalars(
                select(MemoryRow).where(
                    ~MemoryRow.id.in_(select(MemoryWordRow.memory_id).distinct())
                )
            )
        )
        for memory in missing:
            index_memory(s, memory)
        return len(missing)
