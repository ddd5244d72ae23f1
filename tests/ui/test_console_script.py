"""`converge` as a user starts it: the window opens with the bundled demo server, and a
SIGTERM (or Ctrl+C) closes it cleanly, stopping the server, with exit status 0."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx


def test_converge_starts_the_demo_server_and_exits_cleanly_on_sigterm(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONVERGE_")}
    env["QT_QPA_PLATFORM"] = "offscreen"
    with subprocess.Popen(
        [
            sys.executable,
            "-m",
            "app.main",
            "--profile",
            str(tmp_path / "p"),
            "--sync-interval",
            "0",
        ],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env,
    ) as proc:  # leaving it closes the stderr pipe
        try:
            assert proc.stderr is not None
            deadline = time.monotonic() + 60
            url = ""
            while not url and time.monotonic() < deadline:
                line = proc.stderr.readline()
                if not line:
                    break
                if "built-in demo server at " in line:
                    url = line.split("built-in demo server at ")[1].split()[0]
            assert url, "the demo server line never came"
            token_file = tmp_path / "p" / "bundled-server" / "token"
            assert f"--token-file {token_file}" in line  # how a second device joins
            token = token_file.read_text().strip()
            assert token not in line  # the token itself stays out of the terminal
            response = httpx.get(f"{url}/v1/sessions", headers={"Authorization": f"Bearer {token}"})
            assert response.status_code == 200 and response.json()["items"]
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0
            try:
                httpx.get(f"{url}/v1/sessions", timeout=2)
                raise AssertionError("the demo server still answers after the window closed")
            except httpx.TransportError:
                pass
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
