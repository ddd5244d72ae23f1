"""`converge search` reads every hit (`Mirror.search(query, None)`) without parsing or folding
what cannot match, and finds exactly what reading every event of every conversation finds
(CONTRACT §11, decision 0225).

The reference here reads the mirror the plain way: every conversation in activity order,
every event parsed, each event's data and text folded whole, the snippet's text folded
character by character. It is today's search written out, so the search's shortcuts (SQL
that sifts events, data left unfolded, the first text read first, a snippet from a prefix)
must give the same hits, in the same order, with the same snippets, over text in several
scripts, cases and normal forms."""

from __future__ import annotations

import json
import unicodedata
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import sync.mirror.search as search_module
import sync.mirror.search_text as search_text
from sync.mirror import sqlite_driver
from sync.mirror.schema import add_functions
from sync.mirror.search_text import (
    SNIPPET_CONTEXT,
    TRIGRAM,
    Snippet,
    compiled,
    event_of_row,
    fold,
    fold_with_offsets,
    is_short_word,
    query_words,
    snippet,
    text_of,
    text_of_json,
)
from sync.mirror.store import Mirror
from sync.wire.models import Event, SessionView
from sync.wire.payloads import (
    ArtifactCreated,
    AssistantMessage,
    ToolInvocation,
    UserMessage,
    payload_of,
)

# -- the reference: every event read, parsed and folded ---------------------------------------


def _fold_char(char: str) -> str:
    return str(compiled(r"\p{Mn}+").sub("", unicodedata.normalize("NFKD", char))).casefold()


def _reference_offsets(text: str) -> tuple[str, list[int]]:
    pieces = [_fold_char(char) for char in text]
    origin = [index for index, piece in enumerate(pieces) for _ in piece]
    return "".join(pieces), origin


def _reference_snippet(text: str, words: Sequence[str]) -> Snippet | None:
    """The snippet as the whole text folded character by character gives it."""
    folded, origin = _reference_offsets(text)
    found = [at for word in words if (at := folded.find(word)) >= 0]
    if not found:
        return None
    first = origin[min(found)]
    start, end = max(0, first - SNIPPET_CONTEXT), min(len(text), first + SNIPPET_CONTEXT * 2)
    lowest, highest = bisect_left(origin, start), bisect_left(origin, end)
    ranges = set()
    for word in words:
        at = folded.find(word, lowest, highest)
        while at >= 0:
            lo, hi = origin[at], origin[at + len(word) - 1] + 1
            if hi <= end:
                ranges.add((lo - start, hi - start))
            at = folded.find(word, at + len(word), highest)
    window = "".join(" " if c in "\r\n\t\v\f" else c for c in text[start:end])
    shift = 1 if start > 0 else 0
    return Snippet(
        ("…" if start else "") + window + ("…" if end < len(text) else ""),
        tuple((lo + shift, hi + shift) for lo, hi in sorted(ranges)),
    )


def _reference_text(event: Event) -> str:
    """What search always read of an event: its typed payload's text."""
    match payload_of(event):
        case UserMessage(message=message) | AssistantMessage(message=message):
            return message.text
        case ToolInvocation() as tool:
            return tool.output_text
        case ArtifactCreated(name=name):
            return name or ""
    return ""


def _reference_confirm(title: str | None, words: Sequence[str], texts: list[str]) -> Any:
    missing = {word for word in words if word not in fold(title or "")}
    best, count = "", 0
    for text in texts:
        present = {word for word in words if word in fold(text)}
        missing -= present
        if len(present) > count:
            best, count = text, len(present)
        if not missing and count:
            break
    if missing:
        return None
    return _reference_snippet(best if count else title or "", words)


def _reference_search(path: Path, query: str) -> list[tuple[str, Snippet]]:
    """Every conversation in activity order, every text event of it parsed (an event whose
    folded data holds no word of the query skipped, as search always did)."""
    words = query_words(query)
    if not words:
        return []
    titles_only = not any(len(word) >= TRIGRAM or is_short_word(word) for word in words)
    sifted = not any(c in '"\\' or ord(c) < 0x20 for word in words for c in word)
    conn = sqlite_driver.connect(path)
    hits = []
    try:
        sessions = conn.execute(
            "SELECT id, title FROM sessions ORDER BY updated_at DESC, id DESC"
        ).fetchall()
        for session_id, title in sessions:
            texts = []
            if not titles_only:
                for row in conn.execute(
                    "SELECT session_id, sequence, run_id, type, created_at, data FROM events"
                    " WHERE session_id = ? ORDER BY sequence",
                    (session_id,),
                ):
                    if sifted and not any(word in fold(row[5]) for word in words):
                        continue
                    if text := _reference_text(event_of_row(*row)):
                        texts.append(text)
            if (found := _reference_confirm(title, words, texts)) is not None:
                hits.append((session_id, found))
    finally:
        conn.close()
    return hits


