"""`converge qa` takes its token as every `converge` command does (`sync.cli.token_input`):
from a private file or standard input, so it never has to appear in the process list.

The harness is replaced by one that records the token it was given (what the devices and
the checker would send), through `qa.cli.main` as the console script calls it.
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest

from qa import cli
from qa.harness import Harness
from qa.report import QaReport

ARGS = ["--server", "http://127.0.0.1:9", "--devices", "1", "--operations", "0"]


@pytest.fixture
def given(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tokens the harness was started with (it stops at once with a clean report)."""
    tokens: list[str] = []

    async def record(self: Harness) -> QaReport:
        tokens.append(self.o.token)
        return self.report

    monkeypatch.setattr(Harness, "run", record)
    return tokens


def _private(path: Path, text: str, mode: int = 0o600) -> Path:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.chmod(path, mode)
    return path


def test_converge_qa_reads_its_token_from_a_private_file(
    given: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    token_file = _private(tmp_path / "token", "dev-bob\n")
    assert cli.main([*ARGS, "--token-file", str(token_file)]) == cli.EXIT_OK
    assert given == ["dev-bob"]
    assert "process list" not in capsys.readouterr().err


def test_converge_qa_reads_its_token_from_standard_input(
    given: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("dev-bob\nmore input\n"))
    assert cli.main([*ARGS, "--token-stdin"]) == cli.EXIT_OK
    assert given == ["dev-bob"]


def test_converge_qa_refuses_a_token_file_others_can_read_in_one_sentence(
    given: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    token_file = _private(tmp_path / "token", "dev-bob\n", mode=0o644)
    assert cli.main([*ARGS, "--token-file", str(token_file)]) == cli.EXIT_SETUP
    assert given == []  # nothing was started
    err = capsys.readouterr().err
    assert err.startswith(f"converge qa: The token file {token_file} can be read by other users")
    assert err.count("\n") == 1


def test_converge_qa_without_a_token_uses_the_stubs_and_with_token_warns(
    given: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(ARGS) == cli.EXIT_OK
    assert "using the stub's development token dev-alice" in capsys.readouterr().err
    assert cli.main([*ARGS, "--token", "dev-bob"]) == cli.EXIT_OK
    assert given == ["dev-alice", "dev-bob"]
    assert "process list" in capsys.readouterr().err


def test_converge_qa_against_a_server_takes_the_token_from_the_environment(
    given: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CONVERGE_TOKEN", "dev-bob")
    assert cli.main(ARGS) == cli.EXIT_OK
    assert given == ["dev-bob"]
    assert capsys.readouterr().err == ""


def test_converge_qa_refuses_a_report_path_it_could_not_write_before_running(
    given: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for option, target in (("--html", tmp_path / "nowhere" / "r.html"), ("--junit-xml", tmp_path)):
        with pytest.raises(SystemExit) as exit_:
            cli.main([*ARGS, option, str(target)])
        assert exit_.value.code == cli.EXIT_SETUP
        assert f"{option} {target}: not a file in an existing folder" in capsys.readouterr().err
    assert given == []  # nothing was started


@pytest.mark.parametrize("server", ["http://localhost:99999", "http://[::1", "ftp://x/"])
def test_converge_qa_refuses_a_server_url_that_cannot_name_a_server_before_running(
    given: list[str], capsys: pytest.CaptureFixture[str], server: str
) -> None:
    """These ran and failed with an exception group's name or "Cannot reach the server at
    ftp://x", as if the server were down."""
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--server", server, "--devices", "1", "--operations", "0"])
    assert exit_.value.code == cli.EXIT_SETUP
    assert f"--server {server} is not " in capsys.readouterr().err
    assert given == []
