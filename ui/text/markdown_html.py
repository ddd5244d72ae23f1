"""Markdown (CommonMark, tables, strikethrough) as HTML in Qt's rich-text subset, inert.

markdown-it-py parses (decision 0175); this module writes the HTML from its token stream
itself, so every tag and attribute that reaches Qt is one of ours: the parser's `html`
option is off (raw HTML in content stays text), text is escaped and cleaned
(`clean`) wherever it is written, images become the words "[image: alt]" (no `<img>` is
ever emitted), and a link is an anchor only when `ui.text.rich_text.link_target` accepts it
(web and mail), with its target shown beside its text when the two differ. A code block
(fenced or indented) is a one-cell-wide table: a header row naming its language with a
"Copy" anchor `converge-copy:N`, and the code in a monospace paragraph that keeps its
white space but wraps long lines (a `<pre>` would widen the whole document to its longest
line), coloured by `ui.text.code_highlight`, tabs shown as four columns.

Qt honours inline `style` attributes on these tags (margins, colours, font family and
size, table borders with `border-collapse`), so every block carries its own; the text's
colour is left to the palette of whoever lays the document out.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token
from PySide6.QtCore import QCoreApplication, QUrl

from ui.text.code_highlight import highlight, language_of
from ui.text.plain import neutral
from ui.text.rich_text import true_target

#: Deeper nesting than this (block quotes, lists, emphasis) is not rendered as Markdown:
#: the parser stops nesting there and drops the rest, so the caller shows plain text.
MAX_NESTING = 20
#: More tokens than this (well above what a rich long reply has) are shown as plain text:
#: each styled fragment costs Qt's layout, and tens of thousands of them freeze the window
#: (decision 0176 has the figures).
MAX_TOKENS = 20_000
#: More "[" than this are shown as plain text without parsing: each one costs the
#: parser's link and image rules a look ahead in pure Python, so a reply made of "![" would
#: hold the window for seconds (decision 0176).
MAX_BRACKETS = 5_000
#: The font families tried in order for code, inline and in blocks.
MONOSPACE = "'JetBrains Mono', 'DejaVu Sans Mono', 'Menlo', 'Consolas', monospace"
_SHOWN_TARGET_CHARS = 60

# C0 controls but tab and line feed, DEL and the C1 controls.
_CONTROLS = dict.fromkeys([*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)])
_CONTROLS.update({0x2028: ord("\n"), 0x2029: ord("\n")})


def clean(text: str) -> str:
    """`text` without control characters (tab and line feed stay; CR ends a line), without
    explicit bidirectional controls (`ui.text.plain.neutral`) and with lone surrogates replaced:
    what content may put in front of a reader."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").translate(_CONTROLS)
    if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        text = text.encode("utf-8", "replace").decode("utf-8")
    return neutral(text)


def _esc(text: str) -> str:
    return html.escape(clean(text), quote=False)


def _attr(text: str) -> str:
    return html.escape(clean(text), quote=True)


@dataclass(frozen=True, slots=True)
class Palette:
    """The renderer's own colours; text and background come from the view's palette."""

    muted: str
    link: str
    border: str
    code_bg: str
    code_header_bg: str
    inline_code_bg: str
    table_header_bg: str


LIGHT = Palette("#57606a", "#0550ae", "#d0d7de", "#f6f8fa", "#eaeef2", "#dde1e7", "#f3f5f7")
DARK = Palette("#9ca3ad", "#6cb6ff", "#3d444d", "#151b23", "#212830", "#3a414d", "#1f252d")


def _parser() -> MarkdownIt:
    options = {"html": False, "maxNesting": MAX_NESTING, "linkify": False}
    return MarkdownIt("commonmark", options).enable(["table", "strikethrough"])


_PARSER = _parser()


def _shape(tokens: Sequence[Token]) -> tuple[int, int]:
    """How many tokens `tokens` holds (children included) and how deep they nest."""
    count, deepest = len(tokens), 0
    for token in tokens:
        deepest = max(deepest, token.level)
        if token.children:
            inner_count, inner_deepest = _shape(token.children)
            count, deepest = count + inner_count, max(deepest, inner_deepest)
    return count, deepest


def plain_of(tokens: Sequence[Token]) -> str:
    """The readable text of inline tokens (an image's alt text, a link's label)."""
    out: list[str] = []
    for token in tokens:
        if token.type in {"text", "code_inline"}:
            out.append(token.content)
        elif token.type in {"softbreak", "hardbreak"}:
            out.append(" ")
        elif token.type == "image":
            out.append(plain_of(token.children or []))
    return clean("".join(out))


def _copy_label() -> str:
    return QCoreApplication.translate("ConversationPane", "Copy")