# -- a corpus in several scripts ----------------------------------------------------------------

#: Pieces of text: case, accents composed and not, ß and ligatures, full- and half-width
#: forms, Japanese with voiced kana, Chinese, Arabic with and without its marks, Latin-1's
#: odd folds (µ, ½), what JSON escapes, SQL pattern characters (% and _), a line break.
PIECES = [
    "the",
    "The",
    "THE",
    "report",
    "Réunion",
    "re\u0301union",
    "RÉUNION",
    "ÉCRIRE",
    "déjà",
    "straße",
    "STRASSE",
    "ﬁne",
    "Ａｂｃ",
    "会議",
    "会議室",
    "東京都の天気は晴れです",
    "がっこう",
    "ｶﾞｯｺｳ",
    "كتاب",
    "كِتَاب",
    "µg",
    "½",
    "50%_off",
    'say"hi',
    "back\\slash",
    "line\nbreak",
    "tab\there",
    "x" * 120,
]
QUERIES = [
    "the",
    "report",
    "reunion",
    "Réunion",
    "ecrire deja",
    "strasse",
    "fine",
    "abc",
    "会議",
    "会",
    "議",
    "東京都",
    "晴",
    "がっこう",
    "かっこう",
    "كتاب",
    "μg",
    "1⁄2",
    "50%_off",
    "50%",
    "a_c",
    'say"hi',
    "back\\slash",
    "ai",
    "zzz",
    "the 会議",
    "report réunion",
    "line break",
]

_text = st.lists(st.sampled_from(PIECES), min_size=1, max_size=40).map(" ".join)
_joined = st.lists(st.sampled_from(PIECES), min_size=1, max_size=6).map("".join)
_message = st.one_of(_text, _joined)
_data = st.one_of(
    _message.map(lambda t: {"role": "user", "content": [{"type": "text", "text": t}]}),
    _message.map(lambda t: {"content": t}),
    st.lists(_message, min_size=1, max_size=3).map(
        lambda ts: (
            {"content": [{"type": "image", "media_type": "image/png"}]}
            | {"content": [{"type": "text", "text": t} for t in ts]}
        )
    ),
    st.lists(_message, min_size=2, max_size=3).map(
        lambda ts: {
            "content": [{"type": "text", "text": ts[0]}, {"type": "image"}]
            + [{"type": "text", "text": t} for t in ts[1:]]
        }
    ),
)
_event: st.SearchStrategy[tuple[str, Any]] = st.one_of(
    st.tuples(st.sampled_from(["message.user", "message.assistant"]), _data),
    st.tuples(
        st.just("tool.invocation"),
        st.one_of(_message, st.dictionaries(st.sampled_from(["a", "b"]), _message)).map(
            lambda out: {"tool": "t", "status": "ok", "output": out}
        ),
    ),
    st.tuples(
        st.just("artifact.created"), _message.map(lambda n: {"artifact_id": "art", "name": n})
    ),
    st.tuples(st.just("run.started"), st.just({})),
)
_conversation = st.tuples(
    st.one_of(st.none(), st.sampled_from(PIECES)),
    st.lists(st.lists(_event, min_size=1, max_size=5), min_size=1, max_size=3),
)


def _fill(mirror: Mirror, conversations: list[tuple[str | None, list[list[Any]]]]) -> None:
    """Each conversation's events stored in batches, as fetches store them."""
    views = []
    for n, (title, _batches) in enumerate(conversations):
        at = f"2026-01-01T00:00:{n % 60:02d}.{n:06d}Z"
        views.append(SessionView(f"ses_{n:03d}", title, at, at, None, None))
    mirror.apply(views)
    for n, (_title, batches) in enumerate(conversations):
        sequence = 0
        for batch in batches:
            events = []
            for kind, data in batch:
                sequence += 1
                events.append(Event(f"ses_{n:03d}", "run_1", sequence, kind, "t", data))
            assert mirror.store_events(f"ses_{n:03d}", events, fetched_at=None)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(conversations=st.lists(_conversation, min_size=1, max_size=8))
def test_every_hit_and_snippet_is_that_of_reading_every_event(
    tmp_path_factory: pytest.TempPathFactory, conversations: list[Any]
) -> None:
    path = tmp_path_factory.mktemp("every") / "m.sqlite3"
    mirror = Mirror.open(path)
    try:
        _fill(mirror, conversations)
        for query in QUERIES:
            found = [(hit.id, hit.snippet) for hit in mirror.search(query, None)]
            assert found == _reference_search(path, query), query
    finally:
        mirror.close()


