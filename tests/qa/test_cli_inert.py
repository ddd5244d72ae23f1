"""`converge qa` prints inert text: a server under test may send anything (CONTRACT §10.1).

The harness is replaced by what it would hand back from a hostile server (an error whose
message is the server's, a report whose violations quote the server's ids), so that the
printing itself is what is proved, through `qa.cli.main` as the console script calls it.
"""

from __future__ import annotations

import json

import pytest

from qa import cli
from qa.checker import Kind, Violation
from qa.harness import Harness
from qa.report import QaReport
from sync.errors import UnexpectedResponse
from tests.hostile_content import HOSTILE, HOSTILE_ID, unsafe_chars

ARGS = ["--server", "http://127.0.0.1:9", "--devices", "1", "--operations", "0"]


def test_a_hostile_error_message_is_printed_inert(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    async def fail(self: Harness) -> QaReport:
        raise UnexpectedResponse(f"The server said: {HOSTILE}", status=500)

    monkeypatch.setattr(Harness, "run", fail)
    monkeypatch.setenv("CONVERGE_TOKEN", "dev-alice")  # no notice about the fallback token
    assert cli.main(ARGS) == cli.EXIT_SETUP
    out, err = capsys.readouterr()
    assert unsafe_chars(out + err) == []
    assert err.startswith("converge qa: The server said: \\u001b]0;pwned\\u0007")
    assert err.count("\n") == 1


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_violations_quoting_hostile_ids_are_printed_inert(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], as_json: bool
) -> None:
    async def report(self: Harness) -> QaReport:
        result = QaReport(self.o, url=self.o.server or "")
        detail = f"{HOSTILE_ID} is still listed\nviolations: none"  # a forged line
        result.violations.append(Violation(Kind.REAPPEARED, detail, 0, HOSTILE_ID))
        return result

    monkeypatch.setattr(Harness, "run", report)
    assert cli.main([*ARGS, *(["--json"] if as_json else [])]) == cli.EXIT_VIOLATIONS
    out, err = capsys.readouterr()
    assert unsafe_chars(out + err) == []
    if as_json:
        (violation,) = json.loads(out)["violations"]
        assert violation["session_id"] == HOSTILE_ID
    else:
        assert "violations: none" not in out.splitlines()
        assert "reappeared: device 0: ses_\\u001b]0;pwned\\u0007" in out
