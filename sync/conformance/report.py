"""The three forms of a conformance outcome: a table for people, JSON and JUnit XML for CI.

JSON is one object, `{"passed", "requests", "seconds", "left_behind", "rules": [{"rule",
"section", "passed", "evidence"}]}`: the array of the brief inside an object, so that a
summary can grow without breaking a consumer. JUnit XML is built with `xml.etree`: one
testcase per rule, a `failure` element carrying the evidence; evidence from the server is
escaped by the library, never concatenated.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from sync.conformance.runner import Outcome
from sync.terminal import for_terminal


def table(outcome: Outcome) -> str:
    """One line per rule (rule id, section, PASS/FAIL, evidence), then a summary."""
    width = max((len(v.rule) for v in outcome.verdicts), default=4)
    lines = [f"{'rule':<{width}}  {'section':<8}  result  evidence"]
    for v in outcome.verdicts:
        mark = "pass" if v.passed else "FAIL"
        lines.append(f"{v.rule:<{width}}  {v.section:<8}  {mark:<6}  {for_terminal(v.evidence)}")
    failed = sum(not v.passed for v in outcome.verdicts)
    lines.append(
        f"{len(outcome.verdicts) - failed} of {len(outcome.verdicts)} rules pass; "
        f"{outcome.requests} requests in {outcome.seconds:.1f} s"
    )
    if outcome.left_behind:
        lines.append("not cleaned up (delete by hand): " + " ".join(outcome.left_behind))
    return "\n".join(lines)


def as_json(outcome: Outcome) -> dict[str, Any]:
    return {
        "passed": outcome.passed,
        "requests": outcome.requests,
        "seconds": round(outcome.seconds, 3),
        "left_behind": list(outcome.left_behind),
        "rules": [
            {"rule": v.rule, "section": v.section, "passed": v.passed, "evidence": v.evidence}
            for v in outcome.verdicts
        ],
    }


def write_junit(outcome: Outcome, path: Path) -> None:
    """One `testsuite` named `conformance`, one `testcase` per rule."""
    failures = sum(not v.passed for v in outcome.verdicts)
    suite = ET.Element(
        "testsuite",
        name="conformance",
        tests=str(len(outcome.verdicts)),
        failures=str(failures),
        errors="0",
        time=f"{outcome.seconds:.3f}",
    )
    for v in outcome.verdicts:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"conformance.{v.section}",
            name=v.rule,
            time=f"{v.seconds:.3f}",
        )
        if not v.passed:
            failure = ET.SubElement(case, "failure", message=_xml_safe(v.evidence))
            failure.text = _xml_safe(f"{v.summary}\n{v.evidence}")
    ET.indent(suite)
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)


def _xml_safe(text: str) -> str:
    """XML 1.0 cannot hold most C0 controls even escaped: they are shown visibly instead."""
    return for_terminal(text, multiline=True)
