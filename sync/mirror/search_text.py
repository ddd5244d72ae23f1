"""What of an event is searchable, and the folding that makes search case- and
accent-insensitive (CONTRACT §11, decision 0121).

The index (`sync.mirror.transcripts`) holds `fold(searchable_text(event))` of each event, one
entry per stored batch of a conversation's events, in a contentless FTS5 trigram table.
Folding happens here, in Python, rather than in the tokenizer: trigram's `remove_diacritics`
needs SQLite 3.45, and one definition serves the index, the confirmation of a match and the
snippet's offsets alike, whichever SQLite runs.
Changing `searchable_text` or `fold` changes what a deleted batch's index entry must be
removed with: that needs a schema step that rebuilds the `search` table.
"""

from __future__ import annotations

import functools
import json
import unicodedata
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import regex

from sync.wire.models import Event
from sync.wire.payloads import (
    ArtifactCreated,
    AssistantMessage,
    ToolInvocation,
    UserMessage,
    payload_of,
)

#: Trigram matching needs at least this many characters in a word.
TRIGRAM = 3
#: Characters of context either side of a match in a snippet.
SNIPPET_CONTEXT = 40


#: The event types `searchable_text` finds text in (a reader may skip the others).
TEXT_TYPES = ("message.user", "message.assistant", "tool.invocation", "artifact.created")


def searchable_text(event: Event) -> str:
    """The text a person would search an event for: a user's or the assistant's message,
    a tool's output, an artifact's name; "" for everything else (deltas are covered by the
    whole message that follows them)."""
    payload = payload_of(event)
    if isinstance(payload, UserMessage | AssistantMessage):
        return payload.message.text
    if isinstance(payload, ToolInvocation):
        return payload.output_text
    if isinstance(payload, ArtifactCreated):
        return payload.name or ""
    return ""


def event_of_row(
    session_id: str, sequence: int, run_id: str | None, kind: str, created_at: str, data: str
) -> Event:
    """An `Event` from its mirrored columns (`data` is the JSON the mirror stored)."""
    try:
        parsed: Any = json.loads(data)
    except ValueError:
        parsed = {}
    return Event(
        session_id=session_id,
        run_id=run_id,
        sequence=sequence,
        type=kind,
        created_at=created_at,
        data=parsed if isinstance(parsed, dict) else {},
    )


@functools.cache
def compiled(source: str) -> regex.Pattern[str]:
    """`source` compiled on first use: the window's first paint reads the mirror through
    this module's neighbours and needs none of these (nor the `regex` module)."""
    import regex

    return regex.compile(source)


_MARKS = r"\p{Mn}+"


@functools.lru_cache(maxsize=4096)
def _fold_char(char: str) -> str:
    # Cached: a snippet folds its text character by character, and texts share characters.
    return str(compiled(_MARKS).sub("", unicodedata.normalize("NFKD", char))).casefold()


def fold(text: str) -> str:
    """Lower case without accents ("Écrire" → "ecrire", "ß" → "ss"), compatibility forms
    unfolded ("ﬁ" → "fi", full-width letters to ASCII); CJK text passes unchanged. Whole
    strings at C speed; the same, character by character, as `fold_with_offsets`."""
    if text.isascii():
        return text.lower()
    return str(compiled(_MARKS).sub("", unicodedata.normalize("NFKD", text))).casefold()


def fold_with_offsets(text: str) -> tuple[str, Sequence[int]]:
    """`fold(text)` of `text` as given (no NFC first, so offsets stay the caller's), and for
    each folded character the offset of the character of `text` it came from."""
    if text.isascii():
        return text.lower(), range(len(text))
    pieces = list(map(_fold_char, text))
    folded = "".join(pieces)
    if len(folded) == len(text) and "" not in pieces:
        return folded, range(len(text))  # every character folds to one: the usual case
    out: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        piece = _fold_char(char)
        out.append(piece)
        origin.extend([index] * len(piece))
    return "".join(out), origin


def query_words(query: str) -> list[str]:
    """The folded words of a query, longest first, duplicates dropped."""
    words = dict.fromkeys(w for w in fold(query).split() if w)
    return sorted(words, key=len, reverse=True)


