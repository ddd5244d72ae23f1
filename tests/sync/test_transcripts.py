"""Mirrored transcripts and search over them (CONTRACT §11), on a real mirror file."""

from __future__ import annotations

from pathlib import Path

import pytest

from sync.mirror import sqlite_driver
from sync.mirror.store import Mirror
from sync.wire.models import Event, SessionView


def view(sid: str, updated: str, title: str | None = "t") -> SessionView:
    return SessionView(sid, title, "2026-01-01T00:00:00.000000Z", updated, None, None)


def message(sid: str, seq: int, text: str, kind: str = "message.user") -> Event:
    data = {"role": "user", "content": [{"type": "text", "text": text}]}
    return Event(sid, "run_1", seq, kind, "2026-01-01T00:00:00.000000Z", data)


def test_stored_events_read_back_in_sequence_order_and_repeats_are_ignored(
    mirror: Mirror,
) -> None:
    mirror.apply([view("ses_a", "2026-01-02T00:00:00.000000Z")])
    assert mirror.store_events("ses_a", [message("ses_a", 1, "one")], fetched_at=None)
    stored = [message("ses_a", 1, "one again"), message("ses_a", 2, "two")]
    assert mirror.store_events("ses_a", stored, fetched_at="2026-01-02T00:00:00.000000Z")
    events = mirror.transcript("ses_a")
    assert [(e.sequence, e.data["content"][0]["text"]) for e in events] == [
        (1, "one"),
        (2, "two"),
    ]
    state = mirror.transcript_state("ses_a")
    assert state is not None and state.up_to == 2 and state.current
    assert mirror.stale_transcripts(10) == []


def test_a_pane_pulls_only_the_events_after_the_last_sequence_it_shows(mirror: Mirror) -> None:
    mirror.apply([view("ses_a", "2026-01-02T00:00:00.000000Z")])
    stored = [message("ses_a", n, f"turn {n}") for n in (1, 2, 3)]
    mirror.store_events("ses_a", stored, fetched_at="2026-01-02T00:00:00.000000Z")
    after_two = mirror.mirrored_transcript("ses_a", after=2)
    assert [e.sequence for e in after_two.events] == [3]
    assert after_two.state is not None and after_two.state.up_to == 3
    assert [e.sequence for e in mirror.mirrored_transcript("ses_a").events] == [1, 2, 3]


def test_a_conversation_whose_row_moved_is_stale_and_newest_come_first(mirror: Mirror) -> None:
    mirror.apply(
        [view("ses_old", "2026-01-01T00:00:00.000000Z"), view("ses_new", "2026-01-05T00:00:00Z")]
    )
    assert [s.session_id for s in mirror.stale_transcripts(10)] == ["ses_new", "ses_old"]
    mirror.store_events("ses_old", [], fetched_at="2026-01-01T00:00:00.000000Z")
    assert [s.session_id for s in mirror.stale_transcripts(10)] == ["ses_new"]
    mirror.apply([view("ses_old", "2026-01-09T00:00:00.000000Z")])
    assert [s.session_id for s in mirror.stale_transcripts(10)] == ["ses_old", "ses_new"]


def test_events_for_a_conversation_no_longer_mirrored_are_not_stored(mirror: Mirror) -> None:
    assert not mirror.store_events("ses_gone", [message("ses_gone", 1, "x")], fetched_at=None)
    assert mirror.transcript("ses_gone") == []


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("ecrire", ["ses_fr"]),
        ("ÉCRIRE", ["ses_fr"]),
        ("東京都", ["ses_ja"]),
        ("京都の天", ["ses_ja"]),
        ("Ünicode", ["ses_title"]),
        ("banana", ["ses_fr", "ses_en"]),
        ("banana écrire", ["ses_fr"]),
        ("nothing-like-it", []),
    ],
)
@pytest.mark.parametrize("batched", [True, False], ids=["entry-per-fetch", "entry-per-event"])
def test_search_finds_words_case_and_accent_insensitively_in_activity_order(
    mirror: Mirror, query: str, expected: list[str], batched: bool
) -> None:
    """One index entry per stored batch: the same hits whether a conversation's events
    came in one fetch (one entry) or one by one (an entry each)."""
    mirror.apply(
        [
            view("ses_en", "2026-01-01T00:00:00.000000Z", "English"),
            view("ses_fr", "2026-01-02T00:00:00.000000Z", "French"),
            view("ses_ja", "2026-01-03T00:00:00.000000Z", "Japanese"),
            view("ses_title", "2026-01-04T00:00:00.000000Z", "ünicode in the title"),
        ]
    )
    mirror.store_events("ses_en", [message("ses_en", 1, "A banana split")], fetched_at=None)
    french = [message("ses_fr", 1, "Il faut Écrire."), message("ses_fr", 2, "banana")]
    for batch in [french] if batched else [[event] for event in french]:
        mirror.store_events("ses_fr", batch, fetched_at=None)
    mirror.store_events("ses_ja", [message("ses_ja", 1, "東京都の天気は晴れ")], fetched_at=None)
    assert [hit.id for hit in mirror.search(query)] == expected


