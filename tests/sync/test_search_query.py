"""The search query builder on its own (CONTRACT §11, decision 0121): a query's words, each
word's FTS5 query, the SQL a search runs, and the snippet of a hit.

`sync.mirror.search_text` turns a query into folded words (longest first) and each word of
three characters or more into an FTS5 query of its trigrams; `sync.mirror.search.search`
asks the index for candidates and confirms each against its text. (Search as a whole, on
a mirror filled by fetches: tests/sync/test_transcripts.py.)"""

from __future__ import annotations

import itertools
import json
import sqlite3
import string
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sync.mirror import sqlite_driver
from sync.mirror.search import _confirm as confirm
from sync.mirror.search_text import (
    QUERY_TRIGRAMS,
    SNIPPET_CONTEXT,
    TRIGRAM,
    Snippet,
    event_of_row,
    fold,
    fts_query,
    query_words,
    searchable_text,
    snippet,
)
from sync.mirror.store import Mirror
from sync.wire.models import Event, SessionView

# -- the words of a query ---------------------------------------------------------------------


def test_query_words_are_folded_longest_first_without_duplicates() -> None:
    assert query_words("  AI  Écrire\tai  the\n") == ["ecrire", "the", "ai"]


def test_words_of_the_same_length_keep_the_order_they_were_typed_in() -> None:
    assert query_words("bb aa cc aa") == ["bb", "aa", "cc"]


def test_a_query_of_spaces_has_no_words() -> None:
    assert query_words(" \t\n ") == []


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_query_words_are_distinct_folded_words_in_decreasing_length(query: str) -> None:
    words = query_words(query)
    assert len(set(words)) == len(words)
    assert all(word and word == fold(word) and not any(c.isspace() for c in word) for word in words)
    assert [len(w) for w in words] == sorted((len(w) for w in words), reverse=True)
    assert set(words) == set(fold(query).split())


# -- a word's FTS5 query ----------------------------------------------------------------------


def test_a_word_asks_for_each_of_its_trigrams_once_quoted_and_anded() -> None:
    assert fts_query("banana") == '"ban" AND "ana" AND "nan"'


def test_a_quote_in_a_word_is_doubled_inside_its_quoted_trigrams() -> None:
    assert fts_query('a"b"c') == '"a""b" AND """b""" AND "b""c"'


def test_a_word_whose_every_trigram_holds_nul_has_no_query() -> None:
    # NUL ends an FTS5 query's text: such trigrams are left out, and with none left the
    # caller reads the word as one no index can answer.
    assert fts_query("a\x00b") is None
    assert fts_query("a\x00bcd") == '"bcd"'


def _grams(query: str) -> list[str]:
    return [part[1:-1].replace('""', '"') for part in query.split(" AND ")]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abcdefghij", min_size=TRIGRAM, max_size=80))
@example("internationalisation")  # 18 trigrams, the first word past the cap
@example("a" * 3 + "bcdefghijklmnopq")  # exactly the cap: 16 trigrams, all of them
def test_a_long_word_asks_for_at_most_16_of_its_trigrams_first_and_last_kept(word: str) -> None:
    every = list(dict.fromkeys(word[i : i + TRIGRAM] for i in range(len(word) - TRIGRAM + 1)))
    query = fts_query(word)
    assert query is not None
    grams = _grams(query)
    assert len(grams) == min(len(every), QUERY_TRIGRAMS)
    assert len(set(grams)) == len(grams)
    assert grams[0] == every[0] and grams[-1] == every[-1]
    positions = [every.index(g) for g in grams]  # each one of the word's, in its order
    assert positions == sorted(positions)
    if len(every) <= QUERY_TRIGRAMS:
        assert grams == every


@pytest.fixture(scope="module")
def index() -> Iterator[sqlite3.Connection]:
    """A table like the mirror's `search` (contentless trigram, detail=none)."""
    conn = sqlite_driver.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE search USING fts5(text, content='', "
        "tokenize='trigram case_sensitive 1', detail=none, columnsize=0)"
    )
    try:
        yield conn
    finally:
        conn.close()


_ROWIDS = itertools.count(1)

