"""A token given without it showing in the process list (CONTRACT §10.1 "Secrets").

`--token-file PATH`, `--token-stdin` and `CONVERGE_TOKEN` for every headless command (real
subprocesses against a real stub server), `--token TOKEN` with its warning, and the checks
on what a file or a pipe may hold (in process: they need no server).
"""

from __future__ import annotations

import argparse
import io
import os
from pathlib import Path
from typing import Any

import pytest

from sync.cli.token_input import (
    MAX_TOKEN_BYTES,
    TOKEN_IN_ARGV_WARNING,
    add_token_arguments,
    read_token_file,
    token_from_arguments,
)
from sync.errors import ProfileError
from tests.sync.helpers import Server, run
from tests.sync.test_cli_live import converge


def _seed(url: str) -> str:
    async def setup() -> str:
        async with Server(url) as server:
            return (await server.control_session("from a token file")).id

    return run(setup())


def _private(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o600)
    return path


def test_sync_reads_the_token_from_a_private_file(live_server: Any, tmp_path: Path) -> None:
    made = _seed(live_server.url)
    token_file = _private(tmp_path / "token", "dev-alice\n")
    result = converge(
        "sync", "--server", live_server.url, "--token-file", str(token_file),
        "--profile", str(tmp_path / "p"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"inserted 1: {made}" in result.stdout
    assert result.stderr == ""  # no warning: the token was never in argv


def test_sync_reads_the_token_from_standard_input(live_server: Any, tmp_path: Path) -> None:
    made = _seed(live_server.url)
    result = converge(
        "sync", "--server", live_server.url, "--token-stdin", "--profile", str(tmp_path / "p"),
        stdin="dev-alice\n",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"inserted 1: {made}" in result.stdout and result.stderr == ""


def test_token_on_the_command_line_still_works_with_a_warning(
    live_server: Any, tmp_path: Path
) -> None:
    result = converge(
        "sync", "--server", live_server.url, "--token", "dev-alice",
        "--profile", str(tmp_path / "p"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [f"converge: {TOKEN_IN_ARGV_WARNING}"]


def test_a_token_file_others_can_read_is_refused_like_ssh_does(
    live_server: Any, tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("dev-alice\n")
    token_file.chmod(0o644)
    result = converge(
        "ls", "--token-file", str(token_file), "--profile", str(tmp_path / "p"),
    )  # fmt: skip
    assert result.returncode == 1
    assert f"chmod 600 {token_file}" in result.stderr and "0644" in result.stderr
    assert "Traceback" not in result.stderr


def test_two_ways_of_giving_a_token_at_once_are_a_usage_error(tmp_path: Path) -> None:
    token_file = _private(tmp_path / "token", "a\n")
    result = converge("ls", "--token", "a", "--token-file", str(token_file))
    assert result.returncode == 2 and "not allowed with" in result.stderr


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_token_arguments(parser)
    return parser.parse_args(argv)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"", "holds no token"),
        (b"  \n\n", "holds no token"),
        (b"dev-alice\nsecond line\n", "does not hold one token"),
        (b"dev alice\n", "does not hold one token"),
        (b"dev-alice\r\nX-Injected: 1\n", "does not hold one token"),
        (b"dev-\x1b[31malice\n", "does not hold one token"),
        (b"x" * (MAX_TOKEN_BYTES + 1), f"more than {MAX_TOKEN_BYTES} bytes"),
    ],
)
def test_a_token_file_that_is_not_one_token_is_refused(
    tmp_path: Path, content: bytes, words: str
) -> None:
    path = tmp_path / "token"
    path.write_bytes(content)
    path.chmod(0o600)
    with pytest.raises(ProfileError) as info:
        read_token_file(path)
    assert words in info.value.message and str(path) in info.value.message


def test_a_token_file_is_read_through_a_pipe(tmp_path: Path) -> None:
    """`--token-file <(pass show converge)`: a pipe, never a file on disk."""
    read_end, write_end = os.pipe()
    os.write(write_end, b"dev-alice\n")
    os.close(write_end)
    try:
        assert read_token_file(Path(f"/dev/fd/{read_end}")) == "dev-alice"
    finally:
        os.close(read_end)


def test_a_missing_token_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ProfileError) as info:
        token_from_arguments(_args("--token-file", str(tmp_path / "nope")))
    assert "Cannot read the token file" in info.value.message


def test_standard_input_gives_its_first_line_only(tmp_path: Path) -> None:
    stdin = io.StringIO("dev-alice\ny\n")
    assert token_from_arguments(_args("--token-stdin"), stdin=stdin) == "dev-alice"
    assert stdin.readline() == "y\n"  # left for `converge delete`'s confirmation


def test_only_the_argv_token_prints_the_warning() -> None:
    err = io.StringIO()
    assert token_from_arguments(_args("--token", "t"), stderr=err) == "t"
    assert err.getvalue() == f"converge: {TOKEN_IN_ARGV_WARNING}\n"
    quiet = io.StringIO()
    assert token_from_arguments(_args(), stderr=quiet) is None
    assert quiet.getvalue() == ""


def test_a_named_pipe_nobody_writes_to_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o600)
    with pytest.raises(ProfileError) as info:
        read_token_file(fifo)
    assert "holds no token" in info.value.message
