"""Search over the mirror: titles and mirrored message text (CONTRACT §11, decisions 0121,
0123 and 0124).

A conversation matches when every word of the query (folded: `sync.mirror.search_text.fold`)
occurs in its title or in one of its events' searchable text. Three indexes give
candidates, and every candidate is confirmed against its title and events' text, which
also gives the snippet: the trigram index of message text (`search`, one entry per stored
batch of a conversation's events, `search_rows` naming its conversation, `detail=none`),
the short index of one- and two-character words of scripts written without spaces
("東京", "猫": `search_short`, same entry ids), and the index of titles
(`sync.mirror.title_index`). A query whose words are all short and of spaced scripts ("AI")
searches titles only, as the sidebar's title filter does, rather than every message.

Hits come in activity order (the sidebar's: `updated_at` DESC, id DESC), found one of two
ways, so that neither a word no conversation holds nor one every conversation holds costs
a read of everything:

- a word with few index entries (up to `DRIVE_LIMIT`, counted with a `LIMIT`, so however
  common it is the count is cheap) names all the conversations that can match: they are
  read by id and sorted;
- when every word is common, the conversations are walked in activity order and confirmed
  as they come, so the walk stops at the `limit`-th hit after a few of them. Past
  `DIRECT_WALK` conversations without enough hits (common words that seldom meet), the rest
  of the walk asks each word's index entries, built once as a set, before confirming.

Candidates are confirmed a batch of conversations at a time, with one read of their first
texts and one of all the events of those that stay undecided: a read per conversation
would cost more than the confirmation itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

from sync.errors import SearchTooLong
from sync.mirror import title_index
from sync.mirror.search_text import (
    TEXT_TYPES,
    TRIGRAM,
    Snippet,
    compiled,
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
#: Words one query may hold: each is confirmed against every candidate's text.
MAX_QUERY_WORDS = 32
#: Index entries of a word up to which its candidates are listed and read by id; a word
#: with more is common, and the conversations are walked in activity order instead.
DRIVE_LIMIT = 1000
#: Conversations a walk for common words confirms before it asks the indexes.
DIRECT_WALK = 1000
#: Conversations whose events one read fetches for confirmation: few at first (a search
#: for a common word is done after a few dozen), twice as many each time after.
FIRST_BATCH = 16
LAST_BATCH = 256


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


#: `_confirm`'s answer when the texts it was given ran out before it could decide.
_UNDECIDED = object()


def _confirm(
    title: str | None, words: Sequence[str], texts: Iterable[str], *, all_texts: bool = True
) -> Snippet | object | None:
    """The snippet if every word occurs in the title or one of `texts`, else None (a
    trigram candidate whose trigrams are all there, but not together). The snippet is the
    text holding the most words of the query among those read; texts are read in order
    and only until every word is seen (a one-word query: its first match). Given only the
    first texts (`all_texts` false), `_UNDECIDED` when they ran out before that."""
    folded_title = fold(title or "")
    missing = {word for word in words if word not in folded_title}
    best, best_count = "", 0
    for text in texts:
        folded = fold(text)
        present = {word for word in words if word in folded}
        missing -= present
        if len(present) > best_count:
            best, best_count = text, len(present)
        if not missing and best_count:  # every word seen, a message to show: enough
            break
    else:
        if not all_texts:
            return _UNDECIDED
    if missing:
        return None
    return snippet(best, words) if best_count else snippet(title or "", words)


#: Characters JSON escapes: a word holding one may not appear as itself in `events.data`.
_ESCAPED = r'["\\\x00-\x1f]'

#: The text events of conversations after a sequence number each (`[[id, sequence], …]`).
_EVENTS_AFTER = (
    "SELECT e.session_id, e.sequence, e.run_id, e.type, e.created_at, e.data"
    " FROM json_each(?) j JOIN events e ON e.session_id = j.value ->> 0"
    f" AND e.sequence > j.value ->> 1 AND e.type IN ({_TEXT_TYPES})"
    " ORDER BY j.key, e.sequence"
)
#: Texts of each conversation read first: a common word is nearly always in one of them.
FIRST_TEXTS = 4
#: The first `FIRST_TEXTS` text events of each conversation, one index seek each.
_FIRST_EVENTS_OF = (
    "SELECT e.session_id, e.sequence, e.run_id, e.type, e.created_at, e.data"
    " FROM json_each(?) j JOIN events e ON e.id IN (SELECT id FROM events"
    f" WHERE session_id = j.value AND type IN ({_TEXT_TYPES}) ORDER BY sequence LIMIT ?)"
)

type Row = tuple[str, str | None, str]


def _texts(rows: Iterable[tuple[Any, ...]], words: Sequence[str]) -> Iterator[str]:
    """The searchable texts of these event rows that may hold one of `words`.

    An event is parsed (the costly step) only when its folded JSON holds one of the words:
    the mirror writes `data` with `ensure_ascii=False`, so a text without characters JSON
    escapes appears in it as itself, and folding is per character, so its fold appears in
    the data's fold. A word with such a character turns the shortcut off."""
    sift = not any(compiled(_ESCAPED).search(word) for word in words)
    for row in rows:
        if sift:
            data = fold(row[5])
            if not any(word in data for word in words):
                continue
        if text := searchable_text(event_of_row(*row)):
            yield text


