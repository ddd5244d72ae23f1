"""One- and two-character words of scripts written without spaces (Chinese, Japanese, Thai)
are found in message text, offline, as longer words are (CONTRACT §11, decision 0123)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sync.mirror import sqlite_driver
from sync.mirror.schema import SCHEMA_VERSION
from sync.mirror.search_text import fold, short_grams
from sync.mirror.store import Mirror
from sync.wire.models import Event, SessionView

STAMP = "2026-01-01T00:00:00.000000Z"


def view(sid: str, updated: str, title: str | None = "t") -> SessionView:
    return SessionView(sid, title, STAMP, updated, None, None)


def message(sid: str, seq: int, text: str) -> Event:
    data = {"role": "user", "content": [{"type": "text", "text": text}]}
    return Event(sid, "run_1", seq, "message.user", STAMP, data)


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[Mirror]:
    opened = Mirror.open(tmp_path / "m.sqlite3")
    yield opened
    opened.close()


def test_a_two_character_japanese_word_inside_a_message_is_found_offline(
    mirror: Mirror,
) -> None:
    mirror.apply(
        [
            view("ses_a", "2026-01-01T00:00:01.000000Z", "旅行"),
            view("ses_b", "2026-01-01T00:00:02.000000Z", "Work"),
        ]
    )
    mirror.store_events(
        "ses_a", [message("ses_a", 1, "京都の紅葉はきれいでした。猫も。")], fetched_at=None
    )
    mirror.store_events("ses_b", [message("ses_b", 1, "明日の会議は東京タワーで")], fetched_at=None)
    assert [hit.id for hit in mirror.search("紅葉")] == ["ses_a"]
    assert [hit.id for hit in mirror.search("会議")] == ["ses_b"]
    assert [hit.id for hit in mirror.search("猫")] == ["ses_a"]  # one character
    assert [hit.id for hit in mirror.search("京")] == ["ses_b", "ses_a"]  # activity order
    assert [hit.id for hit in mirror.search("紅葉 猫")] == ["ses_a"]  # every word
    assert mirror.search("紅葉 会議") == []
    assert mirror.search("犬") == []
    (hit,) = mirror.search("紅葉")
    assert hit.snippet.text == "京都の紅葉はきれいでした。猫も。"
    assert hit.snippet.ranges == ((3, 5),)


def test_a_short_word_of_a_spaced_script_still_searches_titles_only(mirror: Mirror) -> None:
    """Latin words shorter than a trigram ("AI") match titles, not every message."""
    mirror.apply([view("ses_a", "2026-01-01T00:00:01.000000Z", "Other")])
    mirror.store_events("ses_a", [message("ses_a", 1, "about AI and 東京")], fetched_at=None)
    assert mirror.search("ai") == []
    assert [hit.id for hit in mirror.search("ai 東京")] == ["ses_a"]  # confirmed in the text


UNSPACED = "東京都紅葉会議猫犬のはでにがガタワー日本語中文ไทยภาษา"
MESSAGE = st.text(alphabet=UNSPACED + "ab .、。", min_size=1, max_size=40)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    texts=st.lists(MESSAGE, min_size=1, max_size=4), query=st.text(UNSPACED, min_size=1, max_size=2)
)
def test_any_one_or_two_unspaced_characters_are_found_exactly_where_they_occur(
    tmp_path_factory: pytest.TempPathFactory, texts: list[str], query: str
) -> None:
    """Whatever the messages and the query: a conversation is a hit when, and only when,
    the folded query occurs in the folded text of one of its messages or in its title."""
    folder = tmp_path_factory.mktemp("short")
    mirror = Mirror.open(folder / "m.sqlite3")
    try:
        mirror.apply(
            [view(f"ses_{i}", f"2026-01-01T00:00:0{i}.000000Z", "t") for i in range(len(texts))]
        )
        for i, text in enumerate(texts):
            mirror.store_events(f"ses_{i}", [message(f"ses_{i}", 1, text)], fetched_at=None)
        word = fold(query)
        expected = {f"ses_{i}" for i, text in enumerate(texts) if word in fold(text)}
        assert {hit.id for hit in mirror.search(query, limit=None)} == expected
    finally:
        mirror.close()


def test_a_removed_conversation_leaves_no_short_gram_in_the_index(
    mirror: Mirror, tmp_path: Path
) -> None:
    mirror.apply([view("ses_a", "2026-01-01T00:00:01.000000Z")])
    mirror.store_events("ses_a", [message("ses_a", 1, "紅葉狩り")], fetched_at=None)
    mirror.store_events("ses_a", [message("ses_a", 2, "猫と犬")], fetched_at=None)
    mirror.apply((), ["ses_a"])
    conn = sqlite_driver.connect(tmp_path / "m.sqlite3")
    try:
        for gram in short_grams("紅葉狩り 猫と犬").split():
            assert conn.execute(
                "SELECT count(*) FROM search_short WHERE search_short MATCH ?", (f'"{gram}"',)
            ).fetchone() == (0,)
    finally:
        conn.close()
    assert mirror.search("紅葉") == [] and mirror.search("猫") == []


def test_a_mirror_from_before_the_short_index_finds_short_words_after_its_upgrade(
    tmp_path: Path,
) -> None:
    """The step that adds the index fills it from the events already mirrored."""
    path = tmp_path / "m.sqlite3"
    mirror = Mirror.open(path)
    mirror.apply([view("ses_a", "2026-01-01T00:00:01.000000Z")])
    mirror.store_events("ses_a", [message("ses_a", 1, "東京の会議")], fetched_at=None)
    mirror.close()
    conn = sqlite3.connect(path, isolation_level=None)  # as the previous version left it
    for table in ("search_ids", "search_titles", "title_rows", "search_short"):  # steps 4 on
        conn.execute(f"DROP TABLE {table}")
    conn.execute("PRAGMA user_version=4")
    conn.close()
    upgraded = Mirror.open(path)
    try:
        assert upgraded.schema_version() == SCHEMA_VERSION
        assert [hit.id for hit in upgraded.search("会議")] == ["ses_a"]
    finally:
        upgraded.close()
