"""What a message may cost the UI thread is bounded whatever it holds, proven by counting
work rather than timing it: a fence naming a lexer off the allowlist runs no lexer, a
block that runs out of its budget is shown plain and never tried again, and a streamed
reply passes each character to the Markdown parser a bounded number of times, stops at
its bound and says so."""

from __future__ import annotations

import html
import re
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

import pytest
from pygments.lexer import Lexer
from pygments.lexers import LEXERS
from PySide6.QtCore import QCoreApplication, QTranslator
from PySide6.QtGui import QFont, QTextCursor

import ui.pane.transcript_delegate as transcript_delegate
import ui.pane.transcript_events as transcript_events
import ui.text.code_highlight as code_highlight
import ui.text.markdown_html as markdown_html
from bench.markdown import REPLY
from sync import Event
from tests.hostile_markdown import hostile_markdown
from ui.pane.transcript_events import TranscriptBuilder
from ui.pane.transcript_model import TranscriptModel
from ui.text.rich_text import InertDocument, render_message

pytestmark = pytest.mark.usefixtures("qapp", "lexers_loaded")

AT = "2026-11-30T05:14:13.123456Z"
COLOURED = '<span style="color:'


@pytest.fixture(autouse=True)
def fresh_highlighter(monkeypatch: pytest.MonkeyPatch) -> None:
    """No block is remembered from another test."""
    monkeypatch.setattr(code_highlight, "_over_budget", OrderedDict(), raising=False)
    monkeypatch.setattr(code_highlight, "_coloured", OrderedDict(), raising=False)


@pytest.fixture
def lexed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The class names of the lexers asked for tokens, in order."""
    calls: list[str] = []
    real = Lexer.get_tokens

    def get_tokens(self: Lexer, text: str, unfiltered: bool = False) -> Iterator[Any]:
        calls.append(type(self).__name__)
        return real(self, text, unfiltered)

    monkeypatch.setattr(Lexer, "get_tokens", get_tokens)
    return calls


@pytest.mark.parametrize("language", ["systemd", "ini", "pycon", "matlab", "apacheconf"])
def test_a_fence_naming_a_lexer_off_the_allowlist_runs_no_lexer(
    language: str, lexed: list[str]
) -> None:
    rendered = render_message(f"```{language}\n[Unit]\n    Description=x\n```")
    assert lexed == []
    assert COLOURED not in rendered.html
    assert rendered.code_blocks == ("[Unit]\n    Description=x",)


@pytest.mark.parametrize("alias", ["python", "py", "python3", "bash", "sh", "shell", "zsh"])
def test_an_alias_of_an_allowed_lexer_is_coloured(alias: str, lexed: list[str]) -> None:
    rendered = render_message(f"```{alias}\nexport A=1 # note\n```")
    assert COLOURED in rendered.html
    assert set(lexed) <= code_highlight.ALLOWED_LEXERS


def test_every_allowed_lexer_is_one_pygments_has() -> None:
    assert set(LEXERS) >= code_highlight.ALLOWED_LEXERS


def test_a_block_out_of_budget_is_shown_plain_and_never_tried_again(
    monkeypatch: pytest.MonkeyPatch, lexed: list[str]
) -> None:
    text = "```python\ndef add(a, b):\n    return a + b\n```"
    monkeypatch.setattr(code_highlight, "HIGHLIGHT_BUDGET_S", 0.0)
    first = render_message(text)
    assert COLOURED not in first.html and "return a + b" in first.html
    monkeypatch.setattr(code_highlight, "HIGHLIGHT_BUDGET_S", 3600.0)
    again = render_message(text, dark=True)  # a repaint, a theme change
    assert COLOURED not in again.html
    assert lexed == ["PythonLexer"]  # tried once, remembered
    other = render_message("```python\ndef sub(a, b):\n    return a - b\n```")
    assert COLOURED in other.html  # another block has its own chance


def test_the_budget_is_measured_on_the_clock_while_tokens_come(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ticks = iter(range(1_000_000))
    monkeypatch.setattr(code_highlight, "clock", lambda: next(ticks) * 0.001)  # 1 ms a look
    code = "\n".join(f"x{n} = {n}" for n in range(100))  # hundreds of tokens
    assert COLOURED not in code_highlight.highlight(code, "python", dark=False)
    assert COLOURED in code_highlight.highlight("x = 1", "python", dark=False)


def test_hostile_messages_run_only_allowed_lexers(lexed: list[str]) -> None:
    for name, text in hostile_markdown(1_000).items():
        rendered = render_message(text)
        assert rendered.plain, name
    assert set(lexed) <= code_highlight.ALLOWED_LEXERS


# Streaming ---------------------------------------------------------------------------------

_sequence = iter(range(1, 10_000_000))


def _delta(text: str) -> Event:
    return Event("ses_1", "run_1", next(_sequence), "message.assistant.delta", AT, {"text": text})


def _stream(text: str, piece: int) -> tuple[TranscriptModel, TranscriptBuilder]:
    """`text` streamed in pieces, the row rendered after each as the pane paints it."""
    model = TranscriptModel()
    builder = TranscriptBuilder(model)
    for start in range(0, len(text), piece):
        builder.append_event(_delta(text[start : start + piece]))
        model.item(model.rowCount() - 1).render(False)
    return model, builder


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of every text handed to the Markdown parser."""
    lengths: list[int] = []
    real = markdown_html._PARSER.parse

    def parse(text: str, env: Any = None) -> Any:
        lengths.append(len(text))
        return real(text, env)

    monkeypatch.setattr(markdown_html._PARSER, "parse", parse)
    return lengths


