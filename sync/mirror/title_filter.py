"""The sidebar's title filter, one definition for SQL and for Python.

`Mirror.rows(filter_text)` and `sync.mirror.reader` filter in SQL: the filter's text,
stripped, is a substring of the folded title (`fold`, registered on every mirror
connection) or, from `ID_MATCH_CHARS` characters on, of the id with ASCII letters lowered;
`matches_filter` is the same predicate in Python, for a listener applying deltas.
"""

from __future__ import annotations

import unicodedata

#: A filter text matches ids from this many characters on: an id is found by pasting it (or
#: a good part of it), and "s" or "_1" would otherwise match every row.
ID_MATCH_CHARS = 3

#: ASCII letters to lower case and nothing else (SQL's `lower()` folds ids this far only).
ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def fold(text: object) -> object:
    """Unicode case folding for the title filter (NFC first: a typed "é" may be decomposed)."""
    if not isinstance(text, str):
        return text
    return unicodedata.normalize("NFC", text).casefold()


def matches_filter(session_id: str, title: str | None, filter_text: str) -> bool:
    """The title filter of `Mirror.rows` in Python, for a listener applying deltas.

    The SQL is `instr(fold(title), fold(needle)) > 0 OR instr(lower(id), needle) > 0`
    (`sync.mirror.reader`); SQLite's `lower()` lowers ASCII letters only.
    """
    needle = filter_text.strip()
    if not needle:
        return True
    if title is not None and str(fold(needle)) in str(fold(title)):
        return True
    if len(needle) < ID_MATCH_CHARS:
        return False
    return needle.translate(ASCII_LOWER) in session_id.translate(ASCII_LOWER)
