"""Server text shown by the window is inert: plain, never markup, and it cannot reorder
what surrounds it (CONTRACT §10.1).

Qt renders a label (`Qt.TextFormat.AutoText`) and a tooltip as rich text whenever
`Qt::mightBeRichText` guesses so: a title `<img src="/home/me/secret.png">` would load
a local file, `<a href=...>` would become a link. Labels with server text set
`PlainText`; a tooltip has no format setting, so `plain_tooltip` escapes the text and
wraps it in a paragraph that keeps its line breaks: always rich text, showing the literal
characters. `set_plain_tip` also gives the widget that text as its accessible description,
which Qt would otherwise take from the tooltip, markup and all.

Bidirectional controls in a title (U+202E RIGHT-TO-LEFT OVERRIDE, embeddings, isolates)
would reorder the rest of its row or sentence (after "abc<U+202E>def", the "”?" closing
"Delete “…”?" is drawn reversed, on the wrong side). A title is display text, not a
document: it has no use for explicit directional formatting, so `neutral` removes those
controls (the implicit marks LRM, RLM
and ALM stay: they only settle neutral characters next to them). Where server text sits
inside a sentence of ours, `isolate` also wraps it in FSI … PDI (U+2068 … U+2069), so its
own direction (an Arabic title in an English sentence) is kept without touching the words
around it. Text shown alone (a sidebar row, the pane's title) is only neutralised: an
isolate around a whole line would hide its direction from the paragraph (the Unicode
bidirectional algorithm skips isolates when it looks for the first strong letter).
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

#: Explicit directional formatting: embeddings (LRE, RLE), overrides (LRO, RLO), PDF, and
#: the isolates (LRI, RLI, FSI, PDI). Removed from server text; ours are added around it.
EXPLICIT_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
FSI = "\u2068"  # FIRST STRONG ISOLATE: the text inside takes its own direction
PDI = "\u2069"  # POP DIRECTIONAL ISOLATE
_DROP = dict.fromkeys(map(ord, EXPLICIT_BIDI))


def neutral(text: str) -> str:
    """`text` without explicit bidirectional controls: it cannot reorder anything."""
    return text.translate(_DROP)


def isolate(text: str) -> str:
    """`text` neutralised and isolated, to be placed inside a sentence or a row of ours."""
    shown = neutral(text)
    return f"{FSI}{shown}{PDI}" if shown else ""


def plain_tooltip(text: str) -> str:
    """A tooltip that Qt shows as exactly `text` (escaped, line breaks kept); empty text
    stays empty, which is no tooltip."""
    if not text:
        return ""
    return f'<p style="white-space:pre-wrap">{html.escape(text, quote=False)}</p>'


def set_plain_tip(widget: QWidget, text: str) -> None:
    """`text` as `widget`'s tooltip, shown literally (`plain_tooltip`), and as its
    accessible description: Qt gives a screen reader the tooltip as the description when
    none is set, and that tooltip is markup, whose tags would be read out."""
    widget.setToolTip(plain_tooltip(text))
    widget.setAccessibleDescription(text)
