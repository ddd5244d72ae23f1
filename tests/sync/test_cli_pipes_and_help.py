"""The command line as shell pipelines and newcomers meet it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from app.main import HEADLESS_COMMANDS
from tests.sync.test_cli_live import REPO


def test_a_reader_that_stops_early_ends_ls_quietly(tmp_path: Path) -> None:
    """`converge ls | head`: the reader went away, which is not an error of ours (before: a
    BrokenPipeError traceback). The pipe's read end is closed before the command starts,
    so its first write meets EPIPE, whatever the timing."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "app.main", "ls", "--profile", str(tmp_path / "p")],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


def test_the_window_help_names_every_headless_command() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "app.main", "--help"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert result.returncode == 0, result.stderr
    for command in HEADLESS_COMMANDS:
        assert f" {command}" in result.stdout, command
