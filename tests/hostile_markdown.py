"""Content built to make the transcript's renderer slow: code for the lexers and Markdown.

`hostile_code(size)` is what `python -m bench lexers` measures each Pygments lexer on, and
what the tests feed every allowed language at a test's size; `HOSTILE_MARKDOWN` is whole
messages of the shapes that cost the parser, the highlighter or Qt's layout most, small
enough for a unit test (`python -m bench markdown` measures the same shapes at 100 KB).
"""

from __future__ import annotations


def hostile_code(size: int) -> dict[str, str]:
    """Code that makes regular-expression lexers backtrack, each `size` characters: an
    opening (an unterminated string or comment) and a unit repeated to fill the size."""
    shapes = {
        "indentation": ("", " " * 64 + "\n"),
        "deep indentation": ("", "".join(" " * i + "x\n" for i in range(0, 400, 4))),
        "tabs": ("", "\t" * 64 + "\n"),
        "long line": ("", "a"),
        "long line of words": ("", "abc_def "),
        "nested brackets": ("", "([{"),
        "open parens": ("", "("),
        "unterminated string": ('"', "a"),
        "unterminated single quote": ("'", "a"),
        "unterminated triple quote": ('"""', "a"),
        "unterminated comment": ("/*", "a"),
        "unterminated html comment": ("<!--", "a"),
        "unterminated backtick": ("`", "a"),
        "backslash quotes": ("", '\\"'),
        "key value lines": ("", "a = b\n"),
        "section lines": ("", "[a]\n"),
        "numbers": ("", "1.2e3 "),
        "all punctuation": ("", "!#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
        "line continuations": ("", "\\\n"),
        "code": ("", "def f(x):\n    return {\"a\": [x, 1.5, 's']}  # c\n"),
        **{f"repeated {mark}": ("", mark) for mark in ".-=#/\\*<:$%@\"'"},
    }
    return {
        name: (opening + unit * (size // len(unit) + 1))[:size]
        for name, (opening, unit) in shapes.items()
    }


def hostile_markdown(size: int) -> dict[str, str]:
    """Whole messages of about `size` characters: fences of hostile code in languages that
    are allowed, not allowed and unknown, and Markdown's own costly shapes."""
    code = hostile_code(size)
    fences = {
        f"```{language} of {name}": f"```{language}\n{text}\n```"
        for language in ("python", "systemd", "make", "registry", "nosuchlanguage")
        for name, text in code.items()
        if name in {"indentation", "deep indentation", "repeated /", "unterminated string"}
    }
    unit = {
        "brackets": "[",
        "images": "![",
        "deep quote": ">",
        "emphasis": "*a ",
        "code spans": "`a",
        "table rows": "|x|y|\n",
        "an unclosed fence": "```python\n" + "x = (\n",
        "many fences": "```py\nx\n```\n\n",
    }
    shapes = {name: (piece * (size // len(piece) + 1))[:size] for name, piece in unit.items()}
    return {**fences, **shapes}
