"""`converge qa` never loses a run: the harness's own requests are retried and counted as
the devices' are, and a run that stops early (its server never starts, the harness fails,
SIGTERM or Ctrl-C) still prints its report and writes its files, saying what it checked.

The real harness runs against its real server child; faults go in through the transport of
the harness's own clients (`Harness(transport=...)`), or through a stand-in server command
that never announces itself, exits at once, or signals the harness.
"""

from __future__ import annotations

import json
import shutil
import signal
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
import pytest

import qa.server
from qa import cli as qa_cli
from qa.checker import Kind
from qa.device import plain_transport
from qa.harness import Harness
from qa.public import ATTEMPTS
from qa.report import QaOptions, QaReport
from qa.reports import render, write_junit
from tests.sync.helpers import run


@dataclass
class Strike:
    """Fail matching requests of the harness's own clients: let `skip` through first, then
    raise `error` for the next `times` of them."""

    method: str
    path: str  # a prefix of the request's path
    error: Callable[[httpx.Request], Exception]
    times: int = 1
    skip: int = 0
    body: bytes = b""  # a part the request's body must hold
    seen: int = 0
    struck: int = 0

    def transport(self, url: str) -> httpx.AsyncBaseTransport:
        return _Striking(self, plain_transport(url))


class _Striking(httpx.AsyncBaseTransport):
    def __init__(self, strike: Strike, inner: httpx.AsyncBaseTransport) -> None:
        self._strike = strike
        self._inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        s = self._strike
        if (
            request.method == s.method
            and request.url.path.startswith(s.path)
            and s.body in request.content
        ):
            s.seen += 1
            if s.seen > s.skip and s.struck < s.times:
                s.struck += 1
                raise s.error(request)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def refused(request: httpx.Request) -> Exception:
    return httpx.ConnectError("[Errno 111] Connection refused (injected)", request=request)


def run_harness(options: QaOptions, strike: Strike) -> QaReport:
    return run(Harness(options, transport=strike.transport).run(), timeout=120)


def assert_writes_its_reports(report: QaReport, folder: Path) -> ET.Element:
    """The JSON, JUnit and HTML forms of the report can all be made; the JUnit suite."""
    json.dumps(report.to_json())
    render(report)
    write_junit(report, folder / "qa.xml")
    return ET.parse(folder / "qa.xml").getroot()


@pytest.mark.parametrize(
    ("public_only", "path"),
    [(False, "/_stub/sessions"), (True, "/v1/sessions")],
    ids=["control-plane-seeding", "public-seeding"],
)
def test_a_create_by_the_harness_that_hits_one_connect_error_is_retried_and_counted(
    tmp_path: Path, public_only: bool, path: str
) -> None:
    strike = Strike("POST", path, refused)
    options = QaOptions(devices=2, seed=3, operations=6, initial=5, public_only=public_only)
    report = run_harness(options, strike)
    assert strike.struck == 1
    assert report.stopped is None and report.violations == [] and report.ok
    assert report.harness_requests.network_errors == 1
    assert report.to_json()["harness_requests"]["network_errors"] == 1
    suite = assert_writes_its_reports(report, tmp_path)
    assert suite.get("errors") == "0" and suite.get("failures") == "0"


def test_an_operation_whose_control_request_keeps_failing_is_counted_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    """The outage's end (operation 12 of seed 3) fails on every attempt: that operation is
    counted as failed, the quiet phase brings the object store back, the run finishes."""
    body = b'"object_store":"up"'
    strike = Strike("PUT", "/_stub/faults", refused, times=ATTEMPTS, skip=1, body=body)
    report = run_harness(QaOptions(devices=2, seed=3, operations=16, initial=5), strike)
    assert strike.struck == ATTEMPTS
    assert report.outcomes["harness_request_failed"] == 1
    assert report.ops["outage_end"] == 1
    assert report.stopped is None and report.violations == [] and report.ok
    assert report.harness_requests.network_errors == ATTEMPTS
    assert report.outbox_pending == 0
    assert_writes_its_reports(report, tmp_path)


def test_an_unexpected_failure_in_the_final_checks_keeps_what_was_checked(
    tmp_path: Path,
) -> None:
    """The harness fails in its purge audit (the second maintenance request; the first is
    the probe): convergence was judged, the audit's invariants were not."""

    def broken(request: httpx.Request) -> Exception:
        return RuntimeError("a bug in the harness (injected)")

    strike = Strike("POST", "/_stub/maintenance", broken, skip=1)
    options = QaOptions(devices=2, seed=3, operations=6, initial=5, workdir=tmp_path / "work")
    report = run_harness(options, strike)
    assert strike.struck == 1
    assert report.stopped is not None and "RuntimeError" in report.stopped
    assert not report.ok and report.violations == []
    assert set(report.not_checked()) == {Kind.OUTBOX_NOT_DRAINED, Kind.RESIDUE, Kind.LIVE_PRUNED}
    assert report.converge_after and all(t is not None for t in report.converge_after.values())
    suite = assert_writes_its_reports(report, tmp_path)
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert cases["residue"].find("skipped") is not None
    assert cases["not_converged"].find("skipped") is None
    (error,) = suite.iter("error")
    assert "RuntimeError" in (error.get("message") or "")
    data = report.to_json()
    assert data["complete"] is False and "residue" in data["not_checked"]
    assert "STOPPED EARLY" in report.to_text() and "STOPPED EARLY" in render(report)