#: Characters FTS5's query syntax gives a meaning to, with letters and CJK.
_SYNTAX = string.ascii_letters + string.digits + "\"'*^:()-+.,{}[]\\/_ NEAR 東京é"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_SYNTAX, min_size=1, max_size=30).map(str.strip), st.text(max_size=10))
@example('say"hi', "")
@example("AND OR NOT", "x")
@example("pneumonoultramicroscopicsilicovolcanoconiosis", "")
def test_any_query_word_is_a_valid_fts_query_that_finds_text_holding_it(
    index: sqlite3.Connection, query: str, around: str
) -> None:
    """No word makes an FTS syntax error, and an entry holding it is always a candidate."""
    for word in query_words(query):
        if len(word) < TRIGRAM:
            continue
        rowid = next(_ROWIDS)
        text = fold(f"{around}{word}{around}")
        index.execute("INSERT INTO search (rowid, text) VALUES (?, ?)", (rowid, text))
        found = index.execute(
            "SELECT rowid FROM search WHERE search MATCH ?", (fts_query(word),)
        ).fetchall()
        assert (rowid,) in found, (word, fts_query(word))


def test_an_entry_missing_one_trigram_of_the_word_is_not_a_candidate(
    index: sqlite3.Connection,
) -> None:
    """The trigrams are ANDed: "ecrit" shares "ecr" and "cri" with "ecrire", not "rir"."""
    index.execute("INSERT INTO search (rowid, text) VALUES (?, ?)", (-1, "ecrit le rapport"))
    query = "SELECT rowid FROM search WHERE search MATCH ?"
    assert (-1,) not in index.execute(query, (fts_query("ecrire"),)).fetchall()
    assert (-1,) in index.execute(query, (fts_query("ecrit"),)).fetchall()


# -- the search a query runs ------------------------------------------------------------------


def _view(sid: str, day: int, title: str | None = "t") -> SessionView:
    at = f"2026-01-{day:02d}T00:00:00.000000Z"
    return SessionView(sid, title, "2026-01-01T00:00:00.000000Z", at, None, None)


def _event(sid: str, seq: int, kind: str, data: dict[str, Any]) -> Event:
    return Event(sid, "run_1", seq, kind, "2026-01-01T00:00:00.000000Z", data)


def _message(sid: str, seq: int, text: str) -> Event:
    data = {"role": "user", "content": [{"type": "text", "text": text}]}
    return _event(sid, seq, "message.user", data)


def _store(mirror: Mirror, sid: str, *texts: str) -> None:
    events = [_message(sid, n, text) for n, text in enumerate(texts, start=1)]
    assert mirror.store_events(sid, events, fetched_at=None)


def test_a_hit_carries_its_rows_title_and_activity_in_the_contracts_shape(mirror: Mirror) -> None:
    mirror.apply([_view("ses_a", 3, "Fruit notes")])
    _store(mirror, "ses_a", "gooseberry jam")
    (hit,) = mirror.search("gooseberry")
    assert (hit.id, hit.title, hit.updated_at) == (
        "ses_a",
        "Fruit notes",
        _view("ses_a", 3).updated_at,
    )
    assert hit.to_json() == {
        "id": "ses_a",
        "title": "Fruit notes",
        "updated_at": "2026-01-03T00:00:00.000000Z",
        "snippet": "gooseberry jam",
    }
    assert hit.snippet.to_json() == {"text": "gooseberry jam", "ranges": [[0, 10]]}


@pytest.mark.parametrize(
    "text", ["\udce9", "caf\udce9", "fruit \udce9", "ses_a\udce9", "goose\udce9berry"]
)
def test_text_holding_a_lone_surrogate_matches_nothing(mirror: Mirror, text: str) -> None:
    """A lone surrogate (bytes of a command line that are not UTF-8) is in no title, id or
    message, none of which can hold one: search and the title filter find nothing, as for
    any text no conversation holds, rather than fail to hand it to SQLite."""
    mirror.apply([_view("ses_a", 1, "Fruit notes")])
    _store(mirror, "ses_a", "gooseberry jam")
    assert mirror.search(text, None) == []
    assert mirror.rows(text) == []


def test_a_short_query_shows_the_matching_title_not_a_message(mirror: Mirror) -> None:
    """A query of words under three characters searches titles only, so its snippet is the
    title even where a message holds the word too."""
    mirror.apply([_view("ses_a", 1, "AI notes")])
    _store(mirror, "ses_a", "more about AI here")
    (hit,) = mirror.search("ai")
    assert hit.snippet.text == "AI notes"


def test_the_longest_word_decides_that_messages_are_searched(mirror: Mirror) -> None:
    """A short word beside a long one does not make the query titles-only: the long word
    finds the candidates and the short one is confirmed in their text."""
    mirror.apply([_view("ses_both", 2, "Untitled"), _view("ses_long_only", 1, "Untitled")])
    _store(mirror, "ses_both", "AI and the gooseberry harvest")
    _store(mirror, "ses_long_only", "the gooseberry harvest")
    assert [hit.id for hit in mirror.search("ai gooseberry")] == ["ses_both"]
    assert [hit.id for hit in mirror.search("gooseberry ai")] == ["ses_both"]


