"""The sidebar's title filter, one definition for SQL and for Python.

`Mirror.rows(filter_text)` and `sync.mirror.reader` filter in SQL with
`fold(title) LIKE fold(pattern) ESCAPE '\\' OR id LIKE pattern ESCAPE '\\'` (`like_pattern`
builds the pattern, `fold` is registered on every mirror connection; the id's part only from
`ID_MATCH_CHARS` characters on); `matches_filter` is the same predicate in Python, for a
listener applying deltas.
"""

from __future__ import annotations

import unicodedata

#: A filter text matches ids from this many characters on: an id is found by pasting it (or
#: a good part of it), and "s" or "_1" would otherwise match every row.
ID_MATCH_CHARS = 3

#: ASCII letters to lower case and nothing else (SQL's LIKE folds ids this far only).
ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def fold(text: object) -> object:
    """Unicode case folding for the title filter (NFC first: a typed "é" may be decomposed)."""
    if not isinstance(text, str):
        return text
    return unicodedata.normalize("NFC", text).casefold()


def like_pattern(filter_text: str) -> str | None:
    """The LIKE pattern (escape character `\\`) of a filter text; None when it filters
    nothing (empty or blank)."""
    needle = filter_text.strip()
    if not needle:
        return None
    return f"%{like_escaped(needle)}%"


def like_escaped(text: str) -> str:
    """`text` matched as it is inside a LIKE pattern of escape character `\\`."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def matches_filter(session_id: str, title: str | None, filter_text: str) -> bool:
    """The title filter of `Mirror.rows` in Python, for a listener applying deltas.

    The SQL is `fold(title) LIKE fold(%needle%) OR id LIKE %needle%`; SQLite's LIKE ignores
    ASCII case only, and `fold` has already case-folded the title side.
    """
    needle = filter_text.strip()
    if not needle:
        return True
    if title is not None and str(fold(needle)) in str(fold(title)):
        return True
    if len(needle) < ID_MATCH_CHARS:
        return False
    return needle.translate(ASCII_LOWER) in session_id.translate(ASCII_LOWER)
