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
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import regex

from sync.wire.models import Event

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
    return text_of(event.type, event.data)


_MESSAGES = frozenset({"message.user", "message.assistant"})


def text_of(kind: str, data: Mapping[str, Any]) -> str:
    """`searchable_text` of an event of this type and `data`, without making the `Event`
    (search reads thousands of them)."""
    if kind in _MESSAGES and type(data) is dict:
        # The usual message, one text block: its text, as `message_of(data).text` gives it.
        content = data.get("content")
        if (
            type(content) is list
            and len(content) == 1
            and type(block := content[0]) is dict
            and block.get("type") == "text"
            and type(text := block.get("text")) is str
        ):
            return text
    # Any other event parsed as the window parses it; the payload classes load on the
    # first one (`converge search` over plain messages needs none of them).
    from sync.wire.payloads import (
        ArtifactCreated,
        AssistantMessage,
        ToolInvocation,
        UserMessage,
        payload_from,
    )

    payload = payload_from(kind, data)
    if isinstance(payload, UserMessage | AssistantMessage):
        return payload.message.text
    if isinstance(payload, ToolInvocation):
        return payload.output_text
    if isinstance(payload, ArtifactCreated):
        return payload.name or ""
    return ""


#: How the mirror writes the usual message (`json.dumps` of its role and one text block):
#: the text stands between a head and the end as it is when JSON escaped none of it.
_PLAIN_HEADS = tuple(
    json.dumps({"role": role, "content": [{"type": "text", "text": ""}]})[:-4]
    for role in ("user", "assistant")
)
_PLAIN_END = '"}]}'


def text_of_json(kind: str, data: str) -> str:
    """`text_of` of an event from the JSON the mirror stored. The usual message's text is
    cut out of the JSON, unparsed, when nothing in it is escaped (no quote, backslash or
    control character: every printable character stands for itself); else parsed."""
    if kind in _MESSAGES and data.endswith(_PLAIN_END):
        for head in _PLAIN_HEADS:
            if data.startswith(head) and len(data) >= len(head) + len(_PLAIN_END):
                text = data[len(head) : -len(_PLAIN_END)]
                if '"' not in text and "\\" not in text and text.isprintable():
                    return text
                break
    return text_of(kind, data_of(data))


def data_of(data: str) -> dict[str, Any]:
    """An event's `data` from the JSON the mirror stored; {} for what is not an object."""
    try:
        parsed: Any = json.loads(data)
    except ValueError:
        parsed = {}
    return parsed if isinstance(parsed, dict) else {}


def event_of_row(
    session_id: str, sequence: int, run_id: str | None, kind: str, created_at: str, data: str
) -> Event:
    """An `Event` from its mirrored columns (`data` is the JSON the mirror stored)."""
    return Event(
        session_id=session_id,
        run_id=run_id,
        sequence=sequence,
        type=kind,
        created_at=created_at,
        data=data_of(data),
    )


@functools.cache
def compiled(source: str) -> regex.Pattern[str]:
    """`source` compiled on first use: the window's first paint reads the mirror through
    this module's neighbours and needs none of these (nor the `regex` module)."""
    import regex

    return regex.compile(source)


_MARKS = r"\p{Mn}+"


def _fold_char(char: str) -> str:
    return str(compiled(_MARKS).sub("", unicodedata.normalize("NFKD", char))).casefold()


class _CharFolds(dict[int, str]):
    """`_fold_char` of every character met, by code point, for `str.translate`: a text is
    folded character by character at C speed once its characters have been seen."""

    #: Characters that fold to nothing (combining marks): with none of them in a text, a
    #: fold as long as the text is one character for one.
    vanishing: set[str]

    def __init__(self) -> None:
        super().__init__()
        self.vanishing = set()

    def __missing__(self, code: int) -> str:
        piece = _fold_char(chr(code))
        if not piece:
            self.vanishing.add(chr(code))
        if len(self) >= _FOLDS_KEPT:
            self.clear()
        self[code] = piece
        return piece


#: Characters whose fold `_CHAR_FOLDS` keeps at most (all of a few scripts).
_FOLDS_KEPT = 1 << 16
_CHAR_FOLDS = _CharFolds()


def fold(text: str) -> str:
    """Lower case without accents ("Écrire" → "ecrire", "ß" → "ss"), compatibility forms
    unfolded ("ﬁ" → "fi", full-width letters to ASCII); CJK text passes unchanged. Whole
    strings at C speed; the same, character by character, as `fold_with_offsets`."""
    if text.isascii():
        return text.lower()
    return str(compiled(_MARKS).sub("", unicodedata.normalize("NFKD", text))).casefold()


@functools.cache
def stays_itself(char: str) -> bool:
    """Whether `char` folds to itself and nothing around it can move into or out of its
    place (no decomposition, not combining): a text holding a word of such characters as
    it is holds it in its fold too."""
    return (
        unicodedata.normalize("NFKD", char) == char
        and not unicodedata.combining(char)
        and _fold_char(char) == char
    )


@functools.cache
def latin_1_folds() -> frozenset[str]:
    """Every character the fold of a text of Latin-1 characters (up to U+00FF) can hold:
    folding is per character, but for the order of combining marks."""
    return frozenset("".join(_fold_char(chr(code)) for code in range(256)))


