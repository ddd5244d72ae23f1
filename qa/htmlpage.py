"""Self-contained HTML reports (`converge qa --html`, `converge conformance --html`).

A report must open from a CI artifact store or an e-mail attachment with no network: the
CSS is inline, plots are inline SVG, and there are no scripts. Every text in it came from
a server under test or from a run against one, so every text goes through `text()`:
bounded, controls (bidi overrides included, which could reorder what a reader sees) shown
as visible escapes (`sync.cli.terminal`), then `html.escape` with quotes, so it can sit in an
element or an attribute and stays inert.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from pathlib import Path

from qa.junit import bounded
from sync.cli.terminal import for_terminal
from sync.files.private_files import write_private_at

#: One cell's or paragraph's bound (characters, before escaping).
TEXT_LIMIT = 4000

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;
max-width:1180px;padding:0 16px;color:#1d232b;background:#fbfbfc}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;
border-bottom:1px solid #dde1e6;padding-bottom:4px}
.verdict{display:inline-block;padding:2px 10px;border-radius:10px;font-weight:600}
.pass{background:#e3f4e8;color:#17602f}.fail{background:#fde5e3;color:#9b1c14}
.skip{background:#eef0f3;color:#59626e}
table{border-collapse:collapse;width:100%;margin:6px 0}
th,td{text-align:left;vertical-align:top;padding:5px 8px;border-bottom:1px solid #e6e9ed}
th{background:#f1f3f5;font-weight:600}td.ev{font-family:ui-monospace,Menlo,monospace;
font-size:12px;white-space:pre-wrap;word-break:break-word}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:6px 0}
dt{color:#59626e}dd{margin:0}.muted{color:#6b7380}svg{max-width:100%;height:auto}
"""


def text(value: object, limit: int = TEXT_LIMIT, *, multiline: bool = False) -> str:
    """`value` as inert HTML text: bounded, controls visible, markup escaped."""
    return html.escape(for_terminal(bounded(str(value), limit), multiline=multiline), quote=True)


def verdict(passed: bool | None) -> str:
    """A pass/FAIL badge; None: the check did not apply."""
    if passed is None:
        return '<span class="verdict skip">n/a</span>'
    return (
        '<span class="verdict pass">pass</span>'
        if passed
        else '<span class="verdict fail">FAIL</span>'
    )


def definitions(pairs: Iterable[tuple[str, object]]) -> str:
    """A `<dl>` of (term, value) pairs, both escaped."""
    rows = "".join(f"<dt>{text(k)}</dt><dd>{text(v)}</dd>" for k, v in pairs)
    return f"<dl>{rows}</dl>"


def table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A table whose cells are already HTML (callers escape with `text()`)."""
    head = "".join(f"<th>{text(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def page(title: str, sections: Iterable[str]) -> str:
    """The whole document: inline CSS, no scripts, no external resource."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{text(title, 200)}</title><style>{CSS}</style></head><body>"
        + "\n".join(sections)
        + "</body></html>\n"
    )


def write(path: Path, document: str) -> None:
    """The page as a private file (`sync.files.private_files.write_private_at`): a report may quote
    a server's words and a user's conversations."""
    write_private_at(path, document)
