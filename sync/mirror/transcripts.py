"""Mirrored transcripts: events per conversation, their search entries, and their removal
(CONTRACT §11). Functions run inside a `Mirror` transaction and never commit.

Tables (`sync.mirror.schema`): `transcripts` (how far each conversation is mirrored and at
which `updated_at`), `events` (the event JSON), `search`, a contentless FTS5 trigram index
over the events' folded text (`sync.mirror.search_text`), and `search_short`, the one- and
two-character grams of that text's unspaced scripts under the same entry ids (decision
0123). One index entry covers the events
one `store` added to a conversation (their texts joined by newlines; `search_rows` holds the
entry's conversation and sequence range), so a backfilled conversation is one entry and a
query's candidates are conversations (decision 0121). Contentless: the text is stored once,
in `events.data`; a removal gives the index the entry's text back (`'delete'`), rebuilt
from the events of its range.

Removal leaves nothing (§9.2): on SQLite 3.44 or newer (`sync.mirror.sqlite_driver`) the index's
`secure-delete` option drops the entry's terms from its segments at once; on an older
SQLite the whole index is merged (`'optimize'`) after a removal, which drops them too.
`PRAGMA secure_delete` zeroes the freed pages and `Mirror.scrub` empties the WAL.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sync.mirror import sqlite_driver
from sync.mirror.search_text import event_of_row, fold, searchable_text, short_grams
from sync.mirror.sqlite_driver import Connection
from sync.wire.models import Event


@dataclass(frozen=True, slots=True)
class TranscriptState:
    """How much of a conversation the mirror holds. `evicted`: dropped for the size budget
    (fetched again on demand); `current`: fetched at the row's present `updated_at`."""

    session_id: str
    updated_at: str
    up_to: int
    evicted: bool
    current: bool


@dataclass(frozen=True, slots=True)
class MirroredTranscript:
    """A conversation as the mirror holds it: its events in sequence order, and its state
    (None: the row is not mirrored). `state.evicted` or not `state.current`: the events
    may lack what the server has (`SyncEngine.refresh_transcript` fetches it)."""

    events: list[Event]
    state: TranscriptState | None


#: The FTS5 indexes of the events' text: trigrams, and the unspaced scripts' short grams.
_INDEXES = ("search", "search_short")


