"""What the command line prints is inert: no text from outside can drive the terminal.

Titles, ids and error messages come from a server, from content or from a file, and a
terminal obeys what it is sent: ESC sequences set the window title, clear the screen or
write the clipboard (OSC 52), C1 controls (U+009B is a one-character CSI) do the same on
many terminals, and bidirectional or invisible format characters (U+202E...) reorder or
hide what follows on the line (CONTRACT §10.1). So every character of those kinds is
replaced *visibly*, by the escape JSON itself uses: `\\u` and four lowercase hex digits
(`\\u001b`, `\\u009b`, `\\u202e`; a character beyond U+FFFF as `\\U` and eight). One
scheme everywhere means a QA engineer greps one pattern (`\\\\[uU][0-9a-f]{4}`) in text
and in `--json` output alike.

Replaced: every C0 control (including TAB and CR; LF only where a single line is meant),
DEL, every C1 control, every format character (Unicode category Cf: the bidi embeddings,
overrides, isolates and marks, zero-width spaces, BOM, tags...) except ZWNJ/ZWJ
(U+200C/U+200D, which scripts and emoji sequences need and which reorder nothing), the
line and paragraph separators (U+2028/U+2029) and lone surrogates (which cannot be
encoded and would end the command with a traceback).

`inert_streams()` wraps stdout and stderr so that everything a command writes (its
prints, argparse's and logging's output) passes through `for_terminal`; the fields that
must stay on one line (an id, a title, an error sentence) are also passed through it with
`multiline=False` where they are formatted, so a newline from a server cannot forge a
line of output. `json_for_terminal` keeps `--json` output valid JSON that decodes to the
same strings while no control byte reaches the terminal.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, TextIO, cast

if TYPE_CHECKING:
    import regex

#: The unsafe characters (see the module's docstring), as Unicode properties of the
#: maintained `regex` module (its Unicode data follows the standard, not the interpreter).
#: LF is excluded from the multi-line form only.
_CLASS = r"[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}--[\u200c\u200d%s]]+"


@functools.cache
def _unsafe(kept: str = "") -> regex.Pattern[str]:
    """The unsafe characters but `kept`, compiled on first use: the window's start-up logs
    through this module and paints long before any text needs replacing."""
    import regex

    return regex.compile(_CLASS % kept, flags=regex.VERSION1)


def is_unsafe(char: str) -> bool:
    """Whether one character must never reach a terminal as itself (LF included:
    `for_terminal` keeps it only where a multi-line text is meant)."""
    return _unsafe().fullmatch(char) is not None


def escape(char: str) -> str:
    """The visible stand-in of one replaced character: `\\u202e`, `\\U000e0041`."""
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _replace(match: regex.Match[str]) -> str:
    return "".join(escape(c) for c in match.group())


def for_terminal(text: str, *, multiline: bool = False) -> str:
    """`text` with every unsafe character replaced by its visible escape; with `multiline`,
    line feeds (a message meant to span lines) are kept."""
    # The common case, in C: no Cc, Cf, Zl, Zp or Cs at all (but the line feeds kept).
    if (text.replace("\n", "") if multiline else text).isprintable():
        return text
    pattern = _unsafe("\\n") if multiline else _unsafe()
    return str(pattern.sub(_replace, text))


def for_document(text: str, *, multiline: bool = True) -> str:
    """`for_terminal` for a text file a person reads with `cat` as often as in an editor
    (a Markdown export): tabs are kept too, since a message's code is indented with them
    and a tab drives no terminal."""
    if text.isprintable():
        return text
    if multiline:  # a message written on Windows: its line ends are line feeds, not \u000d
        text = text.replace("\r\n", "\n")
    pattern = _unsafe("\\n\\t") if multiline else _unsafe()
    return str(pattern.sub(_replace, text))


def _json_escape(match: regex.Match[str]) -> str:
    out = []
    for char in match.group():
        code = ord(char)
        if code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:  # JSON spells a character beyond the BMP as its UTF-16 surrogate pair
            code -= 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
    return "".join(out)


def json_for_terminal(value: Any) -> str:
    """`value` as JSON (readable UTF-8, not `\\u` for every accent) in which every unsafe
    character is a JSON escape: `json.loads` gives back the same strings, and no control
    or bidi character reaches the terminal. `json.dumps` escapes only C0 by itself; every
    unsafe character it leaves can only be inside a string literal (the rest of JSON is
    ASCII), where a `\\u` escape means exactly that character."""
    text = json.dumps(value, ensure_ascii=False)
    if text.isprintable():  # no line breaks either: one line without indent
        return text
    return str(_unsafe().sub(_json_escape, text))


class InertFormatter(logging.Formatter):
    """Log lines for a console: a record's message may quote a server (an error's words, an
    id), so the formatted line, traceback included, is `for_terminal(..., multiline=True)`.
    For handlers whose stream is not already an `InertStream` (the window's console)."""

    def format(self, record: logging.LogRecord) -> str:
        return for_terminal(super().format(record), multiline=True)


class InertStream:
    """A text stream that writes `for_terminal(text, multiline=True)` to `inner`.

    A plain object, not an `io.TextIOBase`: that one flushes and closes itself when it is
    collected, long after `inner` (a test's captured stream, a closed pipe) may be gone;
    this one owns nothing and leaves `inner`'s life to its owner. What it does not define
    (`buffer`, `errors`, `closed`...) is `inner`'s."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        self.inner.write(for_terminal(text, multiline=True))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.inner.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@contextlib.contextmanager
def inert_streams() -> Iterator[None]:
    """For the duration, `sys.stdout` and `sys.stderr` write only inert text (nested uses
    do not wrap twice); the original streams are back afterwards."""
    saved = sys.stdout, sys.stderr
    if not isinstance(sys.stdout, InertStream):
        sys.stdout = cast(TextIO, InertStream(sys.stdout))
    if not isinstance(sys.stderr, InertStream):
        sys.stderr = cast(TextIO, InertStream(sys.stderr))
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        sys.stdout, sys.stderr = saved