def test_a_snippet_is_plain_text_with_the_matched_ranges_as_offsets(mirror: Mirror) -> None:
    mirror.apply([view("ses_a", "2026-01-02T00:00:00.000000Z")])
    text = "Line one\nthen <b>Écrire</b> the report"
    mirror.store_events("ses_a", [message("ses_a", 1, text)], fetched_at=None)
    (hit,) = mirror.search("ecrire")
    assert "\n" not in hit.snippet.text and "<b>Écrire</b>" in hit.snippet.text
    ((start, end),) = hit.snippet.ranges
    assert hit.snippet.text[start:end] == "Écrire"
    assert hit.to_json()["snippet"] == hit.snippet.text


def test_the_snippet_comes_from_the_message_holding_the_most_words_of_the_query(
    mirror: Mirror,
) -> None:
    """The first message holding any word gave the snippet: a search for two words showed
    a line with one of them while a later message held both."""
    mirror.apply([view("ses_a", "2026-01-02T00:00:00.000000Z")])
    texts = ["the gooseberry harvest", "nothing here", "gooseberry jam with quince", "quince"]
    events = [message("ses_a", n, text) for n, text in enumerate(texts, start=1)]
    mirror.store_events("ses_a", events, fetched_at=None)
    (hit,) = mirror.search("quince gooseberry")
    assert hit.snippet.text == "gooseberry jam with quince"
    assert len(hit.snippet.ranges) == 2


def test_a_short_query_searches_titles_only(mirror: Mirror) -> None:
    mirror.apply(
        [
            view("ses_a", "2026-01-01T00:00:00.000000Z", "AI notes"),
            view("ses_b", "2026-01-02T00:00:00.000000Z", "Other"),
        ]
    )
    mirror.store_events("ses_b", [message("ses_b", 1, "about AI")], fetched_at=None)
    assert [hit.id for hit in mirror.search("ai")] == ["ses_a"]


def test_removing_a_conversation_takes_its_events_and_search_entries(mirror: Mirror) -> None:
    mirror.apply(
        [view("ses_a", "2026-01-01T00:00:00.000000Z"), view("ses_b", "2026-01-02T00:00:00Z")]
    )
    mirror.store_events("ses_a", [message("ses_a", 1, "zebracorn one")], fetched_at=None)
    mirror.store_events("ses_b", [message("ses_b", 1, "zebracorn two")], fetched_at=None)
    mirror.apply((), ["ses_a"])
    assert [hit.id for hit in mirror.search("zebracorn")] == ["ses_b"]
    assert mirror.transcript("ses_a") == []
    assert mirror.transcript_state("ses_a") is None


@pytest.mark.parametrize("how", ["deleted", "evicted"])
def test_a_conversation_stored_in_several_fetches_leaves_no_index_term_when_removed(
    mirror: Mirror, tmp_path: Path, how: str
) -> None:
    """Each fetch is its own index entry; its removal gives back exactly the text it was
    indexed with (a wrong text would leave the entry's trigrams matching in the index)."""
    mirror.apply([view("ses_a", "2026-01-01T00:00:00.000000Z")])
    mirror.store_events("ses_a", [message("ses_a", 1, "Zébracorn uno")], fetched_at=None)
    mirror.store_events(
        "ses_a",
        [
            message("ses_a", 1, "a repeat, ignored"),
            message("ses_a", 2, "", kind="run.started"),
            message("ses_a", 3, "quagga\ndos"),
            message("ses_a", 4, "tres 東京都"),
        ],
        fetched_at=None,
    )
    assert [hit.id for hit in mirror.search("quagga zebracorn")] == ["ses_a"]
    if how == "deleted":
        mirror.apply((), ["ses_a"])
    else:
        assert mirror.evict_over_budget(0)[0] == ["ses_a"]
    conn = sqlite_driver.connect(tmp_path / "m.sqlite3")
    try:
        for gram in ("zeb", "uno", "qua", "dos", "tre", "東京都"):
            query = f'"{gram}"'
            assert conn.execute(
                "SELECT count(*) FROM search WHERE search MATCH ?", (query,)
            ).fetchone() == (0,)
        for gram in ("東", "東京", "京都"):  # the short index's entries went with them
            query = f'"{gram}"'
            assert conn.execute(
                "SELECT count(*) FROM search_short WHERE search_short MATCH ?", (query,)
            ).fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM search_rows").fetchone() == (0,)
    finally:
        conn.close()
    assert mirror.search("quagga") == []


def test_eviction_drops_the_least_recently_active_transcripts_and_keeps_rows(
    mirror: Mirror,
) -> None:
    mirror.apply([view(f"ses_{i}", f"2026-01-0{i + 1}T00:00:00.000000Z") for i in range(3)])
    for i in range(3):
        stamp = f"2026-01-0{i + 1}T00:00:00.000000Z"
        mirror.store_events(f"ses_{i}", [message(f"ses_{i}", 1, "x" * 1000)], fetched_at=stamp)
    evicted, _files = mirror.evict_over_budget(2500)
    assert evicted == ["ses_0"]
    assert mirror.count() == 3
    state = mirror.transcript_state("ses_0")
    assert state is not None and state.evicted and state.up_to == 0
    assert mirror.stale_transcripts(10) == []  # unchanged: fetched again only on demand
