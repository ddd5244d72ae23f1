"""What a screen reader says for a reply: the words a reader sees, not its Markdown source.

A reply is shown rendered (`ui.text.markdown_html`), so reading its source aloud would give
a listener words nobody sees: "star star bold star star", backticks, "#". `spoken` walks
the same parse and says the rendered words instead: paragraphs, headings and list items
as lines (an ordered item with its number), a table's rows with their cells separated by
commas, a code block as "Code, python: …", an image by its description, and a link by its
words and, when they differ, the address it really opens (the one `link_target` allows,
in full, not the shortened form shown). Past the renderer's bounds the reply is shown as
its source, and said as its source too (decision 0210).
"""

from __future__ import annotations

from collections.abc import Sequence

from markdown_it import MarkdownIt
from markdown_it.token import Token
from PySide6.QtCore import QCoreApplication, QUrl

from ui.text.code_highlight import language_of
from ui.text.markdown_html import MAX_BRACKETS, MAX_NESTING, clean
from ui.text.rich_text import MAX_MARKDOWN_CHARS, link_target, true_target

_PARSER = MarkdownIt("commonmark", {"html": False, "maxNesting": MAX_NESTING}).enable(
    ["table", "strikethrough"]
)
_LINE_ENDS = frozenset({"paragraph_close", "heading_close", "tr_close"})


def spoken(text: str) -> str:
    """`text` (a reply's Markdown) as the words its rendering shows, one block a line."""
    plain = clean(text)
    if len(plain) > MAX_MARKDOWN_CHARS or plain.count("[") > MAX_BRACKETS:
        return plain
    tokens = _PARSER.parse(plain)
    if _deepest(tokens) >= MAX_NESTING - 1:  # the parser dropped what nests deeper
        return plain
    lines: list[str] = []
    line: list[str] = []
    numbers: list[int | None] = []  # per open list: the next item's number, or None

    def end_line() -> None:
        words = "".join(line).strip()
        if words:
            lines.append(words)
        line.clear()

    for token in tokens:
        kind = token.type
        if kind == "inline":
            line.append(_inline(token.children or []))
        elif kind in _LINE_ENDS:
            end_line()
        elif kind == "bullet_list_open":
            numbers.append(None)
        elif kind == "ordered_list_open":
            numbers.append(int(token.attrs.get("start", 1)))
        elif kind in {"bullet_list_close", "ordered_list_close"}:
            numbers.pop()
        elif kind == "list_item_open" and numbers and numbers[-1] is not None:
            line.append(f"{numbers[-1]}. ")
            numbers[-1] += 1
        elif kind in {"th_open", "td_open"} and line:
            line.append(", ")
        elif kind in {"fence", "code_block"}:
            end_line()
            lines.append(_code(token))
    end_line()
    return clean("\n".join(lines))


def _deepest(tokens: Sequence[Token]) -> int:
    deepest = 0
    for token in tokens:
        deepest = max(deepest, token.level, _deepest(token.children or []))
    return deepest


def _code(token: Token) -> str:
    code = token.content.removesuffix("\n")
    language = language_of(token.info) if token.type == "fence" else ""
    if language:
        return QCoreApplication.translate("ConversationPane", "Code, {0}: {1}").format(
            language, code
        )
    return QCoreApplication.translate("ConversationPane", "Code: {0}").format(code)


def _inline(tokens: Sequence[Token]) -> str:
    out: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.type == "link_open":
            end = next(
                (j for j in range(i + 1, len(tokens)) if tokens[j].type == "link_close"),
                len(tokens),
            )
            out.append(_link(str(token.attrs.get("href", "")), _inline(tokens[i + 1 : end])))
            i = end + 1
            continue
        if token.type in {"text", "code_inline"}:
            out.append(token.content)
        elif token.type == "softbreak":
            out.append(" ")
        elif token.type == "hardbreak":
            out.append("\n")
        elif token.type == "image":
            alt = _inline(token.children or []).strip()
            image = QCoreApplication.translate("ConversationPane", "Image: {0}")
            out.append(
                image.format(alt)
                if alt
                else QCoreApplication.translate("ConversationPane", "Image")
            )
        i += 1
    return "".join(out)


def _link(href: str, label: str) -> str:
    """A link's words and, when they are not its address, the address it opens."""
    url = link_target(clean(href))
    if url is None:
        return label
    if url.scheme() == "mailto":
        target = true_target(url)
    else:  # the whole address, its host as the browser sends it (`true_target`)
        target = url.toString().replace(
            url.host(), url.host(QUrl.ComponentFormattingOption.FullyEncoded), 1
        )
    said = label.strip()
    if not said:
        return target
    bare = target.split("://", 1)[-1].rstrip("/").lower()
    if not url.userInfo() and said.rstrip("/").lower() in {target.rstrip("/").lower(), bare}:
        return said
    return f"{said} ({target})"
