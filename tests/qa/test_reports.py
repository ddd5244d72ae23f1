"""`converge qa --junit-xml` and `--html`, and the conformance's `--html`: a short real run
writes both files; the XML has one testcase per invariant; the HTML is self-contained (no
script, no external URL), holds the latency plot and the timeline, and keeps hostile text
inert."""

from __future__ import annotations

import re
import stat
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import pytest

from qa import cli as qa_cli
from qa import junit
from qa.checker import Kind, Violation
from qa.conformance import html as conformance_html
from qa.conformance import report as conformance_report
from qa.conformance.runner import Outcome, Verdict
from qa.junit import EVIDENCE_LIMIT
from qa.latency import Latencies
from qa.report import QaOptions, QaReport
from qa.reports import render, write_html, write_junit
from qa.timeline import Timeline

#: Markup, an entity, both quotes and bidi controls (RLO, LRI, PDF): what a hostile server
#: puts in a title or an error answer.
HOSTILE = "<script>alert(1)</script> & \"q\" 'q' \u202egnp.exe\u2066x\u202c <img src=x>"


class Page(HTMLParser):
    """What the checks need from a page: tags by name, and every src/href value."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: Counter[str] = Counter()
        self.links: list[str] = []
        self.classes: Counter[str] = Counter()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        for name, value in attrs:
            if name in {"src", "href"} and value is not None:
                self.links.append(value)
            if name == "class" and value:
                self.classes.update(value.split())


def parsed(document: str) -> Page:
    page = Page()
    page.feed(document)
    page.close()
    return page


def assert_self_contained(document: str) -> Page:
    page = parsed(document)
    assert "<script" not in document.lower()
    assert page.tags["script"] == 0 and page.tags["link"] == 0 and page.tags["img"] == 0
    assert not [link for link in page.links if re.match(r"\s*(https?:)?//", link)]
    return page


def test_a_short_qa_run_writes_junit_with_one_testcase_per_invariant_and_an_html_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    xml_path, html_path = tmp_path / "qa.xml", tmp_path / "qa.html"
    code = qa_cli.main(
        [
            *("--devices", "3", "--operations", "30", "--seed", "7", "--deadline", "30"),
            *("--faults", "latency=5,drop=0.1,cut=0.1,partition=1@4:2"),
            *("--junit-xml", str(xml_path), "--html", str(html_path)),
        ]
    )
    capsys.readouterr()
    assert code == 0
    suite = ET.parse(xml_path).getroot()
    assert suite.tag == "testsuite" and suite.get("name") == "qa"
    names = [case.get("name") for case in suite.iter("testcase")]
    assert names == [kind.value for kind in Kind]
    assert suite.get("failures") == "0" and not list(suite.iter("failure"))
    document = html_path.read_text(encoding="utf-8")
    page = assert_self_contained(document)
    assert page.tags["svg"] == 2  # the latency histogram and the timeline
    assert page.classes["bar"] >= 1 and page.classes["pct"] == 3  # p50, p95, p99
    assert page.classes["op"] >= 30 - 2  # restarts and outages are on the server lane
    assert page.classes["partition"] == 1 and page.classes["fault"] >= 1
    assert page.classes["phase"] == 1  # where the quiet phase began
    assert "control plane" in document  # the extras used


def hostile_report() -> QaReport:
    timeline = Timeline(limit=3)
    for i in range(5):
        timeline.add(i % 2, "op", HOSTILE, at=timeline.started + i, seconds=0.5)
    report = QaReport(
        QaOptions(devices=2, seed=1),
        url=f"http://127.0.0.1:9/{HOSTILE}",
        latencies=Latencies([0.01 * i for i in range(1, 200)], 0),
        timeline=timeline,
    )
    report.ops[HOSTILE] = 1
    report.violations = [
        Violation(Kind.REAPPEARED, f"session {HOSTILE} came back", 1, HOSTILE),
        Violation(Kind.RESIDUE, "x" * (EVIDENCE_LIMIT * 3)),
    ]
    return report


def assert_inert(document: str) -> None:
    assert HOSTILE not in document and "<img" not in document
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;q&quot; &#x27;q&#x27;" in document
    assert not re.search("[\u202a-\u202e\u2066-\u2069]", document)
    assert "\\u202e" in document  # shown, not obeyed


def test_hostile_text_in_the_qa_report_is_escaped_bounded_and_inert(tmp_path: Path) -> None:
    report = hostile_report()
    document = render(report)
    assert_self_contained(document)
    assert_inert(document)
    assert len(document) < 200_000  # the 60,000-character violation was cut
    assert "2 later ones left out" in document  # the timeline's bound, said
    write_junit(report, tmp_path / "qa.xml")
    suite = ET.parse(tmp_path / "qa.xml").getroot()
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    failure = cases["reappeared"].find("failure")
    assert failure is not None and HOSTILE.replace("\u202e", "\\u202e")[:20] in (failure.text or "")
    residue = cases["residue"].find("failure")
    assert residue is not None and len(residue.text or "") < EVIDENCE_LIMIT + 100
    # No control plane in this report: the outbox is not claimed, it is skipped.
    assert cases["outbox_not_drained"].find("skipped") is not None
    assert suite.get("failures") == "2" and suite.get("skipped") == "1"


def test_the_conformance_html_report_shows_the_rule_table_with_inert_evidence(
    tmp_path: Path,
) -> None:
    outcome = Outcome(
        verdicts=[
            Verdict("envelope.errors", "§5", "errors use the envelope", False, HOSTILE, 0.1),
            Verdict("delete.idempotent", "§3", "DELETE twice is 204", True, "", 0.2),
        ],
        requests=12,
        seconds=1.5,
        left_behind=[HOSTILE],
    )
    conformance_html.write_html(outcome, f"https://example.test/{HOSTILE}", tmp_path / "c.html")
    document = (tmp_path / "c.html").read_text(encoding="utf-8")
    page = assert_self_contained(document)
    assert_inert(document)
    assert page.tags["tr"] == 3  # the header and one row per rule
    assert page.classes["fail"] == 2 and page.classes["pass"] == 1  # the verdict badge too
    assert document.index("envelope.errors") < document.index("delete.idempotent")


def _conformance_outcome() -> Outcome:
    verdict = Verdict("envelope.errors", "§5", "errors use the envelope", False, HOSTILE, 0.1)
    return Outcome(verdicts=[verdict], requests=1, seconds=0.1, left_behind=[])


#: Every report file `converge qa` and `converge conformance` write.
REPORT_WRITERS: dict[str, Callable[[Path], None]] = {
    "qa junit": lambda path: write_junit(hostile_report(), path),
    "qa html": lambda path: write_html(hostile_report(), path),
    "conformance junit": lambda path: conformance_report.write_junit(_conformance_outcome(), path),
    "conformance html": lambda path: conformance_html.write_html(
        _conformance_outcome(), "https://example.test/", path
    ),
    "setup error junit": lambda path: junit.write_setup_error(path, "conformance", "down"),
}


@pytest.mark.parametrize("writer", sorted(REPORT_WRITERS))
def test_report_files_are_owner_only_and_never_written_through_a_planted_symlink(
    tmp_path: Path, writer: str
) -> None:
    write = REPORT_WRITERS[writer]
    fresh, existing = tmp_path / "fresh", tmp_path / "existing"
    existing.write_text("an older report")
    existing.chmod(0o644)
    for path in (fresh, existing):
        write(path)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert path.read_bytes() != b"an older report"
    victim = tmp_path / "victim"
    victim.write_text("not a report")
    planted = tmp_path / "planted"
    planted.symlink_to(victim)
    with pytest.raises(OSError, match="symlink"):
        write(planted)
    assert victim.read_text() == "not a report" and planted.is_symlink()


def test_a_report_file_that_cannot_be_written_is_a_setup_error_after_the_result_is_printed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--devices", "1", "--operations", "0", "--initial", "0", "--deadline", "10"]
    # /dev/full passes the check before the run (a file in a folder) and fails the write
    # the way a full disk does (ENOSPC)
    code = qa_cli.main([*argv, "--html", "/dev/full"])
    out, err = capsys.readouterr()
    assert code == 2
    assert "violations: none" in out and "cannot write" in err


def test_the_qa_report_gives_deletes_and_creates_their_own_latency() -> None:
    report = QaReport(
        QaOptions(devices=2, seed=1),
        latencies=Latencies([0.2, 0.3, 0.9], 0, kinds=["create", "create", "delete"]),
    )
    document = render(report)
    assert "creates (2)" in document and "deletes (1)" in document
    assert "p95 900 ms" in document
    text = report.to_text()
    assert "  creates (2): p50 200 ms, p95 300 ms" in text
    assert "  deletes (1): p50 900 ms, p95 900 ms" in text
    assert report.to_json()["convergence_by_kind_ms"]["delete"]["n"] == 1
