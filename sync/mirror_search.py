"""Search over the mirror: titles and mirrored message text (CONTRACT §11, decision 0121).

A conversation matches when every word of the query (folded: `sync.search_text.fold`)
occurs in its title or in one of its events' searchable text. Words of three characters or
more find their candidates through the trigram index (`search`); it is built with
`detail=none` (a third of the size), so a candidate is confirmed against the event's text,
which also gives the snippet. A query whose words are all shorter than three characters
(which trigrams cannot match: "AI", "東京") searches titles only, as the sidebar's title
filter does, rather than scanning every message. Hits come in activity order (the
sidebar's: `updated_at` DESC, id DESC).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sync.search_text import (
    TRIGRAM,
    Snippet,
    event_of_row,
    fold,
    fts_query,
    query_words,
    searchable_text,
    snippet,
)

if TYPE_CHECKING:  # the window imports `SearchHit` before SQLAlchemy is loaded
    from sqlalchemy import Connection

#: Hits one search returns at most (the sidebar shows the first ones).
SEARCH_LIMIT = 200


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


def _candidates(conn: Connection, word: str, titles_only: bool) -> set[str]:
    found = {
        r[0]
        for r in conn.exec_driver_sql(
            "SELECT id FROM sessions WHERE instr(search_fold(title), ?) > 0", (word,)
        )
    }
    if not titles_only:
        found.update(
            r[0]
            for r in conn.exec_driver_sql(
                "SELECT DISTINCT e.session_id FROM search JOIN events e ON e.id = search.rowid"
                " WHERE search MATCH ?",
                (fts_query(word),),
            )
        )
    return found


def _confirm(
    conn: Connection, session_id: str, title: str | None, words: Sequence[str], titles_only: bool
) -> Snippet | None:
    """The snippet if every word occurs in the title or some event's text, else None."""
    texts = [] if titles_only else _texts(conn, session_id)
    folded_title = fold(title or "")
    folded = [fold(t) for t in texts]
    for word in words:
        if word not in folded_title and not any(word in f for f in folded):
            return None
    for text in texts:
        found = snippet(text, words)
        if found is not None:
            return found
    return snippet(title or "", words)


def _texts(conn: Connection, session_id: str) -> list[str]:
    rows = conn.exec_driver_sql(
        "SELECT session_id, sequence, run_id, type, created_at, data FROM events"
        " WHERE session_id = ? ORDER BY sequence",
        (session_id,),
    )
    return [t for row in rows if (t := searchable_text(event_of_row(*row)))]


def search(conn: Connection, query: str, limit: int = SEARCH_LIMIT) -> list[SearchHit]:
    """Conversations matching `query`, in activity order (see the module docstring)."""
    words = query_words(query)
    if not words:
        return []
    titles_only = len(words[0]) < TRIGRAM
    candidates: set[str] | None = None
    for word in words:
        if len(word) < TRIGRAM and not titles_only:
            continue  # confirmed below, against the candidates of the longer words
        found = _candidates(conn, word, titles_only)
        candidates = found if candidates is None else candidates & found
        if not candidates:
            return []
    assert candidates is not None
    rows = conn.exec_driver_sql(
        "SELECT id, title, updated_at FROM sessions WHERE id IN (SELECT value FROM"
        " json_each(?)) ORDER BY updated_at DESC, id DESC",
        (_json_list(candidates),),
    ).all()
    hits: list[SearchHit] = []
    for session_id, title, updated_at in rows:
        snip = _confirm(conn, session_id, title, words, titles_only)
        if snip is not None:
            hits.append(SearchHit(session_id, title, updated_at, snip))
            if len(hits) >= limit:
                break
    return hits


def _json_list(items: set[str]) -> str:
    return json.dumps(sorted(items))