def _confirmed(
    conn: Connection, rows: Iterable[Row], words: Sequence[str], titles_only: bool
) -> Iterator[SearchHit]:
    """The rows that match, in their order, each with its snippet; their events are read
    a batch of conversations at a time (none for a search of titles only)."""
    batch: list[Row] = []
    size = FIRST_BATCH
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield from _confirm_batch(conn, batch, words, titles_only)
            batch, size = [], min(size * 2, LAST_BATCH)
    if batch:
        yield from _confirm_batch(conn, batch, words, titles_only)


def _confirm_batch(
    conn: Connection, batch: Sequence[Row], words: Sequence[str], titles_only: bool
) -> Iterator[SearchHit]:
    """The batch's hits, in order. Each conversation's first `FIRST_TEXTS` texts are read
    first; only the conversations they leave undecided have all their events read (a
    common word is seen early: reading every event of every hit cost most of a search
    with thousands of hits)."""
    first = _first_events_of(conn, batch) if not titles_only else {}
    found: dict[str, Snippet | object | None] = {}
    for session_id, title, _at in batch:
        rows = first.get(session_id, ())
        texts = _texts(rows, words)
        found[session_id] = _confirm(title, words, texts, all_texts=len(rows) < FIRST_TEXTS)
    undecided = [row for row in batch if found[row[0]] is _UNDECIDED]
    if undecided:
        after = json.dumps([[sid, first[sid][-1][1]] for sid, _title, _at in undecided])
        rest: dict[str, list[tuple[Any, ...]]] = {}
        for row in conn.execute(_EVENTS_AFTER, (after,)):
            rest.setdefault(row[0], []).append(row)
        for session_id, title, _at in undecided:
            rows = first[session_id] + rest.get(session_id, [])
            found[session_id] = _confirm(title, words, _texts(rows, words))
    for session_id, title, updated_at in batch:
        hit = found[session_id]
        if isinstance(hit, Snippet):
            yield SearchHit(session_id, title, updated_at, hit)


def _first_events_of(conn: Connection, batch: Sequence[Row]) -> dict[str, list[tuple[Any, ...]]]:
    """The first `FIRST_TEXTS` text events of the batch's conversations, by conversation,
    in order."""
    events: dict[str, list[tuple[Any, ...]]] = {}
    ids = json.dumps([session_id for session_id, _title, _at in batch])
    for row in conn.execute(_FIRST_EVENTS_OF, (ids, FIRST_TEXTS)):
        events.setdefault(row[0], []).append(row)
    for rows in events.values():
        rows.sort(key=lambda row: row[1])  # a join gives no order of its own
    return events


