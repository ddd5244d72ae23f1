"""A `converge-server` subprocess that can be killed with SIGKILL and started again.

The crash and client-fault suites need a real process boundary: an in-process uvicorn
thread cannot be killed the way a power cut or an OOM killer ends a server (no `finally`,
no lifespan shutdown, half-written transactions abandoned to the database). Each start
picks a new loopback port (`--port 0`) and reads the one `listening on http://HOST:PORT`
line the server prints once its socket accepts connections (CONTRACT §5).
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

SERVER_BIN = Path(sys.executable).with_name("converge-server")
START_TIMEOUT = 60.0  # a loaded 2-core machine imports FastAPI and SQLAlchemy slowly


@dataclass
class ServerProcess:
    """One `converge-server` process on `database_url` with its object store `artifacts`.

    `stop()` then `start()` (or `kill()` then `start()`) restarts it on the same database."""

    database_url: str
    artifacts: Path
    log_path: Path
    agent_delay: float = 0.0
    port: int = 0  # 0: a new free port at every start; else the same port every time
    extra_args: tuple[str, ...] = ()
    #: Extra environment of the process (e.g. libfaketime's, for a skewed clock).
    env: dict[str, str] = field(default_factory=dict)
    url: str = ""
    proc: subprocess.Popen[bytes] | None = None
    starts: int = 0
    kills: int = 0
    _log_files: list[object] = field(default_factory=list)

    def command(self) -> list[str]:
        """The command line (control plane on, maintenance only on demand)."""
        exe = (
            [str(SERVER_BIN)] if SERVER_BIN.exists() else [sys.executable, "-m", "server_stub.cli"]
        )
        return [
            *exe,
            "--port",
            str(self.port),
            "--database",
            self.database_url,
            "--artifacts",
            str(self.artifacts),
            "--control",
            "--agent-delay",
            str(self.agent_delay),
            "--maintenance-interval",
            "3600",
            "--log-level",
            "warning",
            *self.extra_args,
        ]

    def start(self) -> str:
        """Start the process and wait for its `listening on` line; returns the base URL."""
        assert self.proc is None or self.proc.poll() is not None, "already running"
        if self.proc is not None and self.proc.stdout is not None:
            self.proc.stdout.close()  # the pipe of the process that ended
        log = self.log_path.open("ab")
        self._log_files.append(log)
        self.proc = subprocess.Popen(
            self.command(),
            stdout=subprocess.PIPE,
            stderr=log,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **self.env},
        )
        self.url = self._read_url(self.proc)
        self.starts += 1
        return self.url

    def _read_url(self, proc: subprocess.Popen[bytes]) -> str:
        assert proc.stdout is not None
        deadline = time.monotonic() + START_TIMEOUT
        buffer = b""
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            while b"\n" not in buffer:
                left = deadline - time.monotonic()
                if left <= 0 or proc.poll() is not None:
                    proc.kill()
                    proc.wait()
                    tail = self.log_path.read_text(errors="replace")[-2000:]
                    raise AssertionError(f"converge-server did not start: {tail}")
                if sel.select(timeout=min(left, 0.5)):
                    chunk = os.read(proc.stdout.fileno(), 4096)
                    if not chunk:
                        continue
                    buffer += chunk
        line = buffer.split(b"\n", 1)[0].decode()
        prefix = "listening on "
        assert line.startswith(prefix), f"unexpected first line {line!r}"
        return line[len(prefix) :].strip()

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs, like a power cut for the database's view."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)
            self.kills += 1

    def stop(self) -> int | None:
        """SIGTERM and wait (the graceful path); returns the exit status."""
        code: int | None = None
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            code = self.proc.returncode
            if self.proc.stdout is not None:
                self.proc.stdout.close()
        for log in self._log_files:
            log.close()  # type: ignore[attr-defined]
        self._log_files.clear()
        return code


def byte_objects(root: Path) -> list[Path]:
    """Every file in the object store (finished objects and `.tmp` leftovers alike)."""
    if not root.exists():
        return []
    return sorted(p for p in root.rglob("*") if p.is_file())
