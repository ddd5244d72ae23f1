"""A reply that is still being streamed, rendered at a cost that grows with its length.

Rendering the whole text again for every streamed piece costs the square of the reply's
length. `StreamedRender` keeps what no later piece can change: the reply is cut before
each line that follows a blank line, starts at the margin and lies outside a fenced block
(there one Markdown block has ended and the next begins), and each piece of text before
the last such cut is rendered once and kept. Each new piece renders only the open tail
after it, and the tail as Markdown only up to `MAX_OPEN_CHARS` (past it, until a cut
settles it, as plain text). Lines are scanned once, where the previous scan stopped.

Rendered in pieces, a reply can differ from its whole rendering where Markdown joins blocks
across a blank line (a loose list shows as lists, a reference link defined further on stays
text); the pane renders the whole reply once more when it ends (`TranscriptItem.render`).
"""

from __future__ import annotations

import html
import re

from ui.text.markdown_html import DARK, LIGHT, clean, to_html
from ui.text.rich_text import RenderedText, link_target, plain_html

#: The open tail is rendered as Markdown up to this many characters, as plain text beyond.
MAX_OPEN_CHARS = 4_000

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


class StreamedRender:
    """One streamed reply's settled pieces (source, HTML, code blocks) and its line scan."""

    def __init__(self) -> None:
        self._start(dark=False)

    def _start(self, *, dark: bool) -> None:
        self._dark = dark
        self._settled = 0  # where the settled source ends in the text
        self._source = ""  # the settled source itself (a new text must extend it)
        self._html: list[str] = []
        self._plain: list[str] = []
        self._code: list[str] = []
        self._scan = 0  # where the next unscanned line starts
        self._fence = ""  # the open fence's marker at `_scan`, or ""
        self._after_blank = False  # whether the line at `_scan` follows a blank one

    def render(self, text: str, *, dark: bool) -> RenderedText:
        """`text` (the reply so far) as inert rich text, reusing every settled piece."""
        if dark != self._dark or not text.startswith(self._source):
            self._start(dark=dark)  # a new colour scheme, or a text that is not the same
        cut = self._advance(text)
        if cut > self._settled:
            piece = clean(text[self._settled : cut])
            self._html.append(self._markdown(piece))
            self._plain.append(piece)
            self._settled, self._source = cut, text[:cut]
        tail = clean(text[self._settled :])
        first = len(self._code)
        tail_html = self._markdown(tail) if len(tail) <= MAX_OPEN_CHARS else plain_html(tail)
        tail_code = self._code[first:]
        del self._code[first:]
        settled_html = "".join(self._html)
        return RenderedText(
            html=settled_html + tail_html,
            plain="".join(self._plain) + tail,
            code_blocks=(*self._code, *tail_code),
            settled=len(settled_html),
        )

    def _markdown(self, piece: str) -> str:
        """`piece` as HTML, its code blocks numbered after the settled ones."""
        if not piece.strip():
            return ""
        rendered = to_html(
            piece, dark=self._dark, link_target=link_target, first_code_block=len(self._code)
        )
        if rendered is None:
            return plain_html(piece)
        body, code_blocks = rendered
        self._code.extend(code_blocks)
        return body

    def _advance(self, text: str) -> int:
        """Scan the complete lines not scanned yet; the last cut found (or the last one)."""
        cut = self._settled
        while (end := text.find("\n", self._scan)) >= 0:
            line = text[self._scan : end]
            fence = _FENCE.match(line)
            if self._fence:
                if fence and line.strip() == fence.group(1) and _closes(fence[1], self._fence):
                    self._fence = ""
            elif fence and not (fence[1][0] == "`" and "`" in line[fence.end() :]):
                if self._after_blank and not line[0].isspace():
                    cut = self._scan
                self._fence = fence[1]
            elif line.strip() and self._after_blank and not line[0].isspace():
                cut = self._scan
            self._after_blank = not self._fence and not line.strip()
            self._scan = end + 1
        return cut


def _closes(marker: str, opening: str) -> bool:
    return marker[0] == opening[0] and len(marker) >= len(opening)


def note_html(words: str, *, dark: bool) -> str:
    """`words` of ours (a reply cut short says so) as a quiet paragraph under the text."""
    muted = (DARK if dark else LIGHT).muted
    escaped = html.escape(words, quote=False)
    return f'<p style="margin-top:8px; color:{muted}; font-style:italic">{escaped}</p>'
