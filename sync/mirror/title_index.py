"""The index of titles and ids: what finds a conversation by its title or id without reading
every one (CONTRACT §11, decisions 0124 and 0232).

Both readers of titles ask it for candidates and confirm each with their own predicate:
search (`sync.mirror.search`: accent-folded words) and the sidebar's title filter
(`sync.mirror.title_filter`: a case-folded substring of the title or the id). Two indexes,
their entries mapped to their conversation by `title_rows` under the same entry id:

- `search_titles` holds, of a title, the one-, two- and three-character grams of every
  form those predicates compare: the title folded both ways. A gram is a token of
  hexadecimal code points, so any script and any punctuation tokenize alike (`unicode61`
  sees letters and digits only), and a query of one or two characters, which a trigram
  index cannot answer, is one token. Grams that span white space are left out: no query
  word holds any.
- `search_ids` holds an id in ASCII lower case, SQLite's `lower()`, spelled into trigrams
  by SQLite's own trigram tokenizer: the filter matches an id from `ID_MATCH_CHARS`
  characters on, so trigrams answer it, and no Python runs per id on a first sync.

Entries are contentless (`detail=none`); the caller's predicate confirms every candidate,
so an index that cannot tell where its grams sit still gives exact results.

A write of many new conversations (a first sync's page) leaves their entries to be written
after the pass (`defer`, decision 0238): it only lowers the change sequence from which rows
may lack an entry (`PENDING_KEY`), and the content phase writes them a batch a transaction
(`index_pending`). Until then both readers take every such row as a candidate too
(`PENDING_ROWS`), confirmed like the others, so an answer never depends on whether an entry
is written yet (beyond `INDEXED_TITLE_CHARS`, a pending title is read whole), and with
nothing pending it costs one read of `sync_state`. A retitle's entry is always written at
once: only then is the old title known to take out. A removal hands
each index the entry's tokens back (`'delete'`), computed from the title and id as they
were, and on SQLite with `secure-delete` nothing of them is left in its segments (as for
`sync.mirror.transcripts`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence

from sync.mirror import sqlite_driver
from sync.mirror.search_text import fold as search_fold
from sync.mirror.search_text import fts_query
from sync.mirror.sqlite_driver import Connection
from sync.mirror.title_filter import ASCII_LOWER, ID_MATCH_CHARS
from sync.mirror.title_filter import fold as filter_fold

#: The longest grams: a longer word is asked for as all of its trigrams.
GRAM = 3
#: Characters of a title or an id indexed at most: the contract's are far shorter, and a
#: hostile server's are not worth more index than this.
INDEXED_TITLE_CHARS = 512


def _id_entry(value: str) -> str:
    """An id's `search_ids` entry, in SQL, of `value` (its column, or a named parameter):
    `lower()` lowers ASCII letters alone, as `ASCII_LOWER` does. Whole (`substr` ends a
    text at a NUL character) unless past `INDEXED_TITLE_CHARS`' worth of bytes."""
    cap = INDEXED_TITLE_CHARS
    return (
        f"CASE WHEN length(CAST({value} AS BLOB)) <= {cap} THEN lower({value})"
        f" ELSE lower(substr({value}, 1, {cap})) END"
    )


#: `sync_state` key: the lowest change sequence of a row whose entry may be unwritten (absent:
#: every row has its entry). Every row of a lower sequence has one.
PENDING_KEY = "titles_pending_from"
#: New conversations whose entries one write spells itself at most; a write of more (a
#: first sync's page) leaves them pending.
INLINE_TITLES = 64
#: Entries `index_pending` writes in one transaction: a segment of FTS5 each, and the write
#: lock held for tens of milliseconds.
PENDING_BATCH = 2000

#: Grams of one query piece asked for at most (evenly spread; the match is confirmed).
QUERY_GRAMS = 16
#: Words whose grams are remembered, and the longest remembered: the cache stays a few
#: megabytes whatever the titles hold.
PIECE_CACHE = 2048
CACHED_PIECE_CHARS = 16


def _hex(text: str) -> str:
    """Eight hexadecimal digits per code point (a lone surrogate of a hostile title too)."""
    return text.encode("utf-32-be", "surrogatepass").hex()


@functools.lru_cache(maxsize=PIECE_CACHE)
def _word_grams(piece: str) -> tuple[str, ...]:
    """Words recur from title to title ("meeting", "notes"), so a word's grams are kept
    for the next title that holds it: the index's Python work is most of the mirror's on a
    first sync of a big history."""
    return _piece_grams(piece)


