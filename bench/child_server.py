"""A `converge-server` child process for the benchmarks that need real processes (load,
fleet): started on a free port, its log in the work folder, its URL read from the first
stdout line (CONTRACT §5)."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path
from typing import IO


def start_server(
    database: str,
    workdir: Path,
    log_name: str,
    extra_args: tuple[str, ...] = (),
    open_files: int | None = None,
) -> tuple[subprocess.Popen[bytes], IO[bytes], str]:
    """(process, its open log file, base URL); RuntimeError when it does not announce itself.

    `open_files`: the child's soft and hard open-files limit (so that it cannot raise it),
    as on a host whose limit is that low."""
    log = (workdir / log_name).open("wb")
    command = [
        sys.executable,
        "-m",
        "server_stub.cli",
        "--port",
        "0",
        "--database",
        database,
        "--artifacts",
        str(workdir / "objects"),
        "--agent-delay",
        "0",
        "--log-level",
        "warning",
        # The load benchmark holds 1,000 streams as one principal and writes as fast as it
        # can: past the default caps on clients (docs/server.md "Load bounds"), on purpose.
        "--max-streams-per-principal",
        "100000",
        "--max-watches-per-principal",
        "100000",
        "--no-rate-limit",
        *extra_args,
    ]

    def limit() -> None:
        if open_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, preexec_fn=limit)
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    if not line.startswith("listening on "):
        proc.kill()
        proc.wait()
        proc.stdout.close()
        log.close()
        raise RuntimeError(f"server did not start: {line!r}")
    return proc, log, line.removeprefix("listening on ").strip()
