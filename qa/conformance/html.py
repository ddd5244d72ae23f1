"""`converge conformance --html FILE`: the rule table with each failure's evidence, as one
self-contained page (`qa.htmlpage`) for the people who read a deployment's result."""

from __future__ import annotations

from pathlib import Path

from qa import htmlpage
from qa.conformance.runner import Outcome

_NOT_CHECKED = '<span class="verdict skip">not checked</span>'


def render(outcome: Outcome, server: str) -> str:
    """The page: a summary, then one row per rule in run order (failures first to read)."""
    failed = sum(v.failed for v in outcome.verdicts)
    # nothing failed but some rules were cut off: not a FAIL, not a pass (exit 2)
    badge = _NOT_CHECKED if not outcome.passed and not failed else htmlpage.verdict(outcome.passed)
    summary = (
        f"<h1>Conformance {badge}</h1>"
        f'<p class="muted">{htmlpage.text(server, 500)}</p>'
        + htmlpage.definitions(
            [
                ("rules", len(outcome.verdicts)),
                ("failed", failed),
                ("not checked", outcome.unchecked),
                ("requests", outcome.requests),
                ("seconds", f"{outcome.seconds:.1f}"),
                ("left behind", " ".join(outcome.left_behind) or "nothing"),
            ]
        )
    )
    # Failures first, then rules not checked, then passes; stable: run order kept within.
    ordered = sorted(outcome.verdicts, key=lambda v: (v.passed, not v.checked))
    rows = [
        [
            f"<td>{htmlpage.text(v.rule, 200)}</td>",
            f"<td>{htmlpage.text(v.section, 50)}</td>",
            f"<td>{htmlpage.verdict(v.passed) if v.checked else _NOT_CHECKED}</td>",
            f"<td>{htmlpage.text(v.summary, 500)}</td>",
            f'<td class="ev">{htmlpage.text(v.evidence, multiline=True)}</td>',
            f"<td>{v.seconds:.2f}</td>",
        ]
        for v in ordered
    ]
    rules = "<h2>Rules</h2>" + htmlpage.table(
        ["rule", "section", "result", "what it checks", "evidence", "s"], rows
    )
    return htmlpage.page("converge conformance", [summary, rules])


def write_html(outcome: Outcome, server: str, path: Path) -> None:
    htmlpage.write(path, render(outcome, server))