def test_every_word_of_a_query_must_occur(mirror: Mirror) -> None:
    mirror.apply([_view("ses_a", 1, "Orchard"), _view("ses_b", 2, None)])
    _store(mirror, "ses_a", "quince", "medlar")
    _store(mirror, "ses_b", "quince only")
    assert [hit.id for hit in mirror.search("quince medlar")] == ["ses_a"]
    assert [hit.id for hit in mirror.search("orchard quince")] == ["ses_a"]
    assert mirror.search("quince medlar orchard sloe") == []


def test_a_search_stops_at_its_limit_in_activity_order_and_none_means_every_hit(
    mirror: Mirror,
) -> None:
    mirror.apply([_view(f"ses_{day}", day) for day in (1, 2, 3)])
    for day in (1, 2, 3):
        _store(mirror, f"ses_{day}", f"gooseberry {day}")
    assert [hit.id for hit in mirror.search("gooseberry", limit=2)] == ["ses_3", "ses_2"]
    assert [hit.id for hit in mirror.search("gooseberry", limit=1)] == ["ses_3"]
    assert [hit.id for hit in mirror.search("gooseberry", limit=None)] == [
        "ses_3",
        "ses_2",
        "ses_1",
    ]


FRUIT = ("fig", "plum", "pear", "kiwi", "lime")
_TEXTS = st.lists(st.sampled_from(FRUIT), min_size=1, max_size=3).map(" ".join)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    conversations=st.lists(st.lists(_TEXTS, min_size=1, max_size=9), min_size=1, max_size=5),
    query=st.lists(st.sampled_from(FRUIT), min_size=1, max_size=2).map(" ".join),
)
def test_hits_and_snippets_are_those_of_reading_every_message_in_order(
    tmp_path_factory: pytest.TempPathFactory, conversations: list[list[str]], query: str
) -> None:
    """A search reads each conversation's first messages, and all of them only when those
    leave it undecided; its hits and snippets are exactly those of reading every message of
    every conversation in order, wherever in them the words are."""
    mirror = Mirror.open(tmp_path_factory.mktemp("every") / "m.sqlite3")
    try:
        mirror.apply([_view(f"ses_{i}", i + 1) for i in range(len(conversations))])
        for i, texts in enumerate(conversations):
            _store(mirror, f"ses_{i}", *texts)
        words = query_words(query)
        expected = {
            f"ses_{i}": found
            for i, texts in enumerate(conversations)
            if (found := confirm("t", words, texts)) is not None
        }
        assert {hit.id: hit.snippet for hit in mirror.search(query, limit=None)} == expected
    finally:
        mirror.close()


@pytest.mark.parametrize(
    "word",
    [
        "internationalisation",  # more trigrams than a query asks for
        "pneumonoultramicroscopicsilicovolcanoconiosis",
        'say"hi',  # characters JSON escapes in the stored event
        "back\\slash",
        "東京都庁",
    ],
)
def test_a_long_or_unusual_word_is_found_in_a_message(mirror: Mirror, word: str) -> None:
    mirror.apply([_view("ses_a", 1), _view("ses_b", 2)])
    _store(mirror, "ses_a", f"before {word} after")
    _store(mirror, "ses_b", "nothing like it")
    (hit,) = mirror.search(word)
    assert hit.id == "ses_a"
    ((lo, hi),) = hit.snippet.ranges
    assert hit.snippet.text[lo:hi] == word


def test_a_tool_output_and_an_artifact_name_are_searched(mirror: Mirror) -> None:
    mirror.apply([_view("ses_tool", 1), _view("ses_file", 2)])
    tool = _event(
        "ses_tool", 1, "tool.invocation", {"tool": "t", "status": "ok", "output": "zebrafish"}
    )
    artifact = _event(
        "ses_file", 1, "artifact.created", {"artifact_id": "art_1", "name": "zebra.pdf"}
    )
    assert mirror.store_events("ses_tool", [tool], fetched_at=None)
    assert mirror.store_events("ses_file", [artifact], fetched_at=None)
    assert [hit.id for hit in mirror.search("zebra")] == ["ses_file", "ses_tool"]


