"""The status line's words."""

from __future__ import annotations

import pytest

from ui.window.status_presenter import OFFLINE, SYNCING, synced_words


@pytest.mark.parametrize(
    ("age", "words"),
    [
        (5, "Synced just now"),
        (59, "Synced just now"),
        (125, "Synced 2 min ago"),
        (7300, "Synced 2 h ago"),
    ],
)
def test_synced_words_follow_the_age_of_the_last_pass(age: float, words: str) -> None:
    assert synced_words(1000.0, now=1000.0 + age) == words


def test_never_synced_says_nothing_and_the_fixed_wordings() -> None:
    assert synced_words(None) == ""
    assert SYNCING == "Syncing…"
    assert OFFLINE == "Offline – showing saved history"
