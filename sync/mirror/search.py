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

Candidates are confirmed a batch of conversations at a time (a read per conversation would
cost more than the confirmation itself): one read of each one's first event that may hold a
word, then of twice as many of the next for those still undecided. What may hold a word is
sifted in SQL first and in Python next, so that an event is parsed, and its text folded,
only when it can match (`_Reading`; decision 0225).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from operator import itemgetter
from typing import Any, NamedTuple

from sync.errors import SearchTooLong
from sync.mirror import sqlite_driver, title_index
from sync.mirror.search_text import (
    TEXT_TYPES,
    TRIGRAM,
    Snippet,
    compiled,
    fold,
    fts_query,
    is_short_word,
    is_text,
    latin_1_folds,
    query_words,
    short_query,
    snippet,
    stays_itself,
    text_of_json,
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
#: Characters of a word sifted with `LIKE` at most: SQLite refuses a pattern of more than
#: 50,000 bytes (`SQLITE_LIMIT_LIKE_PATTERN_LENGTH`), and escaping can double a word.
LIKE_WORD_CHARS = 10_000
#: Conversations whose events one read fetches for confirmation: few at first (a search
#: for a common word is done after a few dozen), twice as many each time after.
FIRST_BATCH = 16
LAST_BATCH = 256


class SearchHit(NamedTuple):
    """One matching conversation: its row's id, title and `updated_at`, and a snippet of
    the matching text (from a message, else the title) with the matched ranges. A tuple:
    `converge search` makes one per hit, thousands at a time."""

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


#: The folded title in SQL, as UTF-8: titles in ASCII folded by `lower()` in C, others by
#: `search_fold` given their bytes (SQLite cuts a text it hands a Python function at a NUL
#: character, and `length` counts a text's characters up to one: so a NUL goes there too).
_TITLE = (
    "CASE WHEN length(CAST(s.title AS BLOB)) = length(s.title) THEN lower(s.title)"
    " ELSE search_fold(CAST(s.title AS BLOB)) END"
)


def _utf8(word: str) -> bytes:
    """A folded word as `_TITLE`'s `instr` compares it: its UTF-8 bytes."""
    return word.encode("utf-8", "surrogatepass")


def _word_clause(word: str, titles_only: bool) -> tuple[str, tuple[str | bytes, ...]]:
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
        return title, (_utf8(word),)
    index, query = (
        ("search_short", short_query(word)) if is_short_word(word) else ("search", fts_query(word))
    )
    events = "EXISTS (SELECT 1 FROM search_rows r WHERE r.session_id = s.id"
    if query is None:  # no trigram the index can be asked for: any text may hold it
        return f"({title} OR {events}))", (_utf8(word),)
    events += f" AND +r.id IN (SELECT rowid FROM {index} WHERE {index} MATCH ?))"
    return f"({title} OR {events})", (_utf8(word), query)


class _Confirmation:
    """A conversation's texts read in order until it is decided: a match when every word
    occurs in its title or one of the texts. The snippet is the text holding the most words
    of the query among those read (the earliest of equals); texts are read only until every
    word is seen (a one-word query: its first match). `plain`: every word's characters stay
    themselves (`_Reading.as_is`), so a text holding each word as it is holds it in its
    fold too, and need not be folded."""

    __slots__ = ("best", "count", "missing", "plain", "title", "words")

    def __init__(self, title: str | None, words: Sequence[str], plain: bool = False) -> None:
        folded = fold(title or "")
        self.title = title
        self.words = words
        self.plain = plain
        self.missing = {word for word in words if word not in folded}
        self.best, self.count = "", 0

    def read(self, text: str) -> bool:
        """Take the next text; whether the conversation is decided (a match, with a
        message to show)."""
        words = self.words
        as_is = self.plain  # every word held as it is: no fold needed
        if as_is:
            for word in words:
                if word not in text:
                    as_is = False
                    break
        present: Sequence[str] = words
        if not as_is:
            folded = fold(text)
            present = [word for word in words if word in folded]
        if present:
            self.missing.difference_update(present)
            if len(present) > self.count:
                self.best, self.count = text, len(present)
        return not self.missing and self.count > 0

    def result(self) -> Snippet | None:
        """The snippet if every word occurred, else None (a trigram candidate whose trigrams
        are all there, but not together)."""
        if self.missing:
            return None
        return snippet(self.best if self.count else self.title or "", self.words)


def _confirm(title: str | None, words: Sequence[str], texts: Iterable[str]) -> Snippet | None:
    """The snippet of a conversation of this title and these texts if every word occurs in
    it, else None (`_Confirmation`)."""
    confirmation = _Confirmation(title, words)
    for text in texts:
        if confirmation.read(text):
            break
    return confirmation.result()


#: Characters JSON escapes: a word holding one may not appear as itself in `events.data`.
_ESCAPED = r'["\\\x00-\x1f]'

#: Text events of each conversation after a sequence number (`[[id, sequence], …]`) that
#: may hold a word (`_Reading`), the first few of each, one index seek each.
_EVENTS_AFTER = (
    "SELECT e.session_id, e.sequence, e.type, e.data"
    " FROM json_each(?) j JOIN events e ON e.id IN (SELECT id FROM events"
    " WHERE session_id = j.value ->> 0 AND sequence > j.value ->> 1"
    f" AND type IN ({_TEXT_TYPES}) AND ({{sift}}) ORDER BY sequence LIMIT ?)"
)
#: The first such event of each conversation (`[id, …]`; sequences start at 1).
_FIRST_EVENTS = (
    "SELECT e.session_id, e.sequence, e.type, e.data"
    " FROM json_each(?) j JOIN events e ON e.id = (SELECT id FROM events"
    f" WHERE session_id = j.value AND type IN ({_TEXT_TYPES}) AND ({{sift}})"
    " ORDER BY sequence LIMIT 1)"
)
#: SQL true for data holding a character outside ASCII: more bytes than characters.
_NOT_ASCII = "length(CAST(data AS BLOB)) > length(data)"

type Row = tuple[str, str | None, str]


def _like_escaped(text: str) -> str:
    """`text` matched as it is inside a LIKE pattern of escape character `\\`."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


@dataclass(frozen=True, slots=True)
class _Reading:
    """How a search reads events for its words. `sifted`: an event's data is folded and
    looked at before the event is parsed (the costly step): the mirror writes `data` with
    `ensure_ascii=False`, so a text without characters JSON escapes appears in it as
    itself, and folding is per character, so its fold appears in the data's fold. A word
    holding such a character turns that off.

    SQL sifts first what it can (`first`, `after`): data in ASCII folds by `lower()`, and
    SQLite's `LIKE` ignores the case of ASCII letters alone, so such data holds an ASCII
    word only if it is `LIKE` it (no copy of the data lowered; a word past `LIKE_WORD_CHARS`
    is looked for in the data lowered), and a word with a character outside ASCII never. In
    Python, data holding a word as it is holds it in its fold too when the word's
    characters stay themselves (`as_is`), and data of Latin-1
    characters cannot hold a word with a character no fold of them gives (`beyond_latin_1`):
    neither needs the data folded."""

    words: Sequence[str]
    sifted: bool
    first: str
    after: str
    values: tuple[str, ...]
    as_is: tuple[str, ...]
    beyond_latin_1: bool

    @classmethod
    def of(cls, words: Sequence[str]) -> _Reading:
        values: list[str] = []
        sift = "1"
        if sifted := not any(compiled(_ESCAPED).search(word) for word in words):
            clauses = [_NOT_ASCII]
            for word in (word for word in words if word.isascii()):
                if len(word) <= LIKE_WORD_CHARS:
                    clauses.append("data LIKE ? ESCAPE '\\'")
                    values.append(f"%{_like_escaped(word)}%")
                else:  # past SQLite's bound on a LIKE pattern: its data lowered
                    clauses.append("instr(lower(data), ?) > 0")
                    values.append(word)
            sift = " OR ".join(clauses)
        return cls(
            words,
            sifted,
            _FIRST_EVENTS.format(sift=sift),
            _EVENTS_AFTER.format(sift=sift),
            tuple(values),
            tuple(word for word in words if all(map(stays_itself, word))),
            all(not latin_1_folds().issuperset(word) for word in words),
        )

    def text(self, kind: str, data: str) -> str:
        """The searchable text of an event the SQL let through, "" when it holds no word."""
        if (
            self.sifted
            and not data.isascii()  # data in ASCII: sifted by SQL already
            and not any(word in data for word in self.as_is)
        ):
            if self.beyond_latin_1 and len(data.encode("latin-1", "ignore")) == len(data):
                return ""
            folded = fold(data)
            if not any(word in folded for word in self.words):
                return ""
        return text_of_json(kind, data)


def _confirmed(
    conn: Connection, rows: Iterable[Row], words: Sequence[str], titles_only: bool
) -> Iterator[SearchHit]:
    """The rows that match, in their order, each with its snippet; their events are read
    a batch of conversations at a time (none for a search of titles only)."""
    reading = None if titles_only else _Reading.of(words)
    batch: list[Row] = []
    size = FIRST_BATCH
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield from _confirm_batch(conn, batch, words, reading)
            batch, size = [], min(size * 2, LAST_BATCH)
    if batch:
        yield from _confirm_batch(conn, batch, words, reading)


def _confirm_batch(
    conn: Connection, batch: Sequence[Row], words: Sequence[str], reading: _Reading | None
) -> Iterator[SearchHit]:
    """The batch's hits, in order. Each read asks, for every conversation still undecided,
    its next few events that may hold a word: reading every event of every hit cost most
    of a search with thousands of hits, and a common word is seen early. A conversation
    whose first text holds every word as it is is decided there, without a
    `_Confirmation`: the usual hit of a search with thousands."""
    titles = {sid: title for sid, title, _at in batch}
    decided: dict[str, str] = {}  # the text of the snippet, by conversation
    confirmations: dict[str, _Confirmation] = {}
    if reading is not None:
        plain = len(reading.as_is) == len(words)
        after: dict[str, int] = {}
        for session_id, sequence, kind, data in conn.execute(
            reading.first, (json.dumps(list(titles)), *reading.values)
        ):
            if session_id not in titles:
                raise _astray()
            text = reading.text(kind, data)
            if plain and text and _holds_as_is(text, words):
                decided[session_id] = text
                continue
            confirmation = _Confirmation(titles[session_id], words, plain)
            confirmations[session_id] = confirmation
            if not (text and confirmation.read(text)):
                after[session_id] = sequence
        take = 2
        while after:
            values = (json.dumps(list(after.items())), *reading.values, take)
            read: dict[str, list[tuple[str, int, str, str]]] = {}
            for row in conn.execute(reading.after, values):
                read.setdefault(row[0], []).append(row)
            after = {}
            for session_id, rows in read.items():
                if len(rows) > 1:
                    rows.sort(key=itemgetter(1))  # a join gives no order of its own
                if (undecided := confirmations.get(session_id)) is None:
                    raise _astray()
                for _sid, _sequence, kind, data in rows:
                    if (text := reading.text(kind, data)) and undecided.read(text):
                        break
                else:
                    if len(rows) == take:
                        after[session_id] = rows[-1][1]
            take *= 2  # a common word is nearly always in the first
    for session_id, title, updated_at in batch:
        if (shown := decided.get(session_id)) is not None:
            found = snippet(shown, words)
        elif (asked := confirmations.get(session_id)) is not None:
            found = asked.result()
        else:  # no text that may hold a word: its title alone
            found = _Confirmation(title, words).result()
        if found is not None:
            yield SearchHit(session_id, title, updated_at, found)


def _holds_as_is(text: str, words: Sequence[str]) -> bool:
    """Whether `text` holds every word as it is (so in its fold too, for words of
    `_Reading.as_is`). A loop: `all` of a generator costs more than the check."""
    for word in words:  # noqa: SIM110
        if word not in text:
            return False
    return True


def _astray() -> Exception:
    """An event read of a conversation not asked for: it comes of a damaged file only (its
    row and the index that found it disagree, which `quick_check` passes). SQLite's word
    for it, so that the read names the damage (`sync.mirror.store.failure`)."""
    return sqlite_driver.DatabaseError("database disk image is malformed")


def _word_candidates(
    conn: Connection, word: str, cap: int, titles_only: bool, pending: int | None
) -> set[str] | None:
    """The conversations that may hold `word` in their title or, for a word the text indexes
    can answer, in their text; None when there are more than `cap` index entries of
    either kind (a common word), or when the word may be in text no index answers for (a
    short word of a spaced script beside longer ones, confirmed against their candidates).
    `pending`: the title index's entries are pending from this change sequence
    (`title_index.pending_from`)."""
    sources: list[tuple[str, str, str | None]] = [
        ("title_rows", "search_titles", title_index.match_query(word))
    ]
    if is_short_word(word):
        sources.append(("search_rows", "search_short", short_query(word)))
    elif len(word) >= TRIGRAM and (text_query := fts_query(word)) is not None:
        sources.append(("search_rows", "search", text_query))
    elif not titles_only:
        return None
    found: set[str] = set()
    if pending is not None:  # rows whose title entry is not written yet, read as they are
        found.update(
            row[0]
            for row in conn.execute(
                f"SELECT s.id FROM sessions s WHERE {title_index.PENDING}"
                f" AND instr({_TITLE}, ?) > 0 LIMIT ?",
                (pending, _utf8(word), cap + 1),
            )
        )
        if len(found) > cap:
            return None
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
    params: list[str | bytes] = [last[2], last[0]]
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
    if not words or not all(map(is_text, words)):  # a word no text holds: no hit
        return []
    titles_only = not any(len(word) >= TRIGRAM or is_short_word(word) for word in words)
    pending = title_index.pending_from(conn)
    known = [
        found
        for word in words
        if (found := _word_candidates(conn, word, DRIVE_LIMIT, titles_only, pending)) is not None
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
