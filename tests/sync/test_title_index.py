"""Titles and ids are found through their index, exactly as reading every title would find
them, and a search costs the same whatever the number of conversations when nothing
matches (CONTRACT §11, decision 0124)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sync import SearchTooLong
from sync.mirror import sqlite_driver, title_index
from sync.mirror.reader import query_rows
from sync.mirror.schema import add_functions
from sync.mirror.search import MAX_QUERY_WORDS, search
from sync.mirror.search_text import fold, query_words
from sync.mirror.store import Mirror
from sync.mirror.title_filter import fold as filter_fold
from sync.mirror.title_filter import matches_filter
from sync.wire.models import SessionView

FIXTURES = Path(__file__).parent / "fixtures"
STAMP = "2026-01-01T00:00:00.000000Z"
#: Letters that fold differently by the two predicates (accents, ß, ſ, ﬁ, dotted and dotless
#: i, a lone combining accent), CJK and Arabic, and what LIKE would read as syntax.
ALPHABET = "abAB éÉeßsſﬁiİı\u0301東京猫كتب_%\\-.\x00"


def at(n: int) -> str:
    return f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}.000000Z"


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[Mirror]:
    opened = Mirror.open(tmp_path / "m.sqlite3")
    yield opened
    opened.close()


TITLES = st.one_of(st.none(), st.text(ALPHABET, max_size=12))
#: An id's tail by its number: cases and scripts the id index and `LIKE` must agree on.
ID_TAILS = ("", "Ab", "éÉ", "東京猫", "_%\\\x00ab", "İıSS")
#: "page": this conversation and the next two, new or not, in one write; "index": one batch
#: of the pending entries written.
OPS = st.lists(
    st.tuples(
        st.sampled_from(["put", "put", "page", "remove", "index"]), st.integers(0, 5), TITLES
    ),
    min_size=1,
    max_size=14,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS, needles=st.lists(st.text(ALPHABET, min_size=1, max_size=4), max_size=4))
def test_titles_are_found_through_the_index_exactly_as_by_reading_every_title(
    tmp_path_factory: pytest.TempPathFactory,
    ops: list[tuple[str, int, str | None]],
    needles: list[str],
) -> None:
    """Whatever conversations were added (alone, or by pages whose entries are left pending),
    renamed, removed and indexed after: the title filter returns exactly the rows its
    predicate accepts, and a search of titles exactly those holding every word, so the index
    neither misses a title, written or pending, nor keeps one it no longer has."""
    mirror = Mirror.open(tmp_path_factory.mktemp("titles") / "m.sqlite3")
    try:
        with pytest.MonkeyPatch.context() as patch:
            # A write of two new rows leaves them pending; a batch writes two entries.
            patch.setattr(title_index, "INLINE_TITLES", 1)
            patch.setattr(title_index, "PENDING_BATCH", 2)
            for n, (kind, which, title) in enumerate(ops):
                page = range(which, which + 3) if kind == "page" else [which]
                views = [
                    SessionView(f"ses_{k % 6}{ID_TAILS[k % 6]}", title, STAMP, at(n), None, None)
                    for k in page
                ]
                if kind == "remove":
                    mirror.apply((), [views[0].id])
                elif kind == "index":
                    mirror.index_titles()
                else:
                    mirror.apply(views)
        with mirror._writing() as conn:  # every row without its entry is marked pending
            start = title_index.pending_from(conn)
            unwritten = conn.execute(
                "SELECT change_seq FROM sessions s WHERE NOT EXISTS"
                " (SELECT 1 FROM title_rows t WHERE t.session_id = s.id)"
            ).fetchall()
        assert all(start is not None and seq >= start for (seq,) in unwritten), (start, unwritten)
        rows = mirror.rows()
        for needle in [*needles, "ses_1", "S_2", "_1a", "s_4_%", "京猫", "ıss", "\x00AB"]:
            expected = [r.id for r in rows if matches_filter(r.id, r.title, needle)]
            assert [r.id for r in mirror.rows(needle)] == expected, needle
            words = query_words(needle)
            if words:
                found = [hit.id for hit in mirror.search(needle, limit=None)]
                titled = [r.id for r in rows if all(w in fold(r.title or "") for w in words)]
                assert found == titled, needle
    finally:
        mirror.close()


def test_an_id_holding_white_space_is_found_as_its_predicate_finds_it(mirror: Mirror) -> None:
    """Ids are opaque strings (CONTRACT §1): one holding a space or another separator is
    found by pasting it, or a part of it, as `matches_filter` finds it (a filter of more
    than one word asked the title index alone before)."""
    mirror.apply(
        [
            SessionView("ses_2026 Jan", "Lunch", STAMP, at(1), None, None),
            SessionView("ses_b\x1cc d", None, STAMP, at(2), None, None),
            SessionView("ses_c", "jan notes", STAMP, at(3), None, None),
        ]
    )
    rows = mirror.rows()
    for needle in ("ses_2026 Jan", "6 j", "2026 jan", "b\x1cc", "c d", "s_b\x1cc d"):
        expected = [r.id for r in rows if matches_filter(r.id, r.title, needle)]
        assert expected, needle
        assert [r.id for r in mirror.rows(needle)] == expected, needle


def test_a_removed_or_renamed_title_leaves_none_of_its_grams_in_the_index(
    mirror: Mirror, tmp_path: Path
) -> None:
    mirror.apply([SessionView("ses_a", "Rendezvous", STAMP, at(1), None, None)])
    mirror.apply([SessionView("ses_b", "Umzugsplanung", STAMP, at(2), None, None)])
    mirror.apply([SessionView("ses_a", "Lunch", STAMP, at(3), None, None)])
    mirror.apply((), ["ses_b"])
    conn = sqlite_driver.connect(tmp_path / "m.sqlite3")
    try:
        gone = set(title_index.entry_text("Rendezvous Umzugsplanung").split())
        kept = set(title_index.entry_text("Lunch").split())
        for token in gone - kept:
            assert conn.execute(
                "SELECT count(*) FROM search_titles WHERE search_titles MATCH ?", (token,)
            ).fetchone() == (0,), token
        # The id's trigram "s_b" was in ses_b's entry alone; "ses" is in ses_a's too.
        for trigram, left in (("s_b", 0), ("ses", 1)):
            assert conn.execute(
                "SELECT count(*) FROM search_ids WHERE search_ids MATCH ?", (f'"{trigram}"',)
            ).fetchone() == (left,), trigram
    finally:
        conn.close()
    assert mirror.rows("rendez") == [] and mirror.rows("umzug") == []
    assert [r.id for r in mirror.rows("lunch")] == ["ses_a"]


def _steps(path: Path, read: str) -> int:
    """SQLite virtual-machine steps (in hundreds) one read of the mirror at `path` takes."""
    conn = sqlite_driver.connect(path)
    add_functions(conn)
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    conn.set_progress_handler(count, 100)
    try:
        if read == "search":
            search(conn, "zqx", limit=None)
        else:
            query_rows(conn, "zqx")
    finally:
        conn.close()
    return steps[0]


@pytest.mark.parametrize("read", ["search", "filter"])
def test_a_word_no_title_holds_costs_the_same_at_any_number_of_conversations(
    tmp_path: Path, read: str
) -> None:
    """A keystroke that matches nothing reads no title: its cost in SQLite's own steps does
    not grow from 300 conversations to 3,000 (reading every title would grow tenfold)."""
    costs = []
    for count in (300, 3000):
        path = tmp_path / f"m{count}.sqlite3"
        mirror = Mirror.open(path)
        mirror.apply(
            [
                SessionView(f"ses_{i:05d}", f"Réunion budget {i}", STAMP, at(i), None, None)
                for i in range(count)
            ]
        )
        while mirror.index_titles():  # the entries one write of many leaves pending
            pass
        mirror.close()
        costs.append(_steps(path, read))
    assert costs[1] <= costs[0] + 2, costs


def test_a_query_of_more_words_than_a_search_can_hold_is_refused_in_words(
    mirror: Mirror,
) -> None:
    mirror.apply([SessionView("ses_a", "w1 w2", STAMP, at(1), None, None)])
    assert mirror.search(" ".join(f"w{i}" for i in range(MAX_QUERY_WORDS))) == []
    with pytest.raises(SearchTooLong) as refused:
        mirror.search(" ".join(f"word{i}" for i in range(1000)))
    assert str(refused.value) == f"A search can hold at most {MAX_QUERY_WORDS} words."


def test_a_mirror_from_before_the_title_index_finds_its_titles_after_the_upgrade(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.sqlite3"
    shutil.copy(FIXTURES / "mirror_v5.sqlite3", path)
    upgraded = Mirror.open(path)
    try:
        assert [r.id for r in upgraded.rows("ünï")] == ["ses_fixture2"]
        assert [r.id for r in upgraded.rows("question")] == ["ses_fixture0"]
        assert [hit.id for hit in upgraded.search("unicode")] == ["ses_fixture2"]
    finally:
        upgraded.close()


def _entry_gram_by_gram(title: str | None) -> str:
    """`entry_text` as decision 0124 first wrote a title's part, gram by gram, with no
    cache: the reference the cached spelling must equal."""
    grams: dict[str, None] = {}
    head = (title or "")[: title_index.INDEXED_TITLE_CHARS]
    for form in dict.fromkeys((fold(head), str(filter_fold(head)))):
        for piece in form.split():
            digits = piece.encode("utf-32-be", "surrogatepass").hex()
            for size in (1, 2, 3):
                width = 8 * size
                grams.update(
                    dict.fromkeys(
                        digits[i : i + width] for i in range(0, len(digits) + 8 - width, 8)
                    )
                )
    return " ".join(grams)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(st.none(), st.text(ALPHABET + "\ud800 \t\n", max_size=60)),
    st.integers(0, 40),
)
def test_entry_text_spells_every_entry_gram_by_gram(title: str | None, long_word: int) -> None:
    # The same title twice (its words' grams then come from the cache), and a word longer
    # than the cache keeps.
    titles = [title, title, None if title is None else f"{title} {'ab' * long_word}"]
    for each in titles:
        assert title_index.entry_text(each) == _entry_gram_by_gram(each)


def _traced(mirror: Mirror, views: list[SessionView], cursor: str) -> tuple[list[str], int]:
    """The statements of one walk page's write (FTS5's own aside: each executemany row
    counts) and the title entries written after it."""
    traced: list[str] = []
    with mirror._writing() as conn:
        conn.set_trace_callback(traced.append)
    try:
        mirror.apply(views, state={"walk_cursor": cursor}, seen_at=1.0)
    finally:
        with mirror._writing() as conn:
            conn.set_trace_callback(None)
            (entries,) = conn.execute("SELECT count(*) FROM title_rows").fetchone()
    return [s for s in traced if not s.startswith("--")], entries


def test_a_first_sync_page_costs_each_new_row_its_insert_alone_and_its_entry_comes_after(
    mirror: Mirror,
) -> None:
    """A page of many new rows spells no title entry (decision 0238): its rows are found
    meanwhile, by title and by id, and the entries are written after; a write of a few new
    rows writes their entries itself, two statement steps a row."""
    ids = [f'ses_{n:03d}_é"\\\U0001f600' for n in range(250)]
    views = [SessionView(sid, f"Titel {n}", at(n), at(n), None, None) for n, sid in enumerate(ids)]
    statements, entries = _traced(mirror, views[:200], "c1")
    assert len(statements) <= 200 + 12, len(statements)
    assert entries == 0
    statements, entries = _traced(mirror, views[200:], "c2")
    assert len(statements) <= 2 * 50 + 12, len(statements)
    assert entries == 50

    def found_alone() -> None:
        # Ids with quotes, accents and astral characters, found by their title and by their id.
        for n, sid in enumerate(ids):
            by_title = mirror.rows(f"titel {n}")
            assert [row.id for row in by_title if row.title == f"Titel {n}"] == [sid]
            assert [row.id for row in mirror.rows(sid[:9])] == [sid]
            hits = mirror.search(f"Titel {n}", limit=None)
            assert [hit.id for hit in hits if hit.title == f"Titel {n}"] == [sid]

    found_alone()
    assert [mirror.index_titles() for _ in range(2)] == [200, 0]
    found_alone()


def test_a_title_holding_nul_is_found_by_what_follows_it_written_or_pending(
    mirror: Mirror, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite hands a Python function a text cut at its first NUL: search reads a pending
    title as its UTF-8 bytes, so it finds what its written entry finds."""
    monkeypatch.setattr(title_index, "INLINE_TITLES", 0)
    mirror.apply([SessionView("ses_nul", "Plan\x00Été à Kyōto", STAMP, at(1), None, None)])
    for written in (False, True):
        assert [hit.id for hit in mirror.search("kyoto ete")] == ["ses_nul"], written
        assert [row.id for row in mirror.rows("été")] == ["ses_nul"], written
        assert mirror.index_titles() == (0 if written else 1)