def _piece_grams(piece: str) -> tuple[str, ...]:
    """A piece's one-, two- and three-character grams, in that order."""
    digits = _hex(piece)
    end = len(digits)
    return (
        *[digits[i : i + 8] for i in range(0, end, 8)],
        *[digits[i : i + 16] for i in range(0, end - 8, 8)],
        *[digits[i : i + 24] for i in range(0, end - 16, 8)],
    )


def entry_text(title: str | None) -> str:
    """The `search_titles` entry of a title: its grams' tokens, each once (the grams of each
    white-space separated piece of the title folded both ways). A function of the title
    alone, so a removal gives back exactly what was indexed."""
    if not title:
        return ""
    grams: list[str] = []
    head = title[:INDEXED_TITLE_CHARS]
    folded, other = search_fold(head), str(filter_fold(head))
    for form in (folded,) if folded == other else (folded, other):
        for piece in form.split():
            if len(piece) <= CACHED_PIECE_CHARS:
                grams += _word_grams(piece)
            else:
                grams += _piece_grams(piece)
    return " ".join(dict.fromkeys(grams))


def _piece_query(piece: str) -> str:
    size = min(GRAM, len(piece))
    tokens = list(dict.fromkeys(_hex(piece[i : i + size]) for i in range(len(piece) - size + 1)))
    if len(tokens) > QUERY_GRAMS:
        step = (len(tokens) - 1) / (QUERY_GRAMS - 1)
        tokens = [tokens[round(i * step)] for i in range(QUERY_GRAMS)]
    return " AND ".join(tokens)


def match_query(*needles: str) -> str | None:
    """The index query for entries that may hold any of `needles` (each already folded as
    its predicate folds), or None when a needle has nothing to ask for (blank)."""
    alternatives: list[str] = []
    for needle in dict.fromkeys(needles):
        pieces = needle.split()
        if not pieces:
            return None
        alternatives.append("(" + " AND ".join(_piece_query(p) for p in pieces) + ")")
    return " OR ".join(alternatives) if alternatives else None


def filter_candidates(
    filter_text: str, pending_from: int | None = None
) -> tuple[str, Sequence[str | int]] | None:
    """The conversations the sidebar's title filter (`sync.mirror.title_filter`) may match,
    as a `SELECT` of their ids and its parameters: its title part, its id part when the
    filter can match an id (`ID_MATCH_CHARS`), and the rows whose entries are pending from
    `pending_from` (`pending_from()`); None when the filter is blank."""
    needle = filter_text.strip()
    titles = match_query(str(filter_fold(needle)))
    if titles is None:
        return None
    sql = CANDIDATES
    params: list[str | int] = [titles]
    if len(needle) >= ID_MATCH_CHARS:
        ids = fts_query(needle.translate(ASCII_LOWER))
        if ids is None:  # no trigram an index query can spell: every id may hold it
            return CANDIDATES + " UNION ALL SELECT id FROM sessions", (titles,)
        sql += " UNION ALL " + _ID_CANDIDATES
        params.append(ids)
    if pending_from is not None:
        sql += " UNION ALL " + PENDING_ROWS
        params.append(pending_from)
    return sql, params


def pending_from(conn: Connection) -> int | None:
    """The change sequence from which rows may lack their entry, None when none does."""
    row = conn.execute("SELECT value FROM sync_state WHERE key = ?", (PENDING_KEY,)).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def _set_pending_from(conn: Connection, seq: int | None) -> None:
    if seq is None:
        conn.execute("DELETE FROM sync_state WHERE key = ?", (PENDING_KEY,))
    else:
        conn.execute(
            "INSERT INTO sync_state (key, value) VALUES (?, ?)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (PENDING_KEY, str(seq)),
        )


def defer(conn: Connection, seq: int) -> None:
    """Inside the write of change `seq`: its new rows' entries are left to `index_pending`."""
    below = pending_from(conn)
    if below is None or seq < below:
        _set_pending_from(conn, seq)


def index_pending(conn: Connection, limit: int) -> int:
    """Write the entries of up to `limit` rows that lack one, in change order; how many
    (fewer than `limit`: none is left, and the pending mark is gone)."""
    start = pending_from(conn)
    if start is None:
        return 0
    rows = conn.execute(
        f"SELECT s.id, s.title, s.change_seq FROM sessions s WHERE {PENDING}"
        " ORDER BY s.change_seq LIMIT ?",
        (start, limit),
    ).fetchall()
    add(conn, ((session_id, title) for session_id, title, _seq in rows))
    # Rows of the last batch's sequence may be left: the next batch starts at it.
    _set_pending_from(conn, rows[-1][2] if len(rows) == limit else None)
    return len(rows)


