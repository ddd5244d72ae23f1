"""`sync.cli.terminal`: what may reach a terminal, and how a replaced character is shown."""

from __future__ import annotations

import io
import json
import sys
import unicodedata

import pytest

from sync.cli.terminal import InertStream, escape, for_terminal, inert_streams, json_for_terminal
from tests.hostile_content import HOSTILE, unsafe_chars

# Every kind that must be replaced, one example each, with how it is shown.
REPLACED = [
    ("\x1b", "\\u001b"),  # ESC: every CSI/OSC sequence starts with it
    ("\x07", "\\u0007"),  # BEL ends an OSC (window title, OSC 52 clipboard)
    ("\x00", "\\u0000"),
    ("\r", "\\u000d"),  # overwrites the line from its start
    ("\t", "\\u0009"),
    ("\x08", "\\u0008"),  # backspace: hides what was before
    ("\x7f", "\\u007f"),
    ("\x85", "\\u0085"),  # NEL, a C1 newline
    ("\x9b", "\\u009b"),  # C1 CSI: one byte instead of ESC [
    ("\x9d", "\\u009d"),  # C1 OSC
    ("\u202e", "\\u202e"),  # RIGHT-TO-LEFT OVERRIDE
    ("\u202a", "\\u202a"),
    ("\u202c", "\\u202c"),
    ("\u2066", "\\u2066"),  # isolates
    ("\u2069", "\\u2069"),
    ("\u200e", "\\u200e"),  # LRM / RLM / ALM
    ("\u200f", "\\u200f"),
    ("\u061c", "\\u061c"),
    ("\u200b", "\\u200b"),  # zero-width space: hides a difference between two ids
    ("\u2060", "\\u2060"),
    ("\ufeff", "\\ufeff"),
    ("\u2028", "\\u2028"),  # line and paragraph separators
    ("\u2029", "\\u2029"),
    ("\U000e0041", "\\U000e0041"),  # a TAG character: invisible
    ("\ud800", "\\ud800"),  # a lone surrogate: cannot even be encoded
]


@pytest.mark.parametrize(("char", "shown"), REPLACED, ids=[hex(ord(c)) for c, _ in REPLACED])
def test_each_dangerous_character_is_replaced_by_a_visible_escape(char: str, shown: str) -> None:
    assert for_terminal(f"a{char}b") == f"a{shown}b"
    assert for_terminal(f"a\n{char}b\n", multiline=True) == f"a\n{shown}b\n"
    assert escape(char) == shown


@pytest.mark.parametrize(
    "text", ["plain", "é ü ß", "שלום עולם", "مرحبا", "日本語", "👨‍👩‍👧 family", "क्‍ष", "a\\u001b"]
)
def test_ordinary_text_is_printed_as_it_is(text: str) -> None:
    """Letters of any script, emoji ZWJ sequences and ZWNJ/ZWJ in Indic text are kept."""
    assert for_terminal(text) == text


def test_a_newline_is_kept_only_where_a_multi_line_text_is_meant() -> None:
    assert for_terminal("one\ntwo") == "one\\u000atwo"
    assert for_terminal("one\ntwo\r", multiline=True) == "one\ntwo\\u000d"


def test_every_control_and_format_character_of_unicode_is_replaced() -> None:
    """The whole categories, not a list that misses one: Cc, Cf (but ZWNJ/ZWJ), Zl, Zp."""
    for code in [*range(0x00, 0x20), *range(0x7F, 0xA0), *range(0x2000, 0x2070), 0xFEFF]:
        char = chr(code)
        category = unicodedata.category(char)
        dangerous = category in ("Cc", "Zl", "Zp") or (
            category == "Cf" and char not in "\u200c\u200d"
        )
        assert (for_terminal(char) != char) is dangerous, hex(code)


def test_json_for_terminal_round_trips_and_carries_no_control_character() -> None:
    value = {"id": HOSTILE, "t": ["\U000e0041\ud800\x85", "é"], "n": 3, "z": None}
    text = json_for_terminal(value)
    assert json.loads(text) == value
    assert unsafe_chars(text) == []
    assert "é" in text  # readable UTF-8, not \\u00e9
    assert "\\u202e" in text and "\\u009b" in text and "\\udb40\\udc41" in text


def test_the_inert_stream_replaces_what_is_written_in_pieces() -> None:
    inner = io.StringIO()
    stream = InertStream(inner)
    for piece in ("\x1b", "]0;x", "\x07", "\nok\n"):
        stream.write(piece)
    assert inner.getvalue() == "\\u001b]0;x\\u0007\nok\n"


def test_inert_streams_wrap_stdout_and_stderr_once_and_restore_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = sys.stdout, sys.stderr
    with inert_streams(), inert_streams():
        print("\x1b[2J")
        print("\u202e", file=sys.stderr)
    assert (sys.stdout, sys.stderr) == before
    out, err = capsys.readouterr()
    assert (out, err) == ("\\u001b[2J\n", "\\u202e\n")