def test_of_equally_good_messages_the_snippet_is_the_earliest(mirror: Mirror) -> None:
    mirror.apply([_view("ses_a", 1)])
    _store(mirror, "ses_a", "apple one", "apple two", "banana three")
    (hit,) = mirror.search("apple banana")
    assert hit.snippet.text == "apple one"


# -- what of an event is searched -------------------------------------------------------------


def test_an_event_without_text_adds_nothing_to_search() -> None:
    assert searchable_text(_event("s", 1, "run.started", {})) == ""
    assert searchable_text(_event("s", 1, "artifact.created", {"artifact_id": "a"})) == ""
    assert (
        searchable_text(_event("s", 1, "artifact.created", {"artifact_id": "a", "name": "n.txt"}))
        == "n.txt"
    )


def test_a_mirrored_row_reads_back_as_its_event_and_bad_data_as_empty() -> None:
    data = {"role": "user", "content": []}
    event = event_of_row(
        "ses_a", 7, "run_1", "message.user", "2026-01-01T00:00:00Z", json.dumps(data)
    )
    assert event == Event("ses_a", "run_1", 7, "message.user", "2026-01-01T00:00:00Z", data)
    for bad in ("not json", "[1, 2]", '"text"', "null"):
        assert event_of_row("ses_a", 1, None, "message.user", "t", bad).data == {}


# -- the snippet of a hit ---------------------------------------------------------------------


def test_no_snippet_when_no_word_occurs() -> None:
    assert snippet("hello world", ["zzz"]) is None
    assert snippet("", ["zzz"]) is None


def test_a_short_text_is_its_own_snippet_with_every_occurrence_marked() -> None:
    shown = snippet("Ecrire, écrire, ÉCRIRE!", ["ecrire"])
    assert shown == Snippet("Ecrire, écrire, ÉCRIRE!", ((0, 6), (8, 14), (16, 22)))


def test_each_occurrence_of_a_one_letter_word_is_marked_even_side_by_side() -> None:
    shown = snippet("a baa", ["a"])
    assert shown is not None
    assert shown.ranges == ((0, 1), (3, 4), (4, 5))


def test_the_snippet_is_around_the_first_match_of_any_word() -> None:
    text = "alpha " + "x" * 200 + " beta alpha"
    for words in (["alpha"], ["beta", "alpha"], ["zzz", "alpha"], ["alpha", "zzz"]):
        shown = snippet(text, words)
        assert shown is not None
        assert shown.text.startswith("alpha ") and shown.text.endswith("…"), words
        assert shown.ranges[0] == (0, 5)


def test_a_cut_is_marked_with_an_ellipsis_at_either_end() -> None:
    context = SNIPPET_CONTEXT
    # The match one character past the context: the window starts at the second character.
    text = "y" + "x" * context + "match" + "z" * (context * 2)
    shown = snippet(text, ["match"])
    assert shown is not None
    assert shown.text == "…" + text[1 : 1 + context * 3] + "…"
    assert shown.text[slice(*shown.ranges[0])] == "match"
    whole = snippet("x" * context + "match", ["match"])
    assert whole is not None and "…" not in whole.text


_snippet_texts = st.text(alphabet="abcXé \n\t\r.ß", max_size=300)


@settings(max_examples=300, deadline=None)
@given(
    text=_snippet_texts,
    words=st.lists(st.sampled_from(["a", "ab", "bca", "x", "ss", "e"]), min_size=1, max_size=3),
)
@example(text="X" * 30 + "abc" + "X" * 200, words=["bca", "x"])
def test_a_snippet_is_a_bounded_one_line_window_of_the_text_whose_ranges_mark_the_words(
    text: str, words: list[str]
) -> None:
    shown = snippet(text, words)
    folded = fold(text)
    if not any(word in folded for word in words):
        assert shown is None
        return
    assert shown is not None
    body = shown.text.removeprefix("…").removesuffix("…")
    lead = len(shown.text) - len(shown.text.removeprefix("…"))
    assert len(body) <= SNIPPET_CONTEXT * 3
    flat = "".join(" " if c in "\r\n\t\v\f" else c for c in text)
    assert body in flat  # the text as it is, line breaks as spaces
    assert "\n" not in shown.text and "\r" not in shown.text
    assert (shown.text != body) == (len(body) < len(text))  # an ellipsis marks a cut
    assert shown.ranges, "the first match is in the window"
    for lo, hi in shown.ranges:
        assert lead <= lo < hi <= lead + len(body)
        assert any(word in fold(shown.text[lo:hi]) for word in words), (lo, hi)
