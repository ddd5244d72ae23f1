"""A code block's text as coloured spans in Qt's rich-text subset (Pygments' lexers).

Qt's rich-text engine reads inline `style` attributes but not a `<style>` sheet's classes
reliably, so each token becomes a `<span style="color:…">` of our own from the Pygments
style's colour, weight and slant (no token background: a style's error boxes would
scatter patches over the block). The language is the fence's info word; an unknown or
missing one, or a block over `MAX_HIGHLIGHT_CHARS`, is shown uncoloured: lexers are
regular expressions, and a huge block is where one would be slow. Nothing is guessed
(`guess_lexer` tries every lexer on the text).
"""

from __future__ import annotations

import html
import re
from functools import lru_cache

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.style import StyleMeta
from pygments.styles import get_style_by_name
from pygments.token import _TokenType
from pygments.util import ClassNotFound
from PySide6.QtGui import QColor

from ui.theme.palette_text import BODY, readable
from ui.theme.style import colours

#: Blocks longer than this are shown in the monospace font without colours.
MAX_HIGHLIGHT_CHARS = 20_000
#: The Pygments styles for a light and a dark palette.
LIGHT_STYLE = "default"
DARK_STYLE = "github-dark"

_LANGUAGE = re.compile(r"[A-Za-z0-9_+#.-]{1,32}")


def language_of(info: str) -> str:
    """The language a fence names (its info string's first word), or "" when it names
    none we could look up."""
    word = info.strip().split(maxsplit=1)[0] if info.strip() else ""
    return word if _LANGUAGE.fullmatch(word) else ""


@lru_cache(maxsize=64)
def _lexer(language: str) -> Lexer | None:
    try:
        return get_lexer_by_name(language.lower(), stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


@lru_cache(maxsize=2)
def _style(dark: bool) -> StyleMeta:
    return get_style_by_name(DARK_STYLE if dark else LIGHT_STYLE)


@lru_cache(maxsize=1024)
def _span_style(dark: bool, ttype: _TokenType) -> str:
    found = _style(dark).style_for_token(ttype)
    parts = []
    if found["color"]:
        parts.append(f"color:{_held(found['color'], dark)}")
    if found["bold"]:
        parts.append("font-weight:600")
    if found["italic"]:
        parts.append("font-style:italic")
    return ";".join(parts)


def _held(color: str, dark: bool) -> str:
    """A style's token colour held to body contrast on the reply's bubble, which a code
    block's text is drawn on: no Pygments style holds every token (comments, whitespace)
    to 4.5:1 there (decision 0205)."""
    bubble = QColor(colours(dark)["assistant_bg"])
    return readable(QColor(f"#{color}"), (bubble,), BODY).name()


def highlight(code: str, language: str, *, dark: bool) -> str:
    """`code` escaped, in coloured spans when `language` has a lexer (for a `<pre>`)."""
    lexer = _lexer(language) if language and len(code) <= MAX_HIGHLIGHT_CHARS else None
    if lexer is None:
        return html.escape(code, quote=False)
    out: list[str] = []
    for ttype, value in lexer.get_tokens(code):
        text = html.escape(value, quote=False)
        style = _span_style(dark, ttype)
        out.append(f'<span style="{style}">{text}</span>' if style and value.strip() else text)
    return "".join(out)
