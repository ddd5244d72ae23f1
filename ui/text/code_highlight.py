"""A code block's text as coloured spans in Qt's rich-text subset (Pygments' lexers).

Qt's rich-text engine reads inline `style` attributes but not a `<style>` sheet's classes
reliably, so each token becomes a `<span style="color:…">` of our own from the Pygments
style's colour, weight and slant (no token background: a style's error boxes would
scatter patches over the block). The language is the fence's info word. Nothing is guessed
(`guess_lexer` tries every lexer on the text).

Highlighting runs on the UI thread, and a lexer is a set of regular expressions that content
chooses: many backtrack over the rest of the block on some input, a few for minutes. So a
block is coloured only when its language is one of `ALLOWED_LEXERS` (lexers whose every token
came quickly on hostile input, `python -m bench lexers`; any alias of one will do), it is at
most `MAX_HIGHLIGHT_CHARS` long and its tokens come within `HIGHLIGHT_BUDGET_S`. Anything
else is shown uncoloured, and a block that ran out of time is remembered by its content and
language so that no later paint, theme change or streamed piece tries it again.

Loading a lexer imports its module and compiling it (its first instance) builds its regular
expressions: tens of milliseconds, which the UI thread must not pay. So `highlight` colours
only with lexers already loaded (`load`, on a worker thread: `WindowController` runs
`pending`/`load` when the first conversation opens); a block whose lexer is not loaded yet is
shown uncoloured, not remembered as over budget, its language is loaded before the others,
and `recolour_due` tells the transcript when every lexer a block waited for is in (its rows
are then rendered again).
"""

from __future__ import annotations

import hashlib
import html
import importlib
import re
import time
from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache

from pygments.lexer import Lexer
from pygments.lexers import LEXERS
from pygments.style import StyleMeta
from pygments.styles import get_style_by_name
from pygments.token import _TokenType
from PySide6.QtGui import QColor

from ui.theme.palette_text import BODY, readable
from ui.theme.style import colours

#: Blocks longer than this are shown in the monospace font without colours.
MAX_HIGHLIGHT_CHARS = 4_000
#: How long one block may take to colour; past it the block is shown uncoloured.
HIGHLIGHT_BUDGET_S = 0.010
#: The lexers (class names) a fence may use: those whose every token came within 3 ms of
#: CPU on hostile input of `MAX_HIGHLIGHT_CHARS` (`python -m bench lexers --check`).
ALLOWED_LEXERS = frozenset(
    {
        "BashLexer",
        "BashSessionLexer",
        "CLexer",
        "CMakeLexer",
        "CSharpLexer",
        "ClojureLexer",
        "CppLexer",
        "CssLexer",
        "DartLexer",
        "DiffLexer",
        "DockerLexer",
        "ElixirLexer",
        "ErlangLexer",
        "FSharpLexer",
        "FortranLexer",
        "GoLexer",
        "GraphQLLexer",
        "GroovyLexer",
        "HaskellLexer",
        "HtmlLexer",
        "JavaLexer",
        "JavascriptLexer",
        "JsonLexer",
        "JsxLexer",
        "JuliaLexer",
        "KotlinLexer",
        "LuaLexer",
        "MakefileLexer",
        "MarkdownLexer",
        "MySqlLexer",
        "NginxConfLexer",
        "NimrodLexer",
        "ObjectiveCLexer",
        "OcamlLexer",
        "PerlLexer",
        "PhpLexer",
        "PostgresLexer",
        "PowerShellLexer",
        "PropertiesLexer",
        "ProtoBufLexer",
        "PythonLexer",
        "RegeditLexer",
        "RubyLexer",
        "RustLexer",
        "SLexer",
        "ScalaLexer",
        "ScssLexer",
        "SqlLexer",
        "SwiftLexer",
        "TOMLLexer",
        "TerraformLexer",
        "TexLexer",
        "TextLexer",
        "TsxLexer",
        "TypeScriptLexer",
        "VimLexer",
        "XmlLexer",
        "YamlLexer",
        "ZigLexer",
    }
)
#: The Pygments styles for a light and a dark palette.
LIGHT_STYLE = "default"
DARK_STYLE = "github-dark"
#: The clock the budget is measured on (a test gives its own).
clock: Callable[[], float] = time.perf_counter

_LANGUAGE = re.compile(r"[A-Za-z0-9_+#.-]{1,32}")
_REMEMBERED = 4_096  # blocks known to be over budget
_KEPT = 64  # coloured blocks kept (a streamed reply re-renders its last block per piece)
_over_budget: OrderedDict[tuple[bytes, str], None] = OrderedDict()
_coloured: OrderedDict[tuple[bytes, str, bool], str] = OrderedDict()
#: The allowed lexers loaded and compiled, by class name (written by `load` on a worker
#: thread, read by `highlight`: a dict's item is set whole).
_ready: dict[str, Lexer] = {}
#: Allowed lexers a block was shown uncoloured for since the last `recolour_due`.
_waited: set[str] = set()
#: How many blocks were shown uncoloured for want of a loaded lexer (a renderer compares it
#: before and after to know whether its rows are to be rendered again).
misses = 0