def add(conn: Connection, rows: Iterable[tuple[str, str | None]]) -> None:
    """Index these conversations (id, title); none of them may be indexed yet."""
    titles = dict(rows)
    if not titles:
        return
    # One statement maps the rows and gives back their entries' rowids. The entries go in
    # rowid order: FTS5 flushes its pending terms to a new segment whenever a rowid comes
    # below the last one written in the transaction, and a segment per row is then merged
    # row by row.
    entries = conn.execute(
        "INSERT INTO title_rows (session_id) SELECT value FROM json_each(?)"
        " RETURNING id, session_id",
        (json.dumps(list(titles), ensure_ascii=False),),
    ).fetchall()
    entries.sort()
    conn.executemany(
        "INSERT INTO search_titles (rowid, text) VALUES (?, ?)",
        ((entry, entry_text(titles[session_id])) for entry, session_id in entries),
    )
    # One insert took ids above every other (INTEGER PRIMARY KEY), so they are a range.
    conn.execute(
        f"INSERT INTO search_ids (rowid, text) SELECT id, {_id_entry('session_id')}"
        " FROM title_rows WHERE id BETWEEN ? AND ? ORDER BY id",
        (entries[0][0], entries[-1][0]),
    )


def remove(conn: Connection, rows: Sequence[tuple[str, str | None]]) -> None:
    """Take these conversations (id, title as indexed) out of the index."""
    if not rows:
        return
    if sqlite_driver.SECURE_DELETE:
        for index in _INDEXES:
            conn.execute(f"INSERT INTO {index} ({index}, rank) VALUES ('secure-delete', 1)")
    for session_id, title in rows:
        found = conn.execute(
            "DELETE FROM title_rows WHERE session_id = ? RETURNING id", (session_id,)
        ).fetchone()
        if found is not None:
            conn.execute(
                "INSERT INTO search_titles (search_titles, rowid, text) VALUES ('delete', ?, ?)",
                (found[0], entry_text(title)),
            )
            conn.execute(
                "INSERT INTO search_ids (search_ids, rowid, text)"
                f" VALUES ('delete', :entry, {_id_entry(':id')})",
                {"entry": found[0], "id": session_id},
            )
    if not sqlite_driver.SECURE_DELETE:
        # No secure-delete: the entries' grams stay in older segments until a merge.
        for index in _INDEXES:
            conn.execute(f"INSERT INTO {index} ({index}) VALUES ('optimize')")


def fill(conn: Connection) -> None:
    """Index every conversation the mirror holds (the schema step that built the indexes)."""
    conn.execute("INSERT INTO title_rows (session_id) SELECT id FROM sessions")
    conn.executemany(
        "INSERT INTO search_titles (rowid, text) VALUES (?, ?)",
        (
            (entry, entry_text(title))
            for entry, title in conn.execute(
                "SELECT t.id, s.title FROM title_rows t JOIN sessions s"
                " ON s.id = t.session_id ORDER BY t.id"
            ).fetchall()
        ),
    )
    conn.execute(
        f"INSERT INTO search_ids (rowid, text) SELECT id, {_id_entry('session_id')}"
        " FROM title_rows ORDER BY id"
    )


_INDEXES = ("search_titles", "search_ids")

#: The ids of the conversations whose title entry matches an index query.
CANDIDATES = (
    "SELECT t.session_id FROM title_rows t WHERE t.id IN"
    " (SELECT rowid FROM search_titles WHERE search_titles MATCH ?)"
)
#: SQL true for a row `s` of `sessions` that may lack its entry, from a change sequence
#: (`pending_from`).
PENDING = "s.change_seq >= ? AND NOT EXISTS (SELECT 1 FROM title_rows t WHERE t.session_id = s.id)"
PENDING_ROWS = f"SELECT s.id FROM sessions s WHERE {PENDING}"
#: The same for an id's entry (`fts_query`: its trigrams).
_ID_CANDIDATES = (
    "SELECT t.session_id FROM title_rows t WHERE t.id IN"
    " (SELECT rowid FROM search_ids WHERE search_ids MATCH ?)"
)
