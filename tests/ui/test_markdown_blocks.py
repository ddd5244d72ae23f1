"""Markdown becomes the right Qt text structure (`ui.text.rich_text.render_message` laid out in
an `InertDocument`): headings, lists, tables, quotes, rules, emphasis and code blocks,
checked through QTextDocument's own APIs rather than by reading our HTML."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontInfo,
    QTextBlock,
    QTextDocument,
    QTextFormat,
    QTextListFormat,
)

from tests.ui.rich_doc import anchors, cursor_at, format_at, load
from ui.text.rich_text import COPY_SCHEME, render_message

pytestmark = pytest.mark.usefixtures("qapp", "lexers_loaded")

REPLY = """\
# Title

## Section

Some *emphasis*, **strong** and ~~gone~~ words with `inline()` code.

1. first
2. second
   - nested one
   - nested two

---

| Name | Size |
|------|-----:|
| a.txt | 12 |
| b.txt | 345 |

> quoted words

```python
def add(a, b):
    return a + b
```

```
plain block
```
"""


def test_headings_are_heading_blocks_of_their_level() -> None:
    doc, _ = load("# One\n\n### Three\n\n###### Six\n\nbody")
    levels = {
        text: cursor_at(doc, text).block().blockFormat().headingLevel()
        for text in ("One", "Three", "Six", "body")
    }
    assert levels == {"One": 1, "Three": 3, "Six": 6, "body": 0}
    assert format_at(doc, "One").font().pointSizeF() > format_at(doc, "body").font().pointSizeF()


def test_lists_nest_and_ordered_lists_keep_their_start() -> None:
    doc, _ = load("3. three\n4. four\n   - inner\n\n- bullet")
    three = cursor_at(doc, "three").block().textList()
    four = cursor_at(doc, "four").block().textList()
    inner = cursor_at(doc, "inner").block().textList()
    bullet = cursor_at(doc, "bullet").block().textList()
    assert three is not None and four is not None and inner is not None and bullet is not None
    assert three.format().style() == QTextListFormat.Style.ListDecimal
    assert three.format().start() == 3
    assert three.itemNumber(cursor_at(doc, "four").block()) == 1  # the same list, item 2
    assert inner.format().style() in {
        QTextListFormat.Style.ListDisc,
        QTextListFormat.Style.ListCircle,
        QTextListFormat.Style.ListSquare,
    }
    assert inner.format().indent() > three.format().indent()
    assert bullet.format().style() == QTextListFormat.Style.ListDisc


def test_a_table_is_a_qt_table_with_a_header_row_and_alignment() -> None:
    doc, _ = load("| Name | Size |\n|------|-----:|\n| a.txt | 12 |\n| b.txt | 345 |")
    table = cursor_at(doc, "a.txt").currentTable()
    assert table is not None
    assert (table.rows(), table.columns()) == (3, 2)
    assert table.cellAt(cursor_at(doc, "Name")).row() == 0
    assert table.cellAt(cursor_at(doc, "345")).row() == 2
    assert table.format().border() >= 1
    size = cursor_at(doc, "345").block().blockFormat().alignment()
    assert size & Qt.AlignmentFlag.AlignRight


def test_code_blocks_are_monospace_and_their_texts_are_offered_to_copy() -> None:
    doc, rendered = load(REPLY)
    assert rendered.code_blocks == ("def add(a, b):\n    return a + b", "plain block")
    for needle in ("return a", "plain block", "inline()"):
        assert QFontInfo(format_at(doc, needle).font()).fixedPitch(), needle
    assert not QFontInfo(format_at(doc, "emphasis").font()).fixedPitch()
    copies = [(href, text) for href, text in anchors(doc) if href.startswith(COPY_SCHEME)]
    assert copies == [(f"{COPY_SCHEME}:0", "Copy"), (f"{COPY_SCHEME}:1", "Copy")]
    assert "python" in doc.toPlainText()  # the block names its language


def test_a_long_code_line_wraps_inside_the_width_and_keeps_its_text() -> None:
    line = "x = '" + "word " * 200 + "'"
    doc, rendered = load(f"```python\n{line}\n\tindented\n```")
    assert doc.idealWidth() <= doc.textWidth()  # a <pre> widened the document to 1,800 px
    assert rendered.code_blocks == (f"{line}\n\tindented",)
    assert "    indented" in doc.toPlainText()  # a tab shown as four columns


def test_code_is_coloured_by_language_in_both_palettes() -> None:
    code = "```python\ndef add(a, b):\n    return 'a' + b  # sum\n```"

    def colours(dark: bool) -> dict[str, QColor]:
        doc, _ = load(code, dark=dark)
        return {word: format_at(doc, word).foreground().color() for word in ("def", "'a'", "# sum")}

    light, dark = colours(False), colours(True)
    assert len({c.name() for c in light.values()}) == 3  # keyword, string, comment differ
    assert light != dark
    unknown, _ = load("```nosuchlanguage\ndef x\n```")
    assert QFontInfo(format_at(unknown, "def x").font()).fixedPitch()


def test_emphasis_strong_strikethrough_rule_and_quote() -> None:
    doc, _ = load(REPLY)
    assert format_at(doc, "emphasis").fontItalic()
    assert format_at(doc, "strong").fontWeight() >= QFont.Weight.DemiBold
    assert format_at(doc, "gone").fontStrikeOut()
    rulers = [
        block
        for block in _blocks(doc)
        if block.blockFormat().hasProperty(QTextFormat.Property.BlockTrailingHorizontalRulerWidth)
    ]
    assert len(rulers) == 1
    quote = cursor_at(doc, "quoted words")
    table = quote.currentTable()
    assert table is not None and table.cellAt(quote).column() == 1  # beside the quote's bar
    assert format_at(doc, "quoted").foreground().color() != QColor("black")


def test_line_breaks_in_a_paragraph_are_kept() -> None:
    doc, _ = load("first line\nsecond line")
    assert doc.toPlainText().splitlines() == ["first line", "second line"]


def test_plain_is_the_source_as_written() -> None:
    source = "# Title\n\n- **a**\n\n```py\nx = 1\n```\n"
    assert render_message(source).plain == source


def _blocks(doc: QTextDocument) -> Iterator[QTextBlock]:
    block = doc.begin()
    while block.isValid():
        yield block
        block = block.next()
