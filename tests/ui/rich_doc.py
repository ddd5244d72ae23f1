"""Helpers for the Markdown tests: a message laid out the way the transcript lays it out
(`render_message` into an `InertDocument`), and what Qt made of it."""

from __future__ import annotations

from PySide6.QtGui import QTextCharFormat, QTextCursor, QTextDocument

from ui.text.rich_text import InertDocument, RenderedText, render_message

# Qt's characters for frame (table cell) starts and ends and paragraph ends.
_STRUCTURE = frozenset("\ufdd0\ufdd1\u2029")


def load(text: str, *, dark: bool = False) -> tuple[InertDocument, RenderedText]:
    rendered = render_message(text, dark=dark)
    doc = InertDocument()
    doc.setHtml(rendered.html)
    doc.setTextWidth(700)
    return doc, rendered


def cursor_at(doc: QTextDocument, needle: str) -> QTextCursor:
    """A cursor inside the first occurrence of `needle` (after its first character)."""
    found = doc.find(needle)
    assert not found.isNull(), f"{needle!r} not in {doc.toPlainText()!r}"
    cursor = QTextCursor(doc)
    cursor.setPosition(found.selectionStart() + 1)
    return cursor


def format_at(doc: QTextDocument, needle: str) -> QTextCharFormat:
    return cursor_at(doc, needle).charFormat()


def anchors(doc: QTextDocument) -> list[tuple[str, str]]:
    """Each anchor of `doc` as (href, the text it covers), in document order."""
    found: list[tuple[str, str]] = []
    cursor = QTextCursor(doc)
    current, text = "", list[str]()
    for position in range(1, doc.characterCount()):
        cursor.setPosition(position)
        fmt = cursor.charFormat()
        href = fmt.anchorHref() if fmt.isAnchor() else ""
        char = doc.characterAt(position - 1)
        if href != current:
            if current:
                found.append((current, "".join(text)))
            current, text = href, []
        if href and char not in _STRUCTURE:
            text.append(char)
    if current:
        found.append((current, "".join(text)))
    return found


def has_image(doc: QTextDocument) -> bool:
    """Whether any character of `doc` is an image (an object replacement character)."""
    cursor = QTextCursor(doc)
    for position in range(1, doc.characterCount()):
        cursor.setPosition(position)
        if cursor.charFormat().isImageFormat():
            return True
    return "\ufffc" in doc.toRawText()