def fold_with_offsets(text: str) -> tuple[str, Sequence[int]]:
    """`fold(text)` of `text` as given (no NFC first, so offsets stay the caller's), and for
    each folded character the offset of the character of `text` it came from. Character by
    character, so the fold of a prefix is the prefix of the fold."""
    if text.isascii():
        return text.lower(), range(len(text))
    # ASCII letters lowered at C speed (bytes.lower() touches ASCII alone, and no byte of
    # a longer UTF-8 character is ASCII), the rest run by run.
    lowered = text.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")
    folded = compiled(_NOT_ASCII).sub(_fold_run, lowered)
    if len(folded) == len(text) and not any(c in text for c in _CHAR_FOLDS.vanishing):
        return folded, range(len(text))  # every character folds to one: the usual case
    out: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        piece = _CHAR_FOLDS[ord(char)]
        out.append(piece)
        origin.extend([index] * len(piece))
    return "".join(out), origin


_NOT_ASCII = r"[^\x00-\x7f]+"


def _fold_run(match: regex.Match[str]) -> str:
    return str(match[0]).translate(_CHAR_FOLDS)


def is_text(value: str) -> bool:
    """Whether `value` is text a mirror can hold (UTF-8): a lone surrogate is not, and bytes
    of a command line that are not UTF-8 reach the program as such. Text holding one is in
    no title, id or message, and SQLite cannot be handed it."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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


def fts_query(word: str) -> str | None:
    """A folded word (three characters or more) as an FTS5 query: all of its trigrams; None
    when it has none an FTS5 query can spell (each holds NUL, which ends a query's text).

    With `detail=none` the index knows which rows hold a trigram, not where, so it cannot
    answer a phrase; the trigrams ANDed give the candidates, which the caller confirms, so
    leaving some out only adds candidates."""
    grams = list(
        dict.fromkeys(
            gram
            for i in range(len(word) - TRIGRAM + 1)
            if "\x00" not in (gram := word[i : i + TRIGRAM])
        )
    )
    if not grams:
        return None
    if len(grams) > QUERY_TRIGRAMS:  # evenly spread, first and last kept
        step = (len(grams) - 1) / (QUERY_TRIGRAMS - 1)
        grams = [grams[round(i * step)] for i in range(QUERY_TRIGRAMS)]
    return " AND ".join('"' + g.replace('"', '""') + '"' for g in grams)


class Snippet(NamedTuple):
    """Plain text around a match, and the matched ranges in it as [start, end) offsets
    (code points of `text`): the caller draws the highlight; no markup is ever inserted.
    A tuple: `converge search` makes one per hit, thousands at a time."""

    text: str
    ranges: tuple[tuple[int, int], ...]

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "ranges": [list(r) for r in self.ranges]}


_LINE_BREAKS = r"[\r\n\t\v\f]"


def snippet(text: str, words: Sequence[str], context: int = SNIPPET_CONTEXT) -> Snippet | None:
    """The snippet of `text` around the first match of any of `words` (folded), or None when
    none occurs. Ranges of every word's occurrences inside the window are given."""
    found = _first_match(text, words, context)
    if found is None:
        return None
    folded, origin, first = found
    start = max(0, origin[first] - context)
    end = min(len(text), origin[first] + context * 2)
    shift = -start + (start > 0)  # an ellipsis first when the window is cut there
    # Folded offsets of the window: a word found outside it is of no use.
    aligned = type(origin) is range  # one folded character per character
    if aligned:
        lowest, highest = start, end
    else:
        lowest, highest = bisect_left(origin, start), bisect_left(origin, end)
    ranges: list[tuple[int, int]] = []
    for word in words:
        size = len(word)
        at = folded.find(word, lowest, highest)
        while at >= 0:
            if aligned:  # found before `highest`: it ends inside the window
                ranges.append((at + shift, at + size + shift))
            elif (hi := origin[at + size - 1] + 1) <= end:
                ranges.append((origin[at] + shift, hi + shift))
            at = folded.find(word, at + size, highest)
    if len(words) > 1 or not aligned:
        ranges = sorted(set(ranges))
    # One line, same length (the ranges stay right): a snippet is drawn in a list row.
    window = text[start:end]
    if not window.isprintable():  # a line break is not
        window = compiled(_LINE_BREAKS).sub(" ", window)
    return Snippet(
        ("…" if start > 0 else "") + window + ("…" if end < len(text) else ""), tuple(ranges)
    )


#: Characters of a text folded first to find a snippet's match: a message can be long, and
#: its first match is usually near its start.
_FIRST_PREFIX = 256


def _first_match(
    text: str, words: Sequence[str], context: int
) -> tuple[str, Sequence[int], int] | None:
    """The fold of as much of `text` as the snippet needs, its offsets, and the folded offset
    of the first match of any of `words`; None when none occurs. A prefix is enough when its
    first match could not start earlier in a longer one (no word reaches past the prefix's
    end from before it) and the window after the match lies inside it."""
    longest = max(map(len, words), default=0)
    size = _FIRST_PREFIX
    while True:
        whole = size >= len(text)
        folded, origin = fold_with_offsets(text if whole else text[:size])
        first = -1
        for word in words:
            at = folded.find(word)
            if at >= 0 and (first < 0 or at < first):
                first = at
        if whole or (
            first >= 0 and first + longest <= len(folded) and origin[first] + context * 2 <= size
        ):
            return (folded, origin, first) if first >= 0 else None
        size *= 4
