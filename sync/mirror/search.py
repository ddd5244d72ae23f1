"""Search over the mirror: titles and mirrored message text (CONTRACT §11, decision 0121).

A conversation matches when every word of the query (folded: `sync.mirror.search_text.fold`)
occurs in its title or in one of its events' searchable text. Words of three characters or
more find their candidate conversations through the trigram index (`search`, one entry
per stored batch of a conversation's events, `search_rows` naming its conversation); it is
built with `detail=none` (much smaller), so a candidate is confirmed against its
events' text, which also gives the snippet. A one- or two-character word of a script
written without spaces ("東京", "猫") finds its candidates through the short index
(`search_short`, decision 0123) under the same entry ids. A query whose words are all
short and of spaced scripts ("AI") searches titles only, as the sidebar's title filter
does, rather than scanning every message. Hits come in activity order (the sidebar's:
`updated_at` DESC, id DESC).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import regex

from sync.mirror.search_text import (
    TEXT_TYPES,
    TRIGRAM,
    Snippet,
    event_of_row,
    fold,
    fts_query,
    is_short_word,
    query_words,
    searchable_text,
    short_query,
    snippet,
)
from sync.mirror.sqlite_driver import Connection

#: Hits one search returns at most: the sidebar's first screens. Each hit is confirmed
#: against its conversation's text, so this bounds a keystroke's cost.
SEARCH_LIMIT = 50


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One matching conversation: its row's id, title and `updated_at`, and a snippet of
    the matching text (from a message, else the title) with the matched ranges."""

    id: str
    title: str | None
    updated_at: str
    snippet: Snippet

    def to_json(self) -> dict[str, Any]:
        """The `converge search --json` shape (CONTRACT §11): the snippet as plain text."""
        return {
            "id": self.id,
            "title": self.title,
            "updated_at": self.updated_at,
            "snippet": self.snippet.text,
        }


_TEXT_TYPES = ", ".join(f"'{kind}'" for kind in TEXT_TYPES)


#: The folded title in SQL: ASCII titles folded by `lower()` in C, others by `search_fold`.
_TITLE = "CASE WHEN s.title GLOB '*[^ -~]*' THEN search_fold(s.title) ELSE lower(s.title) END"


def _word_clause(word: str, titles_only: bool) -> tuple[str, tuple[str, ...]]:
    """SQL true when `word` may occur in the conversation `s`: in its title, or (candidates
    of the trigram or the short index, confirmed later) in one of its index entries.

    The index is asked once per word: the `IN` subquery does not depend on `s`, so SQLite
    builds the set of matching entries once (cheap even when the word is in every
    conversation: an entry is a conversation's batch of events, not one event), and the
    walk in activity order probes it per conversation. The unary `+` keeps SQLite from
    using that set as a constraint on `r`'s index, which would seek every member of it for
    every conversation walked, many times slower (`python -m bench search`)."""
    title = f"instr({_TITLE}, ?) > 0"
    if titles_only:
        return title, (word,)
    index, query = (
        ("search_short", short_query(word)) if is_short_word(word) else ("search", fts_query(word))
    )
    events = (
        "EXISTS (SELECT 1 FROM search_rows r WHERE r.session_id = s.id AND +r.id IN"
        f" (SELECT rowid FROM {index} WHERE {index} MATCH ?))"
    )
    return f"({title} OR {events})", (word, query)


def _confirm(
    conn: Connection, session_id: str, title: str | None, words: Sequence[str], titles_only: bool
) -> Snippet | None:
    """The snippet if every word occurs in the title or some event's text, else None (a
    trigram candidate whose trigrams are all there, but not together). The snippet is the
    event holding the most words of the query among those read; events are read in order
    and only until every word is seen (a one-word query: its first match)."""
    folded_title = fold(title or "")
    missing = {word for word in words if word not in folded_title}
    best, best_count = "", 0
    if not titles_only:
        for text in _texts(conn, session_id, words):
            folded = fold(text)
            present = {word for word in words if word in folded}
            missing -= present
            if len(present) > best_count:
                best, best_count = text, len(present)
            if not missing and best_count:  # every word seen, a message to show: enough
                break
    if missing:
        return None
    return snippet(best, words) if best_count else snippet(title or "", words)


#: Characters JSON escapes: a word holding one may not appear as itself in `events.data`.
_ESCAPED = regex.compile(r'["\\\x00-\x1f]')


def _texts(conn: Connection, session_id: str, words: Sequence[str]) -> Iterator[str]:
    """The searchable texts of a conversation's events that may hold one of `words`.

    An event is parsed (the costly step) only when its folded JSON holds one of the words:
    the mirror writes `data` with `ensure_ascii=False`, so a text without characters JSON
    escapes appears in it as itself, and folding is per character, so its fold appears in
    the data's fold. A word with such a character turns the shortcut off."""
    plain = [word for word in words if not _ESCAPED.search(word)]
    sift = len(plain) == len(words)
    rows = conn.execute(
        "SELECT session_id, sequence, run_id, type, created_at, data FROM events"
        f" WHERE session_id = ? AND type IN ({_TEXT_TYPES}) ORDER BY sequence",
        (session_id,),
    )
    for row in rows:
        if sift:
            data = fold(row[5])
            if not any(word in data for word in plain):
                continue
        if text := searchable_text(event_of_row(*row)):
            yield text


def search(conn: Connection, query: str, limit: int | None = SEARCH_LIMIT) -> list[SearchHit]:
    """Conversations matching `query`, in activity order (see the module docstring).

    The conversations are walked in the sidebar's order (its index) and the walk stops at
    `limit` confirmed hits (None: every one, for `converge search`), so a common word costs
    the sidebar the first conversations, not every one that holds it."""
    words = query_words(query)
    if not words:
        return []
    indexed = [word for word in words if len(word) >= TRIGRAM or is_short_word(word)]
    titles_only = not indexed
    clauses: list[str] = []
    params: list[str] = []
    # A short word of a spaced script, beside indexed ones, is confirmed in Python against
    # their candidates; with none beside it, titles only.
    for word in words if titles_only else indexed:
        clause, values = _word_clause(word, titles_only)
        clauses.append(clause)
        params.extend(values)
    rows = conn.execute(
        "SELECT s.id, s.title, s.updated_at FROM sessions s WHERE "
        + " AND ".join(clauses)
        + " ORDER BY s.updated_at DESC, s.id DESC",
        tuple(params),
    )
    hits: list[SearchHit] = []
    for session_id, title, updated_at in rows:
        snip = _confirm(conn, session_id, title, words, titles_only)
        if snip is not None:
            hits.append(SearchHit(session_id, title, updated_at, snip))
            if limit is not None and len(hits) >= limit:
                break
    return hits
