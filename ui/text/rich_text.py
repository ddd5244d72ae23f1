"""A message's text as an inert rich-text document: the one place content becomes markup.

Everything a transcript paints or copies goes through `render_message` (a reply) or
`render_typed` (your own message, shown as you typed it, decision 0211): the returned HTML
is in Qt's rich-text subset with every character of content escaped, so no markup, image
or link of the content's own reaches Qt unchecked (CONTRACT §10.1). `InertDocument` is the
document the transcript lays that HTML out in; it loads no resource, so even a mistake in
the renderer cannot fetch a file or a URL. `plain` is what copying gets (a
screen reader hears a reply's rendered words, `ui.text.spoken`); `code_blocks` are the
fenced blocks' texts, which anchors named `converge-copy:N` in the HTML copy.

A reply's text is Markdown (`ui.text.markdown_html`, decision 0175): CommonMark with tables and
strikethrough, code highlighted, links shown with their targets. `plain` is the source as
written, cleaned (`ui.text.markdown_html.clean`): what a user pastes elsewhere keeps its
Markdown. Bounds: a text over `MAX_MARKDOWN_CHARS`, nesting deeper than
`ui.text.markdown_html.MAX_NESTING`, or over its `MAX_TOKENS` or `MAX_BRACKETS`, is shown as
plain escaped paragraphs instead, so a hostile message costs at most one parse of a
bounded size (decision 0176).
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from functools import lru_cache

from PySide6.QtCore import QObject, QUrl
from PySide6.QtGui import QColor, QImage, QTextDocument

#: The scheme of the anchors that copy a code block: `converge-copy:3` copies block 3.
COPY_SCHEME = "converge-copy"
#: Longer texts are shown as plain paragraphs, not parsed (the parse is linear, but in
#: pure Python, so a longer hostile text would hold the UI thread visibly).
MAX_MARKDOWN_CHARS = 100_000
#: A list level's indent (Qt's default, 40 px, set nested lists far off in a bubble).
LIST_INDENT_PX = 24


@dataclass(frozen=True, slots=True)
class RenderedText:
    """What one message shows (`html`), copies and says (`plain`), and offers to copy per
    code block (`code_blocks`, in order)."""

    html: str
    plain: str
    code_blocks: tuple[str, ...] = ()
    #: A streaming reply's: the length of the start of `html` that no later piece changes
    #: (its settled Markdown blocks), so a laid-out document keeps it and lays out the rest.
    settled: int = 0


def render_message(text: str, *, dark: bool = False) -> RenderedText:
    """`text` as inert rich text: Markdown when it is within the bounds, else escaped
    paragraphs that keep its line breaks."""
    # Imported here, not at the top: markdown-it and Pygments are a large share of the
    # start-up's imports and the first paint needs neither; `app.desktop.load_engine_class`
    # loads them on its worker thread after the paint (decision 0216).
    from ui.text.markdown_html import clean, to_html

    plain = clean(text)
    rendered = (
        to_html(plain, dark=dark, link_target=link_target)
        if (len(plain) <= MAX_MARKDOWN_CHARS)
        else None
    )
    if rendered is None:
        return RenderedText(html=plain_html(plain), plain=plain)
    body, code_blocks = rendered
    return RenderedText(html=body, plain=plain, code_blocks=code_blocks)


def render_typed(text: str) -> RenderedText:
    """Your own message as you typed it (cleaned, Markdown left as written): the words
    are yours, shown the way you wrote them, and white on the accent needs no palette of
    its own (decision 0211). The delegate lays `plain` out one paragraph per line, so each
    line takes the direction of its own first letter."""
    from ui.text.markdown_html import clean  # see `render_message`

    plain = clean(text)
    return RenderedText(html=plain_html(plain), plain=plain)


def plain_html(text: str) -> str:
    """`text` (already cleaned) escaped in one paragraph that keeps its line breaks."""
    escaped = html.escape(text, quote=False)
    return f'<p style="white-space:pre-wrap">{escaped}</p>'


#: A mail link whose recipients and parameters are longer than this is not a link: what it
#: would send could not be shown whole beside it.
MAX_MAIL_TARGET = 120


def link_target(href: str) -> QUrl | None:
    """The URL a click on `href` may open (web and mail links only), or None."""
    url = QUrl(href, QUrl.ParsingMode.StrictMode)
    if not url.isValid() or url.scheme() not in {"http", "https", "mailto"}:
        return None
    if url.scheme() != "mailto" and not url.host():
        return None  # "https:path" names no server: nothing to open
    if url.scheme() == "mailto" and len(true_target(url)) > MAX_MAIL_TARGET:
        return None
    return url


def true_target(url: QUrl) -> str:
    """What a link really opens, in the words a reader must be shown: a mail link's every
    recipient and parameter; a web link's host as the browser sends it (`xn--…` when it
    has a letter beyond ASCII, so a look-alike such as a Cyrillic "а" in "pаypal.com"
    cannot pass for the name it imitates), with the user part before an `@`, which is not
    the host, and the scheme when there is one (`user@host` reads as a mail address)."""
    if url.scheme() == "mailto":
        query = url.query(QUrl.ComponentFormattingOption.PrettyDecoded)
        return url.path() + (f"?{query}" if query else "")
    host = url.host(QUrl.ComponentFormattingOption.FullyEncoded)
    if url.userInfo():
        host = f"{url.scheme()}://{url.userInfo()}@{host}"
    return host + (f":{url.port()}" if url.port() != -1 else "")


class InertDocument(QTextDocument):
    """A document that loads nothing: no image, style sheet or file, whatever its HTML
    names.

    Returning nothing from `loadResource` is not enough for images: Qt's image handler
    then loads the `src` itself (`QImage.load`, a local path or `file:` URL) and caches it.
    Every image is answered with one blank pixel instead, so the handler has no reason to.
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setIndentWidth(LIST_INDENT_PX)

    def loadResource(self, type: int, name: QUrl | str) -> object:
        del name
        if type == QTextDocument.ResourceType.ImageResource:
            return _blank_image()
        return None


@lru_cache(maxsize=1)
def _blank_image() -> QImage:
    image = QImage(1, 1, QImage.Format.Format_ARGB32)
    image.fill(QColor(0, 0, 0, 0))
    return image