@pytest.mark.parametrize("word", ["a" * 60_000, "_" * 30_000, "Ab%" * 20_000])
def test_a_word_longer_than_sqlites_like_patterns_is_still_found(tmp_path: Path, word: str) -> None:
    # SQLite refuses a LIKE pattern over 50,000 bytes ("LIKE or GLOB pattern too complex"),
    # which read as a damaged mirror.
    mirror = Mirror.open(tmp_path / "m.sqlite3")
    try:
        text = f"log: {word} end"
        message = {"role": "user", "content": [{"type": "text", "text": text}]}
        _fill(mirror, [("t", [[["message.user", message]]]), ("u", [[["message.user", {}]]])])
        hits = mirror.search(word, None)
        assert [hit.id for hit in hits] == ["ses_000"]
        assert hits[0].snippet == _reference_snippet(text, [word.lower()])
    finally:
        mirror.close()


# -- the pieces on their own --------------------------------------------------------------------

_ALPHABET = 'abcXyz é\u0301ßﬁİıµ½Ａ会議東京がｶﾞكِتاب\n\t"\\%_.'


@settings(max_examples=400, deadline=None)
@given(
    text=st.text(_ALPHABET, max_size=1500),
    words=st.lists(
        st.sampled_from(["a", "ab", "bca", "x", "ss", "e", "会議", "كتاب", "fi"]),
        min_size=1,
        max_size=3,
    ),
)
@example(text="y" * 300 + "abc" + "z" * 300, words=["bca", "abc"])
@example(text="z" * 250 + "ab" + "c" * 5, words=["abcc", "b"])  # a longer word from before
@example(text="z" * 230 + "ab" + "c" * 100, words=["ab"])  # the window past the prefix
def test_a_snippet_is_that_of_folding_the_whole_text(text: str, words: list[str]) -> None:
    """The snippet folds as much of a long text as its window needs, character by
    character at C speed: it is the one folding the whole text gives."""
    assert snippet(text, words) == _reference_snippet(text, words)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200) | st.text(_ALPHABET, max_size=200))
def test_folding_with_offsets_is_folding_character_by_character(text: str) -> None:
    folded, origin = fold_with_offsets(text)
    assert (folded, list(origin)) == _reference_offsets(text)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)


@settings(max_examples=400, deadline=None)
@given(
    kind=st.sampled_from(
        ["message.user", "message.assistant", "tool.invocation", "artifact.created", "run.started"]
    ),
    data=st.one_of(
        _data,
        st.dictionaries(st.sampled_from(["content", "text", "type", "name", "output"]), _json),
        st.builds(
            lambda c: {"content": c},
            st.lists(
                st.dictionaries(
                    st.sampled_from(["type", "text"]),
                    st.sampled_from(["text", "image", 3, None, "x"]),
                ),
                max_size=2,
            ),
        ),
    ),
)
def test_an_events_text_is_read_without_an_event_as_with_one(kind: str, data: Any) -> None:
    """`text_of` reads the usual message straight from its data: the same text the payload
    gives, for any data."""
    event = Event("ses_a", None, 1, kind, "t", data)
    assert text_of(kind, data) == _reference_text(event)


_plain = st.tuples(
    st.sampled_from(["user", "assistant", "system"]), st.text(max_size=60) | _message
).map(lambda rt: {"role": rt[0], "content": [{"type": "text", "text": rt[1]}]})


def _parsed(stored: str) -> Any:
    try:
        parsed = json.loads(stored)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


@settings(max_examples=500, deadline=None)
@given(
    kind=st.sampled_from(["message.user", "message.assistant", "tool.invocation"]),
    data=_plain | _data | _json,
    ascii_only=st.booleans(),
)
def test_an_events_text_from_its_json_is_that_of_its_parsed_data(
    kind: str, data: Any, ascii_only: bool
) -> None:
    """`text_of_json` cuts the usual message's text out of the stored JSON: the text
    parsing it gives, whatever the text holds and however the JSON was written."""
    stored = json.dumps(data, ensure_ascii=ascii_only)
    assert text_of_json(kind, stored) == text_of(kind, _parsed(stored))


_HEAD = '{"role": "user", "content": [{"type": "text", "text": "'


@settings(max_examples=500, deadline=None)
@given(
    raw=st.one_of(
        st.text(max_size=40).map(lambda t: _HEAD + t + '"}]}'),
        st.text(max_size=40).map(lambda t: _HEAD + t),
        st.text(' \t\n"{}[]1a', max_size=12).map(lambda t: t + '{"a": 1}' + t),
        st.text(max_size=20),
    )
)
def test_an_events_text_from_any_stored_string_is_that_of_json_loads(raw: str) -> None:
    """Data the mirror would never write (unescaped quotes or control characters, text
    around the object, no object) reads as `json.loads` reads it."""
    assert text_of_json("message.user", raw) == text_of("message.user", _parsed(raw))