def shown_target(url: QUrl) -> str:
    """What a reader is told a link opens (`true_target`): a mail link whole, a web link's
    host (and user part) whole, then its path, shortened in the middle when long."""
    shown = clean(true_target(url))
    if url.scheme() == "mailto":
        return shown  # never shortened: `link_target` refuses one too long to show
    path = url.path()
    shown += "" if path == "/" else clean(path)
    if url.hasQuery() or url.hasFragment():
        shown += "…"
    if len(shown) > _SHOWN_TARGET_CHARS:
        half = _SHOWN_TARGET_CHARS // 2
        shown = f"{shown[:half]}…{shown[-half + 1 :]}"
    return shown


def _label_is_target(label: str, href: str, shown: str) -> bool:
    if "://" in shown:  # a user part (`true_target`): the words may read as a mail address
        return False
    said = label.strip().rstrip("/").lower()
    bare = href.split("://", 1)[-1].removeprefix("mailto:").rstrip("/").lower()
    return said in {href.rstrip("/").lower(), bare, shown.rstrip("/").lower()}


class _Writer:
    """One message's HTML and its code blocks, written from markdown-it's tokens."""

    def __init__(
        self,
        palette: Palette,
        *,
        dark: bool,
        link_target: Callable[[str], QUrl | None],
        first_code_block: int = 0,
    ):
        self.palette = palette
        self.first_code_block = first_code_block  # the Copy anchors count on from it
        self.dark = dark
        self.link_target = link_target
        self.code_blocks: list[str] = []
        self.lists = 0  # how deep in lists the writer is: nested lists have no margins

    # Blocks -------------------------------------------------------------------------

    def blocks(self, tokens: Sequence[Token]) -> str:
        out: list[str] = []
        for token in tokens:
            out.append(self.block(token))
        return "".join(out)

    def block(self, token: Token) -> str:
        kind = token.type
        p = self.palette
        if kind == "inline":
            return self.inline(token.children or [])
        if kind == "paragraph_open":
            return "" if token.hidden else '<p style="margin-top:0px; margin-bottom:8px">'
        if kind == "paragraph_close":
            return "" if token.hidden else "</p>"
        if kind == "heading_open":
            return _HEADING_OPEN[token.tag]
        if kind == "heading_close":
            return f"</{token.tag}>"
        if kind in {"bullet_list_open", "ordered_list_open"}:
            self.lists += 1
            below = 8 if self.lists == 1 else 0
            start = token.attrs.get("start", 1) if kind == "ordered_list_open" else None
            shown = f' start="{int(start)}"' if start is not None else ""
            return f'<{token.tag}{shown} style="margin-top:0px; margin-bottom:{below}px">'
        if kind in {"bullet_list_close", "ordered_list_close"}:
            self.lists -= 1
            return f"</{token.tag}>"
        if kind == "list_item_open":
            return '<li style="margin-bottom:2px">'
        if kind == "list_item_close":
            return "</li>"
        if kind == "blockquote_open":
            # A quote is a two-cell table: a thin bar, then the quoted blocks (Qt draws
            # no left border on a block).
            return (
                '<table border="0" cellspacing="0" cellpadding="0" style="margin-bottom:8px">'
                f'<tr><td width="3" bgcolor="{p.border}"></td>'
                f'<td style="padding-left:10px; color:{p.muted}">'
            )
        if kind == "blockquote_close":
            return "</td></tr></table>"
        if kind == "hr":
            return '<hr style="margin-top:4px; margin-bottom:8px" />'
        if kind in {"fence", "code_block"}:
            return self.code_block(token)
        if kind == "table_open":
            return (
                '<table border="1" cellspacing="0" cellpadding="6" style="border-collapse:'
                f'collapse; border-style:solid; border-color:{p.border}; margin-bottom:8px">'
            )
        if kind in {"table_close", "tr_open", "tr_close", "th_close", "td_close"}:
            return f"<{'/' if kind.endswith('close') else ''}{token.tag}>"
        if kind in {"th_open", "td_open"}:
            align = str(token.attrs.get("style", "")).removeprefix("text-align:")
            shown = f' align="{align if align in {"center", "right"} else "left"}"'
            shade = f' bgcolor="{p.table_header_bg}"' if kind == "th_open" else ""
            return f"<{token.tag}{shown}{shade}>"
        if kind in {"thead_open", "thead_close", "tbody_open", "tbody_close"}:
            return ""
        # Anything else (raw HTML blocks when the parser is misconfigured): its text.
        return f"<p>{_esc(token.content)}</p>" if token.content else ""

    def code_block(self, token: Token) -> str:
        code = clean(token.content).removesuffix("\n")
        index = self.first_code_block + len(self.code_blocks)
        self.code_blocks.append(code)
        language = language_of(token.info) if token.type == "fence" else ""
        p = self.palette
        head = f'style="background-color:{p.code_header_bg}; color:{p.muted}; font-size:small"'
        body = highlight(code.expandtabs(4), language, dark=self.dark)
        return (
            f'<table width="100%" border="1" cellspacing="0" cellpadding="6"'
            f' style="border-collapse:collapse; border-style:solid; border-color:{p.border};'
            f' margin-bottom:8px; background-color:{p.code_bg}">'
            f'<tr><td {head}><table width="100%" border="0" cellspacing="0" cellpadding="0">'
            f"<tr><td>{_esc(language or 'code')}</td>"
            f'<td align="right"><a href="converge-copy:{index}"'
            f' style="color:{p.link}; text-decoration:none">{_esc(_copy_label())}</a></td></tr>'
            "</table></td></tr>"
            f'<tr><td><p style="white-space:pre-wrap; font-family:{MONOSPACE}; margin-top:0px;'
            f' margin-bottom:0px">{body}</p></td></tr></table>'
        )

    # Inline -------------------------------------------------------------------------

    def inline(self, tokens: Sequence[Token]) -> str:
        out: list[str] = []
        i = 0
        while i < len(tokens):
            token = tokens[i]
            if token.type == "link_open":
                end = _closing(tokens, i)
                out.append(self.link(token, tokens[i + 1 : end]))
                i = end + 1
                continue
            out.append(self.span(token))
            i += 1
        return "".join(out)

    def span(self, token: Token) -> str:
        kind = token.type
        p = self.palette
        if kind == "text":
            return _esc(token.content)
        if kind in {"softbreak", "hardbreak"}:
            return "<br />"
        if kind == "code_inline":
            return (
                f'<code style="font-family:{MONOSPACE}; background-color:{p.inline_code_bg}">'
                f"{_esc(token.content)}</code>"
            )
        if kind in _INLINE_TAGS:
            return _INLINE_TAGS[kind]
        if kind == "image":
            alt = plain_of(token.children or [])
            words = f"[image: {alt}]" if alt else "[image]"
            return f'<span style="color:{p.muted}">{_esc(words)}</span>'
        return _esc(token.content)

    def link(self, token: Token, inner: Sequence[Token]) -> str:
        label_html = self.inline(inner)
        href = clean(str(token.attrs.get("href", "")))
        url = self.link_target(href)
        if url is None:
            return label_html
        shown = shown_target(url)
        anchor = (
            f'<a href="{_attr(url.toString(QUrl.ComponentFormattingOption.FullyEncoded))}"'
            f' style="color:{self.palette.link}">{label_html or _esc(shown)}</a>'
        )
        label = plain_of(inner)
        if not label or _label_is_target(label, href, shown):
            return anchor
        return f'{anchor}<span style="color:{self.palette.muted}"> ({_esc(shown)})</span>'


