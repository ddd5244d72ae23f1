"""One JUnit XML writer for `converge conformance` and `converge qa` (CI reads both).

CI systems (GitLab, Jenkins, GitHub's test reporters) agree on a small subset of the format:
one `testsuite` with `tests`/`failures`/`skipped` counts, one `testcase` per check, a
`failure` element whose `message` is a line and whose text is the evidence, a `skipped`
element for a check that could not apply. The document is built with `xml.etree`, so the
library escapes markup; what XML 1.0 cannot hold at all (most C0 controls) and what could
reorder a reader's display (bidi controls) is shown visibly instead (`sync.cli.terminal`).
Evidence comes from a server under test: each text is bounded, so a hostile server cannot
make the report as large as it likes.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sync.cli.terminal import for_terminal
from sync.files.private_files import write_private_at

#: Bounds on what one testcase carries (characters): the failure's one-line message and
#: its evidence text.
MESSAGE_LIMIT = 500
EVIDENCE_LIMIT = 20_000


@dataclass(frozen=True)
class Case:
    """One check's outcome: `failure` is its evidence (None when it passed); `skipped`
    says why it did not apply; `error` says why the run around it could not finish."""

    classname: str
    name: str
    seconds: float = 0.0
    failure: str | None = None
    message: str | None = None
    skipped: str | None = None
    error: str | None = None


def bounded(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters left out)"


def _safe(text: str, limit: int, *, multiline: bool) -> str:
    return for_terminal(bounded(text, limit), multiline=multiline)


def write(path: Path, suite: str, cases: Sequence[Case], seconds: float) -> None:
    """Write one `testsuite` named `suite` holding `cases` to `path` (UTF-8), as a private
    file never written through a symlink (`sync.files.private_files.write_private_at`)."""
    root = ET.Element(
        "testsuite",
        name=suite,
        tests=str(len(cases)),
        failures=str(sum(c.failure is not None for c in cases)),
        errors=str(sum(c.error is not None for c in cases)),
        skipped=str(sum(c.skipped is not None and c.failure is None for c in cases)),
        time=f"{seconds:.3f}",
    )
    for c in cases:
        case = ET.SubElement(
            root, "testcase", classname=c.classname, name=c.name, time=f"{c.seconds:.3f}"
        )
        if c.failure is not None:
            message = c.message if c.message is not None else c.failure.split("\n", 1)[0]
            failure = ET.SubElement(
                case, "failure", message=_safe(message, MESSAGE_LIMIT, multiline=False)
            )
            failure.text = _safe(c.failure, EVIDENCE_LIMIT, multiline=True)
        elif c.skipped is not None:
            ET.SubElement(case, "skipped", message=_safe(c.skipped, MESSAGE_LIMIT, multiline=False))
        if c.error is not None:
            error = ET.SubElement(
                case, "error", message=_safe(c.error, MESSAGE_LIMIT, multiline=False)
            )
            error.text = _safe(c.error, EVIDENCE_LIMIT, multiline=True)
    ET.indent(root)
    write_private_at(path, ET.tostring(root, encoding="utf-8", xml_declaration=True))


def write_setup_error(path: Path, suite: str, message: str) -> None:
    """Write a `suite` whose one `testcase` (`setup`) holds an `error`: the run could not
    start (an unreachable server, a refused token), so CI shows why instead of finding no
    report at all."""
    root = ET.Element("testsuite", name=suite, tests="1", failures="0", errors="1", skipped="0")
    case = ET.SubElement(root, "testcase", classname=suite, name="setup", time="0.000")
    error = ET.SubElement(case, "error", message=_safe(message, MESSAGE_LIMIT, multiline=False))
    error.text = _safe(message, EVIDENCE_LIMIT, multiline=True)
    ET.indent(root)
    write_private_at(path, ET.tostring(root, encoding="utf-8", xml_declaration=True))