def _word_candidates(conn: Connection, word: str, cap: int, titles_only: bool) -> set[str] | None:
    """The conversations that may hold `word` in their title or, for a word the text indexes
    can answer, in their text; None when there are more than `cap` index entries of
    either kind (a common word), or when the word may be in text no index answers for (a
    short word of a spaced script beside longer ones, confirmed against their candidates)."""
    sources: list[tuple[str, str, str | None]] = [
        ("title_rows", "search_titles", title_index.match_query(word))
    ]
    if is_short_word(word):
        sources.append(("search_rows", "search_short", short_query(word)))
    elif len(word) >= TRIGRAM:
        sources.append(("search_rows", "search", fts_query(word)))
    elif not titles_only:
        return None
    found: set[str] = set()
    for table, index, query in sources:
        if query is None:
            continue
        # At most cap + 1 of the index's entries: cheap however common the word.
        rows = conn.execute(
            f"SELECT session_id FROM {table} WHERE id IN"
            f" (SELECT rowid FROM {index} WHERE {index} MATCH ? LIMIT ?)",
            (query, cap + 1),
        ).fetchall()
        if len(rows) > cap:
            return None
        found.update(row[0] for row in rows)
    return found


_ORDER = " ORDER BY s.updated_at DESC, s.id DESC"


def _walk(conn: Connection, words: Sequence[str], titles_only: bool) -> Iterator[Row]:
    """Every conversation in activity order, for common words: the first `DIRECT_WALK` as
    they are, the rest only where each word's index entries or title may hold it."""
    walked, last = 0, None
    for last in conn.execute(
        "SELECT s.id, s.title, s.updated_at FROM sessions s" + _ORDER + " LIMIT ?",
        (DIRECT_WALK,),
    ):
        walked += 1
        yield last
    if walked < DIRECT_WALK or last is None:
        return
    indexed = [word for word in words if len(word) >= TRIGRAM or is_short_word(word)]
    clauses = ["(s.updated_at, s.id) < (?, ?)"]
    params: list[str] = [last[2], last[0]]
    # A short word of a spaced script, beside indexed ones, is confirmed in Python against
    # their candidates; with none beside it, titles only.
    for word in indexed or words:
        clause, values = _word_clause(word, titles_only)
        clauses.append(clause)
        params.extend(values)
    yield from conn.execute(
        "SELECT s.id, s.title, s.updated_at FROM sessions s WHERE "
        + " AND ".join(clauses)
        + _ORDER,
        tuple(params),
    )


def search(conn: Connection, query: str, limit: int | None = SEARCH_LIMIT) -> list[SearchHit]:
    """Conversations matching `query`, in activity order, the first `limit` of them (None:
    every one, for `converge search`); see the module docstring.

    Raises `SearchTooLong` for a query of more than `MAX_QUERY_WORDS` words."""
    words = query_words(query)
    if len(words) > MAX_QUERY_WORDS:
        raise SearchTooLong(MAX_QUERY_WORDS)
    if not words:
        return []
    titles_only = not any(len(word) >= TRIGRAM or is_short_word(word) for word in words)
    known = [
        found
        for word in words
        if (found := _word_candidates(conn, word, DRIVE_LIMIT, titles_only)) is not None
    ]
    rows: Iterable[Row]
    if not known:
        rows = _walk(conn, words, titles_only)
    elif ids := set.intersection(*known):
        rows = conn.execute(
            "SELECT s.id, s.title, s.updated_at FROM sessions s WHERE s.id IN"
            " (SELECT value FROM json_each(?))" + _ORDER,
            (json.dumps(sorted(ids)),),
        )
    else:
        return []
    return list(islice(_confirmed(conn, rows, words, titles_only), limit))
