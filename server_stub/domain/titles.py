"""The authoritative title rule of ADR-0050 §1 (CONTRACT §2, "Title rule").

Every client shows the server's title, so the rule has to be exact and identical on every read
path: stored at the first run, and derived the same way for legacy sessions from their first
`message.user` event. Unicode properties come from the `regex` module rather than `str` methods
because Python's `isspace()` is not the Unicode White_Space property (it accepts U+001C..U+001F),
and grapheme clusters (`\\X`) must come from a maintained segmentation implementation.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any

import regex

MAX_TITLE_CODE_POINTS = 64

# Control characters (Cc) that are not White_Space: removed outright, so that e.g. U+001F never
# turns into a visible space. V1 enables set subtraction.
_CONTROL_NOT_SPACE = regex.compile(r"[\p{Cc}--\p{White_Space}]", flags=regex.VERSION1)
_WHITE_SPACE_RUN = regex.compile(r"\p{White_Space}+")
_GRAPHEME = regex.compile(r"\X")


def normalize_text(text: str) -> str:
    """Step 2 of the rule: NFC, drop non-space controls, collapse White_Space, strip."""
    text = unicodedata.normalize("NFC", text)
    text = _CONTROL_NOT_SPACE.sub("", text)
    text = _WHITE_SPACE_RUN.sub(" ", text)
    return text.strip(" ")


def truncate_to_graphemes(text: str, limit: int = MAX_TITLE_CODE_POINTS) -> str:
    """Step 3: the longest prefix of whole grapheme clusters holding at most `limit` code points.

    Clusters are found over the whole string, so a ZWJ emoji sequence or a flag that straddles
    the limit is dropped whole rather than split.
    """
    if len(text) <= limit:
        return text
    end = 0
    for match in _GRAPHEME.finditer(text):
        if match.end() > limit:
            break
        end = match.end()
    return text[:end].rstrip(" ")


def normalize_title(text: str) -> str | None:
    """Title of one text block, or None when nothing survives normalisation and the cut."""
    normalized = normalize_text(text)
    if not normalized:
        return None
    return truncate_to_graphemes(normalized) or None


def title_from_message(message: Any) -> str | None:
    """Title of a user message: its first text block that is non-empty after normalisation.

    Accepts anything (a legacy event's data may be malformed) and answers None rather than
    raising, because a title must never make a read path fail.
    """
    if not isinstance(message, Mapping):
        return None
    content = message.get("content")
    if not isinstance(content, list):
        return None
    for block in content:
        if not isinstance(block, Mapping) or block.get("type") != "text":
            continue
        text = block.get("text")
        if not isinstance(text, str):
            continue
        normalized = normalize_text(text)
        if normalized:
            return truncate_to_graphemes(normalized) or None
    return None