def _chunks(items: Sequence[str], size: int = 500) -> Iterable[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def stale(conn: Connection, limit: int) -> list[TranscriptState]:
    """Conversations whose row's `updated_at` moved since their transcript was fetched
    (or never fetched), newest first; evicted ones only when they moved."""
    rows = conn.execute(
        "SELECT s.id, s.updated_at, coalesce(t.up_to, 0), coalesce(t.size, 0) < 0"
        " FROM sessions s LEFT JOIN transcripts t ON t.session_id = s.id"
        " WHERE t.fetched_updated_at IS NULL OR t.fetched_updated_at != s.updated_at"
        " ORDER BY s.updated_at DESC, s.id DESC LIMIT ?",
        (limit,),
    ).fetchall()
    return [TranscriptState(r[0], r[1], int(r[2]), bool(r[3]), False) for r in rows]


def state_of(conn: Connection, session_id: str) -> TranscriptState | None:
    """The transcript state of a mirrored conversation; None when its row is not mirrored."""
    row = conn.execute(
        "SELECT s.updated_at, t.up_to, t.size, t.fetched_updated_at FROM sessions s"
        " LEFT JOIN transcripts t ON t.session_id = s.id WHERE s.id = ?",
        (session_id,),
    ).fetchone()
    if row is None:
        return None
    return TranscriptState(
        session_id,
        row[0],
        int(row[1] or 0),
        row[2] is not None and int(row[2]) < 0,
        row[3] is not None and row[3] == row[0],
    )


def store(
    conn: Connection,
    session_id: str,
    events: Sequence[Event],
    *,
    fetched_at: str | None,
    up_to: int | None = None,
) -> bool:
    """Add the events past the mirrored `up_to`, with their search entries, and record how
    far the transcript goes. `fetched_at`: the row's `updated_at` the fetch was made at,
    when the fetch reached the end (None: more pages follow). Stores nothing and returns
    False when the row is gone (deleted or pruned meanwhile: its content must not come
    back)."""
    current = conn.execute(
        "SELECT s.updated_at, coalesce(t.up_to, 0), coalesce(t.size, 0) FROM sessions s"
        " LEFT JOIN transcripts t ON t.session_id = s.id WHERE s.id = ?",
        (session_id,),
    ).fetchone()
    if current is None:
        return False
    mark = int(current[1])
    first = mark + 1
    size = max(0, int(current[2]))
    texts: list[str] = []
    for event in events:
        if event.session_id != session_id or event.sequence <= mark:
            continue  # a hostile page's stray or repeated event
        data = json.dumps(event.data, ensure_ascii=False)
        conn.execute(
            "INSERT INTO events (session_id, sequence, run_id, type, created_at, data)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (session_id, event.sequence, event.run_id, event.type, event.created_at, data),
        )
        if text := fold(searchable_text(event)):
            texts.append(text)
        mark = event.sequence
        size += len(data.encode()) + len(event.type) + len(event.created_at) + 24
    if texts:
        entry = conn.execute(
            "INSERT INTO search_rows (session_id, first_sequence, last_sequence)"
            " VALUES (?, ?, ?) RETURNING id",
            (session_id, first, mark),
        ).fetchone()[0]
        joined = _joined(texts)
        conn.execute("INSERT INTO search (rowid, text) VALUES (?, ?)", (entry, joined))
        if grams := short_grams(joined):
            conn.execute("INSERT INTO search_short (rowid, text) VALUES (?, ?)", (entry, grams))
    if up_to is not None:
        mark = max(mark, up_to)
    conn.execute(
        "INSERT INTO transcripts (session_id, up_to, fetched_updated_at, size, active_at)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET"
        " up_to = excluded.up_to, size = excluded.size, active_at = excluded.active_at,"
        " fetched_updated_at = coalesce(excluded.fetched_updated_at, fetched_updated_at)",
        (session_id, mark, fetched_at, size, current[0]),
    )
    return True


def _joined(texts: Sequence[str]) -> str:
    """An index entry's text: its events' folded texts, one per line. The same function
    builds it at `store` and at removal, so the `'delete'` gives back exactly its terms."""
    return "\n".join(texts)


def read(conn: Connection, session_id: str, after: int = 0) -> list[Event]:
    """The mirrored events of a conversation after sequence `after`, in sequence order."""
    rows = conn.execute(
        "SELECT session_id, sequence, run_id, type, created_at, data FROM events"
        " WHERE session_id = ? AND sequence > ? ORDER BY sequence",
        (session_id, after),
    ).fetchall()
    return [event_of_row(*row) for row in rows]


def _entry_text(conn: Connection, session_id: str, first: int, last: int) -> str:
    """An index entry's text, rebuilt from the events of its range as `store` built it."""
    rows = conn.execute(
        "SELECT session_id, sequence, run_id, type, created_at, data FROM events"
        " WHERE session_id = ? AND sequence BETWEEN ? AND ? ORDER BY sequence",
        (session_id, first, last),
    ).fetchall()
    return _joined([t for row in rows if (t := fold(searchable_text(event_of_row(*row))))])


def fill_short_index(conn: Connection) -> None:
    """Give every entry already in `search` its `search_short` entry (the schema step that
    added the short index: a mirror's history is searchable by short words at once)."""
    entries = conn.execute(
        "SELECT id, session_id, first_sequence, last_sequence FROM search_rows"
    ).fetchall()
    for entry, session_id, first, last in entries:
        if grams := short_grams(_entry_text(conn, session_id, first, last)):
            conn.execute("INSERT INTO search_short (rowid, text) VALUES (?, ?)", (entry, grams))


def _drop_events(conn: Connection, session_ids: Sequence[str]) -> int:
    """Remove the events of these conversations and their search entries; returns how many
    entries left the index."""
    if sqlite_driver.SECURE_DELETE:
        for index in _INDEXES:
            conn.execute(f"INSERT INTO {index} ({index}, rank) VALUES ('secure-delete', 1)")
    entries = 0
    for chunk in _chunks(list(session_ids)):
        marks = ",".join("?" * len(chunk))
        ranges = conn.execute(
            "SELECT id, session_id, first_sequence, last_sequence FROM search_rows"
            f" WHERE session_id IN ({marks})",
            tuple(chunk),
        ).fetchall()
        for entry, session_id, first, last in ranges:
            text = _entry_text(conn, session_id, first, last)
            conn.execute(
                "INSERT INTO search (search, rowid, text) VALUES ('delete', ?, ?)", (entry, text)
            )
            if grams := short_grams(text):  # exactly what `store` gave it, or nothing
                conn.execute(
                    "INSERT INTO search_short (search_short, rowid, text) VALUES ('delete', ?, ?)",
                    (entry, grams),
                )
            entries += 1
        conn.execute(f"DELETE FROM search_rows WHERE session_id IN ({marks})", tuple(chunk))
        conn.execute(f"DELETE FROM events WHERE session_id IN ({marks})", tuple(chunk))
    if entries and not sqlite_driver.SECURE_DELETE:
        # No secure-delete: the entries' terms stay in older segments until a merge.
        for index in _INDEXES:
            conn.execute(f"INSERT INTO {index} ({index}) VALUES ('optimize')")
    return entries


def forget(conn: Connection, session_ids: Sequence[str]) -> None:
    """A deleted or pruned conversation's transcript, gone with its row (same transaction)."""
    _drop_events(conn, session_ids)
    for chunk in _chunks(list(session_ids)):
        marks = ",".join("?" * len(chunk))
        conn.execute(f"DELETE FROM transcripts WHERE session_id IN ({marks})", tuple(chunk))


def evict(conn: Connection, session_ids: Sequence[str]) -> None:
    """Drop transcripts for the size budget, keeping rows; `size = -1` marks them evicted
    and `fetched_updated_at` stays, so an unchanged evicted conversation costs no request."""
    _drop_events(conn, session_ids)
    for chunk in _chunks(list(session_ids)):
        marks = ",".join("?" * len(chunk))
        conn.execute(
            f"UPDATE transcripts SET up_to = 0, size = -1 WHERE session_id IN ({marks})",
            tuple(chunk),
        )


def held_bytes(conn: Connection) -> int:
    """The bytes of content the mirror holds: transcripts and cached artifact files."""
    return int(
        conn.execute(
            "SELECT coalesce((SELECT sum(size) FROM transcripts WHERE size > 0), 0)"
            " + coalesce((SELECT sum(size) FROM artifacts), 0)"
        ).fetchone()[0]
    )


def over_budget(conn: Connection, budget: int) -> list[str]:
    """The least recently active conversations whose transcripts (and cached artifact
    bytes) must go for the rest to fit in `budget` bytes."""
    held = held_bytes(conn)
    if held <= budget:
        return []
    rows = conn.execute(
        "SELECT t.session_id, t.size + coalesce((SELECT sum(a.size) FROM artifacts a"
        " WHERE a.session_id = t.session_id), 0) FROM transcripts t WHERE t.size > 0"
        " ORDER BY t.active_at, t.session_id"
    )
    out: list[str] = []
    for session_id, size in rows:
        if held <= budget:
            break
        out.append(session_id)
        held -= int(size)
    return out