#: Trigrams of one word an index query asks for at most (the match is confirmed anyway).
QUERY_TRIGRAMS = 16

#: Runs of the scripts written without spaces between words (Chinese, Japanese, Thai, …),
#: where a word is often one or two characters: too short for a trigram (decision 0123).
#: `ー` (Katakana's long vowel mark) is of no script but belongs inside Japanese words.
_UNSPACED = (
    r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}\p{Tibetan}"
    r"\p{Yi}ー]+"
)


def is_short_word(word: str) -> bool:
    """A folded word too short for the trigram index, of an unspaced script: the short
    index (`short_grams`) finds it in message text; any other short word only in titles."""
    return len(word) < TRIGRAM and compiled(_UNSPACED).fullmatch(word) is not None


def short_grams(text: str) -> str:
    """What the short index holds of a folded text: every character and every pair of
    adjacent characters of its unspaced runs, each once, separated by spaces (its tokenizer
    splits on them). A function of the text alone, so a removal rebuilds it exactly."""
    grams: dict[str, None] = {}
    for run in compiled(_UNSPACED).findall(text):
        for i in range(len(run)):
            grams[run[i]] = None
            if i + 1 < len(run):
                grams[run[i : i + 2]] = None
    return " ".join(grams)


def short_query(word: str) -> str:
    """A short word (`is_short_word`) as a query of the short index: the one token."""
    return '"' + word.replace('"', '""') + '"'


def fts_query(word: str) -> str:
    """A folded word (three characters or more) as an FTS5 query: all of its trigrams.

    With `detail=none` the index knows which rows hold a trigram, not where, so it cannot
    answer a phrase; the trigrams ANDed give the candidates, which the caller confirms."""
    grams = list(dict.fromkeys(word[i : i + TRIGRAM] for i in range(len(word) - TRIGRAM + 1)))
    if len(grams) > QUERY_TRIGRAMS:  # evenly spread, first and last kept
        step = (len(grams) - 1) / (QUERY_TRIGRAMS - 1)
        grams = [grams[round(i * step)] for i in range(QUERY_TRIGRAMS)]
    return " AND ".join('"' + g.replace('"', '""') + '"' for g in grams)


@dataclass(frozen=True, slots=True)
class Snippet:
    """Plain text around a match, and the matched ranges in it as [start, end) offsets
    (code points of `text`): the caller draws the highlight; no markup is ever inserted."""

    text: str
    ranges: tuple[tuple[int, int], ...]

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "ranges": [list(r) for r in self.ranges]}


_LINE_BREAKS = r"[\r\n\t\v\f]"


def snippet(text: str, words: Sequence[str], context: int = SNIPPET_CONTEXT) -> Snippet | None:
    """The snippet of `text` around the first match of any of `words` (folded), or None when
    none occurs. Ranges of every word's occurrences inside the window are given."""
    folded, origin = fold_with_offsets(text)
    first: int | None = None
    for word in words:
        at = folded.find(word)
        if at >= 0 and (first is None or at < first):
            first = at
    if first is None:
        return None
    start = max(0, origin[first] - context)
    end = min(len(text), origin[first] + context * 2)
    # Folded offsets of the window: a word found outside it is of no use.
    lowest, highest = bisect_left(origin, start), bisect_left(origin, end)
    ranges: list[tuple[int, int]] = []
    for word in words:
        at = folded.find(word, lowest, highest)
        while at >= 0:
            lo, hi = origin[at], origin[at + len(word) - 1] + 1
            if hi <= end:
                ranges.append((lo - start, hi - start))
            at = folded.find(word, at + max(1, len(word)), highest)
    # One line, same length (the ranges stay right): a snippet is drawn in a list row.
    window = compiled(_LINE_BREAKS).sub(" ", text[start:end])
    prefix = "…" if start > 0 else ""
    shift = len(prefix)
    merged = sorted(set(ranges))
    return Snippet(
        prefix + window + ("…" if end < len(text) else ""),
        tuple((lo + shift, hi + shift) for lo, hi in merged),
    )
