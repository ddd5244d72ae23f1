"""The three forms of a conformance outcome: a table for people, JSON and JUnit XML for CI.

JSON is one object, `{"passed", "complete", "requests", "seconds", "left_behind", "rules":
[{"rule", "section", "passed", "checked", "evidence"}]}`: the array of the brief inside an
object, so that a summary can grow without breaking a consumer. JUnit XML is built with
`xml.etree`: one testcase per rule, a `failure` element carrying the evidence, a `skipped`
one for a rule the deadline left unchecked; evidence from the server is escaped by the
library, never concatenated.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qa import junit
from qa.conformance.runner import Outcome
from sync.cli.terminal import for_terminal


def table(outcome: Outcome) -> str:
    """One line per rule (rule id, section, PASS/FAIL, evidence), then a summary."""
    width = max((len(v.rule) for v in outcome.verdicts), default=4)
    lines = [f"{'rule':<{width}}  {'section':<8}  result  evidence"]
    for v in outcome.verdicts:
        mark = "pass" if v.passed else "FAIL" if v.checked else "skip"
        lines.append(f"{v.rule:<{width}}  {v.section:<8}  {mark:<6}  {for_terminal(v.evidence)}")
    passed = sum(v.passed for v in outcome.verdicts)
    unchecked = f", {outcome.unchecked} not checked" if outcome.unchecked else ""
    lines.append(
        f"{passed} of {len(outcome.verdicts)} rules pass{unchecked}; "
        f"{outcome.requests} requests in {outcome.seconds:.1f} s"
    )
    if outcome.left_behind:
        lines.append("not cleaned up (delete by hand): " + " ".join(outcome.left_behind))
    return "\n".join(lines)


def as_json(outcome: Outcome) -> dict[str, Any]:
    return {
        "passed": outcome.passed,
        "complete": outcome.unchecked == 0,
        "requests": outcome.requests,
        "seconds": round(outcome.seconds, 3),
        "left_behind": list(outcome.left_behind),
        "rules": [
            {
                "rule": v.rule,
                "section": v.section,
                "passed": v.passed,
                "checked": v.checked,
                "evidence": v.evidence,
            }
            for v in outcome.verdicts
        ],
    }


def write_junit(outcome: Outcome, path: Path) -> None:
    """One `testsuite` named `conformance`, one `testcase` per rule (`qa.junit`)."""
    cases = [
        junit.Case(
            classname=f"conformance.{v.section}",
            name=v.rule,
            seconds=v.seconds,
            failure=f"{v.summary}\n{v.evidence}" if v.failed else None,
            message=v.evidence if v.failed else None,
            skipped=None if v.checked else v.evidence,
        )
        for v in outcome.verdicts
    ]
    junit.write(path, "conformance", cases, outcome.seconds)
