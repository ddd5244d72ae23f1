"""Every script, element and theme: a transcript row's words show inside their box and hold
4.5:1 there, measured on the pixels the delegate paints (`tests.ui.ink`).

The matrix is {Latin, Arabic, Hebrew, CJK, mixed} × {light, dark} × {your message, a reply}
× {plain, heading, list, table, quote, link, inline code, code block}, plus your messages
and replies in the Arabic (mirrored) window. CJK has no font on the test machines: its
glyphs are drawn as boxes, which are ink all the same.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication

from tests.ui.ink import glyph_contrasts, outside, paint_row
from tests.ui.looks import look
from ui.pane.transcript_delegate import TranscriptDelegate
from ui.pane.transcript_model import Kind, TranscriptItem, TranscriptModel
from ui.theme.palette_text import BODY
from ui.theme.style import is_dark

pytestmark = pytest.mark.usefixtures("lexers_loaded")  # code blocks in their colours

WIDTH = 560  # px: the pane's width; rows are this wide and a few lines high
#: Large enough that every glyph has fully covered pixels to read its colour from.
FONT_PX = 22

WORDS = {
    "latin": "The ferry leaves at nine",
    "arabic": "تغادر العبارة في التاسعة",
    "hebrew": "המעבורת יוצאת בתשע",
    "cjk": "渡轮九点出发",
    "mixed": "العبارة leaves at 9 من الميناء",
}
ELEMENTS = {
    "plain": "{w}\nFerry at nine\n{w}",
    "heading": "# {w}\n\n{w}",
    "list": "- {w}\n- {w}\n\n1. {w}",
    "table": "| {w} | 2 |\n|---|---|\n| {w} | 3 |",
    "quote": "> {w}",
    "link": "[{w}](https://example.org/boats)",
    "inline code": "{w} `ferry(9)`",
    "code block": '```python\n# {w}\ndef ferry(at: int) -> str:\n    return f"{{at}}"  # soon\n```',
}
KINDS = {"yours": Kind.USER, "reply": Kind.ASSISTANT}


@pytest.fixture(params=["light", "dark"])
def theme(request: pytest.FixtureRequest, qapp: QApplication) -> Iterator[str]:
    with look(qapp, request.param):
        yield request.param


def _check(qapp: QApplication, kind: Kind, text: str) -> None:
    model = TranscriptModel()
    model.append(TranscriptItem(kind, text))
    delegate = TranscriptDelegate()
    delegate.model = model
    delegate.set_width(WIDTH)
    delegate.set_dark(is_dark())
    font = QFont(qapp.font())
    font.setPixelSize(FONT_PX)
    ink = paint_row(delegate, model, 0, qapp.palette(), font)
    assert ink.laid_out, "the text left no ink"
    stray = outside(ink.laid_out, ink.box)
    assert not stray, f"{len(stray)} of {len(ink.laid_out)} ink pixels outside {ink.box}"
    # Drawn alone in another colour, the glyphs differ only in their faintest edge pixels.
    missing = set(ink.laid_out) - set(ink.painted)
    assert len(missing) <= len(ink.laid_out) // 50, f"{len(missing)} ink pixels not painted"
    faint = [c for c in glyph_contrasts(ink) if c[0] < BODY]
    assert not faint, f"{len(faint)} glyphs under {BODY}:1, e.g. {sorted(faint)[:3]}"


@pytest.mark.parametrize("element", ELEMENTS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("script", WORDS)
def test_every_scripts_words_show_inside_their_box_and_hold_contrast(
    qapp: QApplication, theme: str, script: str, kind: str, element: str
) -> None:
    _check(qapp, KINDS[kind], ELEMENTS[element].format(w=WORDS[script]))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("script", WORDS)
def test_in_the_arabic_window_every_scripts_words_show_inside_their_box(
    qapp: QApplication, theme: str, script: str, kind: str
) -> None:
    qapp.setLayoutDirection(Qt.LayoutDirection.RightToLeft)
    try:
        _check(qapp, KINDS[kind], ELEMENTS["plain"].format(w=WORDS[script]))
    finally:
        qapp.setLayoutDirection(Qt.LayoutDirection.LeftToRight)