def _closing(tokens: Sequence[Token], start: int) -> int:
    for j in range(start + 1, len(tokens)):
        if tokens[j].type == "link_close":
            return j
    return len(tokens) - 1


_HEADING_OPEN = {
    f"h{level}": (
        f'<h{level} style="font-size:{size}; font-weight:600; margin-top:{top}px;'
        ' margin-bottom:6px">'
    )
    for level, size, top in (
        (1, "x-large", 10),
        (2, "large", 10),
        (3, "medium", 8),
        (4, "medium", 6),
        (5, "medium", 6),
        (6, "medium", 6),
    )
}
_INLINE_TAGS = {
    "em_open": "<em>",
    "em_close": "</em>",
    "strong_open": "<b>",
    "strong_close": "</b>",
    "s_open": "<s>",
    "s_close": "</s>",
}


def to_html(
    text: str,
    *,
    dark: bool,
    link_target: Callable[[str], QUrl | None],
    first_code_block: int = 0,
) -> tuple[str, tuple[str, ...]] | None:
    """`text` (already `clean`) as Qt HTML and its code blocks' texts, or None when it
    nests deeper than `MAX_NESTING` (the parser would have dropped part of it), has more
    than `MAX_TOKENS` tokens or more than `MAX_BRACKETS` "[" characters. The Copy anchors
    are numbered from `first_code_block` (a piece of a longer text)."""
    if text.count("[") > MAX_BRACKETS:
        return None
    tokens = _PARSER.parse(text)
    count, deepest = _shape(tokens)
    if deepest >= MAX_NESTING - 1 or count > MAX_TOKENS:
        return None
    palette = DARK if dark else LIGHT
    writer = _Writer(palette, dark=dark, link_target=link_target, first_code_block=first_code_block)
    return writer.blocks(tokens).strip(), tuple(writer.code_blocks)