def test_a_streamed_reply_is_parsed_in_proportion_to_its_length(parsed: list[int]) -> None:
    text = "\n\n".join([REPLY] * 20)  # about 14,000 characters
    _stream(text, piece=100)
    assert sum(parsed) <= 6 * len(text)


def test_a_streamed_reply_without_blank_lines_is_parsed_in_proportion_to_its_length(
    parsed: list[int],
) -> None:
    text = "word " * 6_000  # one paragraph: it never settles
    _stream(text, piece=100)
    assert sum(parsed) <= 6 * len(text)


def test_a_streamed_reply_renders_as_the_whole_reply_once_it_ends() -> None:
    text = "\n\n".join([REPLY] * 3)
    model, builder = _stream(text, piece=37)
    item = model.item(0)
    whole = render_message(text)
    streamed = item.render(False)
    assert streamed.code_blocks == whole.code_blocks  # Copy anchors numbered across pieces
    assert streamed.plain == whole.plain
    builder.append_event(Event("ses_1", "run_1", next(_sequence), "run.completed", AT, {}))
    assert not item.streaming
    assert item.render(False).html == whole.html


class _Marking(QTranslator):
    def translate(
        self, context: str, source: str, disambiguation: str | None = None, n: int = -1
    ) -> str:
        return f"⟦{source}⟧" if source else ""


def test_a_streamed_reply_stops_at_its_bound_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transcript_events, "MAX_STREAMED_CHARS", 1_000)
    translator = _Marking()
    QCoreApplication.installTranslator(translator)
    try:
        model, builder = _stream("word " * 400, piece=30)
        item = model.item(0)
        assert len(item.text) == 1_000 and item.truncated
        shown = item.render(False).html
        assert "⟦This reply is too long to show in full here.⟧" in shown
        builder.append_event(_delta("more"))
        assert len(item.text) == 1_000
        whole = "word " * 500
        data = {"role": "assistant", "content": [{"type": "text", "text": whole}]}
        builder.append_event(Event("ses_1", "run_1", 9_999_999, "message.assistant", AT, data))
        assert item.text == whole and "too long" not in item.render(False).html
    finally:
        QCoreApplication.removeTranslator(translator)


def test_a_streamed_reply_is_laid_out_in_proportion_to_its_length(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each piece hands Qt its open tail (and what settled since), not the whole reply: the
    document of the previous piece is kept and grown, and it reads as a fresh one does."""
    handed: list[int] = []

    class CountedDocument(InertDocument):
        def setHtml(self, html: str) -> None:
            handed.append(len(html))
            super().setHtml(html)

    class CountedCursor(QTextCursor):
        def insertHtml(self, html: str) -> None:
            handed.append(len(html))
            super().insertHtml(html)

    monkeypatch.setattr(transcript_delegate, "InertDocument", CountedDocument)
    monkeypatch.setattr(transcript_delegate, "QTextCursor", CountedCursor)
    text = "\n\n".join([REPLY] * 20)
    model = TranscriptModel()
    builder = TranscriptBuilder(model)
    cache = transcript_delegate.DocumentCache()
    font = QFont()
    for start in range(0, len(text), 100):
        builder.append_event(_delta(text[start : start + 100]))
        doc = cache.get(model.item(model.rowCount() - 1), 700, False, font)
    item = model.item(model.rowCount() - 1)
    whole = len(item.render(False).html)
    assert sum(handed) <= 8 * whole, (sum(handed), whole)
    fresh = transcript_delegate.DocumentCache().get(item, 700, False, font)
    lines = [line for line in doc.toPlainText().split("\n") if line.strip()]
    assert lines == [line for line in fresh.toPlainText().split("\n") if line.strip()]


def test_every_allowed_lexer_colours_code_with_token_types_of_its_own() -> None:
    """A lexer's own token types (YAML's `Literal.Scalar.Plain`) take their nearest styled
    parent's colours: a ```yaml block raised KeyError out of the renderer."""
    sample = 'key: value\n- item\n\'text\' "text" # comment\n<tag a="1">x</tag> 1.5 @x $y\n'
    for name in code_highlight.ALLOWED_LEXERS:
        alias = LEXERS[name][2][0]
        for dark in (False, True):
            spans = code_highlight.highlight(sample, alias, dark=dark)
            assert html.unescape(re.sub(r"<[^>]*>", "", spans)) == sample, alias
    assert "<span" in render_message("```yaml\nkey: value\n```").html
