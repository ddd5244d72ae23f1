"""The index of titles and ids: what finds a conversation by its title without reading
every title (CONTRACT §11, decision 0124).

Both readers of titles ask it for candidates and confirm each with their own predicate:
search (`sync.mirror.search`: accent-folded words) and the sidebar's title filter
(`sync.mirror.title_filter`: a case-folded substring of the title or the id). So one entry
holds, of a conversation, the one-, two- and three-character grams of every form those
predicates compare: its title folded both ways, and the trigrams of its id in ASCII lower
case (the filter matches an id from `ID_MATCH_CHARS` characters on). A gram is a
token of hexadecimal code points, so any script and any punctuation tokenize alike
(`unicode61` sees letters and digits only), and a query of one or two characters, which a
trigram index cannot answer, is one token. Grams that span white space are left out: no
query word holds any. Entries are contentless (`detail=none`), mapped to their conversation
by `title_rows`; the caller's predicate confirms every candidate, so a gram index that
cannot tell where its grams sit still gives exact results.

A removal hands the index the entry's grams back (`'delete'`), computed from the title and
id as they were, and on SQLite with `secure-delete` nothing of them is left in its
segments (as for `sync.mirror.transcripts`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence

from sync.mirror import sqlite_driver
from sync.mirror.search_text import fold as search_fold
from sync.mirror.sqlite_driver import Connection
from sync.mirror.title_filter import ASCII_LOWER, ID_MATCH_CHARS
from sync.mirror.title_filter import fold as filter_fold

#: The longest grams: a longer word is asked for as all of its trigrams.
GRAM = 3
#: Characters of a title indexed at most: the contract's titles are far shorter, and a
#: hostile server's are not worth more index than this.
INDEXED_TITLE_CHARS = 512
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


def entry_text(session_id: str, title: str | None) -> str:
    """The index entry of a conversation: its grams' tokens, each once (the grams of each
    white-space separated piece of its title folded both ways, then the trigrams of each
    piece of its id). A function of the id and title alone, so a removal gives back
    exactly what was indexed."""
    grams: list[str] = []
    if title:
        head = title[:INDEXED_TITLE_CHARS]
        folded, other = search_fold(head), str(filter_fold(head))
        for form in (folded,) if folded == other else (folded, other):
            for piece in form.split():
                if len(piece) <= CACHED_PIECE_CHARS:
                    grams += _word_grams(piece)
                else:
                    grams += _piece_grams(piece)
    head = session_id[:INDEXED_TITLE_CHARS]
    # ASCII_LOWER on an ASCII id is `lower()`, at C speed.
    for piece in (head.lower() if head.isascii() else head.translate(ASCII_LOWER)).split():
        digits = _hex(piece)  # an id's trigrams: ids do not recur, nothing is cached
        grams += [digits[i : i + 24] for i in range(0, len(digits) - 16, 8)]
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


def filter_query(filter_text: str) -> str | None:
    """The index query of the sidebar's title filter (`sync.mirror.title_filter`): its
    title part, and its id part when the filter can match an id (`ID_MATCH_CHARS`)."""
    needle = filter_text.strip()
    if len(needle) < ID_MATCH_CHARS or len(needle.split()) != 1:
        return match_query(str(filter_fold(needle)))
    return match_query(str(filter_fold(needle)), needle.translate(ASCII_LOWER))


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
        ((entry, entry_text(session_id, titles[session_id])) for entry, session_id in entries),
    )


def remove(conn: Connection, rows: Sequence[tuple[str, str | None]]) -> None:
    """Take these conversations (id, title as indexed) out of the index."""
    if not rows:
        return
    if sqlite_driver.SECURE_DELETE:
        conn.execute("INSERT INTO search_titles (search_titles, rank) VALUES ('secure-delete', 1)")
    for session_id, title in rows:
        found = conn.execute(
            "DELETE FROM title_rows WHERE session_id = ? RETURNING id", (session_id,)
        ).fetchone()
        if found is not None:
            conn.execute(
                "INSERT INTO search_titles (search_titles, rowid, text) VALUES ('delete', ?, ?)",
                (found[0], entry_text(session_id, title)),
            )
    if not sqlite_driver.SECURE_DELETE:
        # No secure-delete: the entries' grams stay in older segments until a merge.
        conn.execute("INSERT INTO search_titles (search_titles) VALUES ('optimize')")


def fill(conn: Connection) -> None:
    """Index every conversation the mirror holds (the schema step that added the index)."""
    conn.execute("INSERT INTO title_rows (session_id) SELECT id FROM sessions")
    conn.executemany(
        "INSERT INTO search_titles (rowid, text) VALUES (?, ?)",
        (
            (entry, entry_text(session_id, title))
            for entry, session_id, title in conn.execute(
                "SELECT t.id, s.id, s.title FROM title_rows t JOIN sessions s"
                " ON s.id = t.session_id ORDER BY t.id"
            ).fetchall()
        ),
    )


#: The ids of the conversations whose entry matches an index query.
CANDIDATES = (
    "SELECT t.session_id FROM title_rows t WHERE t.id IN"
    " (SELECT rowid FROM search_titles WHERE search_titles MATCH ?)"
)