def language_of(info: str) -> str:
    """The language a fence names (its info string's first word), or "" when it names
    none we could look up."""
    word = info.strip().split(maxsplit=1)[0] if info.strip() else ""
    return word if _LANGUAGE.fullmatch(word) else ""


@lru_cache(maxsize=1)
def _allowed_by_alias() -> dict[str, str]:
    """Each alias of an allowed lexer, to its class name, read from Pygments' table of
    lexers (no lexer module is imported). An alias two lexers share is the first one's, as
    `find_lexer_class_by_name` finds it."""
    found: dict[str, str] = {}
    for name, (_module, _title, aliases, _files, _mimes) in LEXERS.items():
        for alias in aliases:
            found.setdefault(alias, name)
    return {alias: name for alias, name in found.items() if name in ALLOWED_LEXERS}


def _allowed(language: str) -> str | None:
    """The class name of the allowed lexer `language` is an alias of."""
    return _allowed_by_alias().get(language.lower())


@lru_cache(maxsize=2)
def _style(dark: bool) -> StyleMeta:
    return get_style_by_name(DARK_STYLE if dark else LIGHT_STYLE)


@lru_cache(maxsize=1024)
def _span_style(dark: bool, ttype: _TokenType) -> str:
    style = _style(dark)
    # A lexer may make token types of its own (YAML's `Literal.Scalar.Plain`) that no style
    # names: they take their nearest named parent's colours, as Pygments' formatters do.
    while not style.styles_token(ttype) and ttype.parent is not None:
        ttype = ttype.parent
    found = style.style_for_token(ttype)
    parts = []
    if found["color"]:
        parts.append(f"color:{_held(found['color'], dark)}")
    if found["bold"]:
        parts.append("font-weight:600")
    if found["italic"]:
        parts.append("font-style:italic")
    return ";".join(parts)


def _held(color: str, dark: bool) -> str:
    """A style's token colour held to body contrast on the reply's bubble, which a code
    block's text is drawn on: no Pygments style holds every token (comments, whitespace)
    to 4.5:1 there (decision 0205)."""
    bubble = QColor(colours(dark)["assistant_bg"])
    return readable(QColor(f"#{color}"), (bubble,), BODY).name()


def load(name: str) -> None:
    """Import and compile the allowed lexer `name` and the styles' colours for its first
    tokens: to be run off the UI thread."""
    cls = getattr(importlib.import_module(LEXERS[name][0]), name)
    # A RegexLexer compiles its table here. Markdown's would look up a nested fence's lexer by
    # name, any lexer at all, and import it while colouring: its fences stay one string.
    lexer: Lexer = cls(stripnl=False, ensurenl=False, handlecodeblocks=False)
    for dark in (False, True):
        _colour("x", lexer, dark)
    _ready[name] = lexer


def pending() -> str | None:
    """The next allowed lexer to load, one that a block waits for first; None when all
    are loaded."""
    for name in sorted(_waited):
        if name not in _ready:
            return name
    return next((name for name in sorted(ALLOWED_LEXERS) if name not in _ready), None)


def recolour_due() -> bool:
    """Whether blocks were shown uncoloured for lexers that are all loaded now (once: the
    rows that showed them are to be rendered again)."""
    if not _waited or any(name not in _ready for name in _waited):
        return False
    _waited.clear()
    return True


def warm_up() -> None:
    """Load every allowed lexer, here and now (a script's or a test's: the window loads them
    with `pending` and `load` on a worker thread)."""
    while (name := pending()) is not None:
        load(name)


def highlight(code: str, language: str, *, dark: bool) -> str:
    """`code` escaped, in coloured spans when `language` has an allowed lexer, loaded,
    and the block is coloured within its budget (for a `<pre>`)."""
    global misses
    name = _allowed(language) if language and len(code) <= MAX_HIGHLIGHT_CHARS else None
    if name is None:
        return html.escape(code, quote=False)
    lexer = _ready.get(name)
    if lexer is None:  # not loaded yet: plain this time, coloured once it is (`load`)
        _waited.add(name)
        misses += 1
        return html.escape(code, quote=False)
    digest = hashlib.blake2b(code.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    if (digest, name) in _over_budget:
        return html.escape(code, quote=False)
    done = _coloured.get((digest, name, dark))
    if done is not None:
        _coloured.move_to_end((digest, name, dark))
        return done
    coloured = _colour(code, lexer, dark)
    if coloured is None:
        _keep(_over_budget, (digest, name), None, _REMEMBERED)
        return html.escape(code, quote=False)
    _keep(_coloured, (digest, name, dark), coloured, _KEPT)
    return coloured


def _colour(code: str, lexer: Lexer, dark: bool) -> str | None:
    """The spans, or None when the budget ran out first."""
    out: list[str] = []
    deadline = clock() + HIGHLIGHT_BUDGET_S
    for ttype, value in lexer.get_tokens(code):
        if clock() >= deadline:  # every token: one can take a millisecond or two
            return None
        text = html.escape(value, quote=False)
        style = _span_style(dark, ttype)
        out.append(f'<span style="{style}">{text}</span>' if style and value.strip() else text)
    return "".join(out)


def _keep[K, V](cache: OrderedDict[K, V], key: K, value: V, size: int) -> None:
    cache[key] = value
    if len(cache) > size:
        cache.popitem(last=False)
