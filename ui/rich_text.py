"""A message's text as an inert rich-text document: the one place content becomes markup.

Everything a transcript paints or copies goes through `render_message`: the returned HTML
is in Qt's rich-text subset with every character of content escaped, so no markup, image
or link of the content's own reaches Qt unchecked (CONTRACT §10.1). `InertDocument` is the
document the transcript lays that HTML out in; it loads no resource, so even a mistake in
the renderer cannot fetch a file or a URL. `plain` is what copying and assistive
technology get; `code_blocks` are the fenced blocks' texts, which anchors named
`converge-copy:N` in the HTML copy.

This first version shows the text as plain paragraphs; the Markdown renderer replaces
`render_message` behind the same signature.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from PySide6.QtCore import QUrl
from PySide6.QtGui import QTextDocument

#: The scheme of the anchors that copy a code block: `converge-copy:3` copies block 3.
COPY_SCHEME = "converge-copy"


@dataclass(frozen=True, slots=True)
class RenderedText:
    """What one message shows (`html`), copies and says (`plain`), and offers to copy per
    code block (`code_blocks`, in order)."""

    html: str
    plain: str
    code_blocks: tuple[str, ...] = ()


def render_message(text: str, *, dark: bool = False) -> RenderedText:
    """`text` as inert rich text: escaped, one paragraph per line break."""
    del dark  # the plain rendering has no colours of its own
    escaped = html.escape(text, quote=False)
    return RenderedText(html=f'<p style="white-space:pre-wrap">{escaped}</p>', plain=text)


def link_target(href: str) -> QUrl | None:
    """The URL a click on `href` may open (web and mail links only), or None."""
    url = QUrl(href, QUrl.ParsingMode.StrictMode)
    if not url.isValid() or url.scheme() not in {"http", "https", "mailto"}:
        return None
    return url


class InertDocument(QTextDocument):
    """A document that loads nothing: no image, style sheet or file, whatever its HTML
    names."""

    def loadResource(self, type: int, name: QUrl | str) -> object:
        del type, name
        return None