#: Stand-ins for the harness's own server, each ending its start in another way.
NEVER_ANNOUNCES = "import signal; signal.pause()"
EXITS_AT_ONCE = "raise SystemExit(3)"
TERMINATES_THE_HARNESS = "import os, signal; os.kill(os.getppid(), signal.SIGTERM); signal.pause()"
INTERRUPTS_THE_HARNESS = "import os, signal; os.kill(os.getppid(), signal.SIGINT); signal.pause()"


def run_cli_with_server(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    folder: Path,
    code: str,
    *args: str,
) -> tuple[int, dict[str, object], str, ET.Element, str]:
    """`converge qa --json --junit-xml --html` with a stand-in server: the exit status, the
    JSON printed, stderr, the JUnit suite and the HTML page."""
    monkeypatch.setattr(qa.server, "server_command", lambda: [sys.executable, "-c", code])
    xml_path, html_path = folder / "qa.xml", folder / "qa.html"
    status = qa_cli.main(
        [
            *("--devices", "2", "--operations", "5", "--json", *args),
            *("--junit-xml", str(xml_path), "--html", str(html_path)),
        ]
    )
    out, err = capsys.readouterr()
    report = json.loads(out)
    suite = ET.parse(xml_path).getroot()
    return status, report, err, suite, html_path.read_text(encoding="utf-8")


def assert_nothing_claimed(report: dict[str, object], suite: ET.Element, page: str) -> None:
    assert report["ok"] is False and report["complete"] is False
    assert report["not_checked"] == [kind.value for kind in Kind]
    assert suite.get("skipped") == str(len(Kind)) and suite.get("errors") == "1"
    assert suite.get("failures") == "0"
    assert "STOPPED EARLY" in page and "not checked" in page


def test_the_own_server_gets_a_generous_start_deadline_by_default() -> None:
    assert qa_cli.build_parser().parse_args([]).server_start_timeout >= 120


@pytest.mark.parametrize(
    ("server", "args", "sentence"),
    [
        (
            NEVER_ANNOUNCES,
            ("--server-start-timeout", "0.5"),
            "the harness's own server did not announce itself within 0.5 s",
        ),
        (EXITS_AT_ONCE, (), "the harness's own server did not start"),
    ],
    ids=["never-announces", "exits-at-once"],
)
def test_a_run_whose_server_never_starts_still_writes_its_reports(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    server: str,
    args: tuple[str, ...],
    sentence: str,
) -> None:
    status, report, err, suite, page = run_cli_with_server(
        monkeypatch, capsys, tmp_path, server, *args
    )
    assert status == qa_cli.EXIT_SETUP
    assert err.startswith(f"converge qa: {sentence}") and err.count("\n") == 1
    assert sentence in str(report["stopped"])
    assert_nothing_claimed(report, suite, page)
    (error,) = suite.iter("error")
    assert sentence in (error.get("message") or "")
    # The work folder is kept for the server's log, which the sentence names.
    kept = Path(str(report["workdir"]))
    assert str(kept / "server" / "server.log") in str(report["stopped"])
    assert (kept / "server" / "server.log").is_file()
    shutil.rmtree(kept)


@pytest.mark.parametrize(
    ("server", "sentence"),
    [
        (TERMINATES_THE_HARNESS, "the run was stopped by SIGTERM before it finished"),
        (INTERRUPTS_THE_HARNESS, "the run was interrupted before it finished"),
    ],
    ids=["sigterm", "ctrl-c"],
)
def test_an_interrupted_run_still_writes_its_reports_and_stops_its_server(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    server: str,
    sentence: str,
) -> None:
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    status, report, err, suite, page = run_cli_with_server(monkeypatch, capsys, tmp_path, server)
    assert status == qa_cli.EXIT_INTERRUPTED
    assert err == f"converge qa: {sentence}\n"
    assert report["stopped"] == sentence
    assert report["workdir"] is None  # removed: nothing failed that a log could explain
    assert_nothing_claimed(report, suite, page)
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # the handler was removed
    left = [p for p in psutil.Process().children(recursive=True) if server in p.cmdline()]
    assert left == []  # the stand-in server was stopped on the way out
