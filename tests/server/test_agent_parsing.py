"""Pure parts of the scripted agent: command lines and `/wait` durations."""

from __future__ import annotations

import pytest

from server_stub.domain.agent import Command, parse_command, split_reply, wait_seconds


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hello", None),
        ("/wait 3", Command("wait", "3")),
        ("  /artifact a.txt  some text  \nsecond line", Command("artifact", "a.txt  some text")),
        ("/remember x\n/fail", Command("remember", "x")),
        ("/unknown thing", None),
        ("first line\n/fail", None),
        ("/fail", Command("fail", "")),
    ],
)
def test_command_is_the_first_line_only(text: str, expected: Command | None) -> None:
    assert parse_command(text) == expected


@pytest.mark.parametrize(
    ("arg", "seconds"),
    [
        ("", 1.0),
        ("2.5", 2.5),
        ("-5", 0.0),
        ("99999", 3600.0),
        ("nan", 1.0),
        ("inf", 1.0),
        ("abc", 1.0),
        ("0.1 extra words", 0.1),
    ],
)
def test_wait_seconds_are_bounded(arg: str, seconds: float) -> None:
    assert wait_seconds(arg) == seconds


def test_reply_is_split_into_a_few_chunks() -> None:
    chunks = split_reply("Echo: hello world")
    assert 1 < len(chunks) <= 3 and "".join(chunks) == "Echo: hello world"
    assert split_reply("") == [""]
