"""A throwaway PostgreSQL 15 cluster for `python -m bench server --postgres`: initdb in a temp
dir, loopback only, trust auth, run as `postgres` when we are root (PostgreSQL refuses root),
stopped and removed afterwards. The same settings as the tests' cluster (`tests/conftest.py`
`PostgresCluster`): fsync off, so that figures measure the server, not this machine's disk.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PG_BIN = Path("/usr/lib/postgresql/15/bin")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def throwaway_postgres() -> Iterator[str]:
    """The SQLAlchemy URL of an empty database on a fresh cluster, for the block's life."""
    if not (PG_BIN / "initdb").exists():
        raise SystemExit(f"--postgres needs the PostgreSQL 15 binaries in {PG_BIN}")
    root = Path(tempfile.mkdtemp(prefix="converge-bench-pg-"))
    data, port = root / "data", _free_port()
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if prefix:
        shutil.chown(root, "postgres", "postgres")
    root.chmod(0o700)

    def pg(*args: str) -> None:
        subprocess.run([*prefix, *args], check=True, capture_output=True, timeout=120)

    options = (
        f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off "
        "-c synchronous_commit=off -c full_page_writes=off -c max_connections=300"
    )
    try:
        pg(str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
           "--no-sync", "-E", "UTF8")  # fmt: skip
        pg(str(PG_BIN / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(root / "log"),
           "-w", "start")  # fmt: skip
        try:
            yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
        finally:
            pg(str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(root, ignore_errors=True)