# -- what a search reads ------------------------------------------------------------------------


class _Recording:
    """The mirror's connection, counting the event rows SQLite hands the search."""

    def __init__(self, conn: sqlite_driver.Connection) -> None:
        self.conn = conn
        self.event_rows = 0

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> Any:
        rows = self.conn.execute(sql, parameters).fetchall()
        if sql.startswith("SELECT e.session_id"):
            self.event_rows += len(rows)
        return _Rows(rows)


class _Rows(list[Any]):
    def fetchall(self) -> list[Any]:
        return list(self)

    def fetchone(self) -> Any:
        return self[0] if self else None


def _user_message(sid: str, seq: int, text: str) -> Event:
    data = {"role": "user", "content": [{"type": "text", "text": text}]}
    return Event(sid, "run_1", seq, "message.user", "t", data)


@pytest.fixture
def history(tmp_path: Path) -> Iterator[_Recording]:
    """40 conversations of 6 messages: the first names a fruit, the next four are French,
    the last holds a Japanese word; a connection to them that counts the rows it reads."""
    path = tmp_path / "m.sqlite3"
    mirror = Mirror.open(path)
    try:
        views = []
        for n in range(40):
            at = f"2026-01-01T00:00:{n:02d}.000000Z"
            views.append(SessionView(f"ses_{n:02d}", "Notes", at, at, None, None))
        mirror.apply(views)
        for n in range(40):
            sid = f"ses_{n:02d}"
            texts = ["gooseberry jam", *["la réunion a été déplacée"] * 4, "明日の会議"]
            events = [_user_message(sid, seq, text) for seq, text in enumerate(texts, 1)]
            assert mirror.store_events(sid, events, fetched_at=None)
    finally:
        mirror.close()
    conn = sqlite_driver.connect(path)
    add_functions(conn)
    try:
        yield _Recording(conn)
    finally:
        conn.close()


def test_a_word_in_every_first_message_reads_one_event_per_hit(history: _Recording) -> None:
    hits = search_module.search(history, "gooseberry", None)  # type: ignore[arg-type]
    assert [hit.snippet.text for hit in hits] == ["gooseberry jam"] * 40
    assert history.event_rows == 40


def test_data_of_latin_letters_is_never_folded_for_a_japanese_word(
    history: _Recording, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A word with a character no fold of Latin-1 gives (会議) cannot be in French text, so
    those events are neither folded nor parsed; one in ASCII is not even handed over."""
    folded: list[str] = []

    def recording_fold(text: str) -> str:
        folded.append(text)
        return fold(text)

    monkeypatch.setattr(search_module, "fold", recording_fold)
    hits = search_module.search(history, "会議", None)  # type: ignore[arg-type]
    assert [hit.snippet.text for hit in hits] == ["明日の会議"] * 40
    assert not [text for text in folded if "réunion" in text or "gooseberry" in text]
    assert history.event_rows == 40 * 5  # the first message, in ASCII, stays in SQLite


def test_the_usual_message_is_read_without_parsing_its_json(
    history: _Recording, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A message of one text block holding nothing JSON escapes is cut out of the stored
    JSON: no event of the history is parsed."""
    parsed: list[str] = []
    for module in (search_module, search_text):
        if (data_of := getattr(module, "data_of", None)) is not None:

            def recording(data: str, data_of: Any = data_of) -> Any:
                parsed.append(data)
                return data_of(data)

            monkeypatch.setattr(module, "data_of", recording)
    hits = search_module.search(history, "gooseberry", None)  # type: ignore[arg-type]
    assert len(hits) == 40
    hits = search_module.search(history, "会議", None)  # type: ignore[arg-type]
    assert len(hits) == 40
    assert parsed == []


def test_titles_holding_nul_are_found_past_the_conversations_walked_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past `DIRECT_WALK` conversations, SQL sifts the titles for words every conversation
    holds: a title is folded there as its UTF-8 bytes, as the title filter folds it, since
    SQLite cuts a text at NUL where it hands it to Python or to `length()` and `GLOB` (a
    hostile server's title lost the hit)."""
    monkeypatch.setattr(search_module, "DIRECT_WALK", 2)
    monkeypatch.setattr(search_module, "DRIVE_LIMIT", 1)
    titles = ["Éclair a", "Éclair b", "Éclair c", "x\x00Éclair", "y\x00ÉCLAIR", "z\x00eclair"]
    mirror = Mirror.open(tmp_path / "m.sqlite3")
    try:
        _fill(mirror, [(title, []) for title in titles])
        hits = mirror.search("eclair", None)
        assert [hit.title for hit in hits] == titles[::-1]
    finally:
        mirror.close()
