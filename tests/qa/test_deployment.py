"""The deployment of docs/deployment.md, on loopback: PostgreSQL,
SeaweedFS, `converge qa --servers 2` on both, a scrape of each process, nginx in front.

One qa run serves every test of the module (a module fixture): it is the slow part (about
half a minute), and the probes need its two processes alive. The harness runs in this
process from the command line's own parser (`qa.cli.build_parser`, `options_from_args`), so
its `servers` (their URLs) can be read while the workload runs; the probes are taken then,
not after the run, when the processes are gone. nginx is optional on a machine (`.ci/run`
installs Debian's): its probes run where `nginx` is on PATH, and its test is skipped with the
reason printed elsewhere. Its configuration is read from the doc, so the doc is what is tested.
"""

from __future__ import annotations

import asyncio
import functools
import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from qa.cli import build_parser, options_from_args
from qa.harness import Harness
from qa.report import QaReport
from tests.conftest import S3_BUCKET, PostgresCluster

pytestmark = pytest.mark.postgres

DOC = Path(__file__).resolve().parents[2] / "docs" / "deployment.md"
DOC_PORTS = ("127.0.0.1:8765", "127.0.0.1:8766", "127.0.0.1:8080")
PROBE_DEADLINE = 30.0
NGINX_ABSENT = "nginx is not on PATH (apt-get install nginx): the nginx part is skipped"
BOB = {"Authorization": "Bearer dev-bob"}
TERMINAL = {"run.completed", "run.failed", "run.cancelled"}


@dataclass
class Deployment:
    """What the run and its probes saw."""

    report: QaReport
    scrapes: list[str] = field(default_factory=list)  # one /metrics body per process
    nginx: dict[str, Any] | None = None  # the probes through nginx, None without nginx


def nginx_config(upstreams: list[int], listen: int) -> str:
    """The nginx.conf block of the doc's deployment section, with the test's ports."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## A deployment that runs", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"nginx\.conf:\n\n\s*```nginx\n(.*?)```", section, re.S)
    assert match is not None, "docs/deployment.md lost its nginx.conf block"
    config = match.group(1)
    for placeholder, port in zip(DOC_PORTS, [*upstreams, listen], strict=True):
        assert config.count(placeholder) == 1, placeholder
        config = config.replace(placeholder, f"127.0.0.1:{port}")
    return config


async def retrying[T](step: Callable[[], Awaitable[T]]) -> T:
    """Run `step` until it succeeds: the harness restarts and kills its processes in turn,
    so a probe may meet one that is down (a transport error, or nginx's 502)."""
    deadline = time.monotonic() + PROBE_DEADLINE
    while True:
        try:
            return await step()
        except (httpx.TransportError, AssertionError):
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


async def scrape(url: str) -> str:
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.get(f"{url}/metrics")
    assert response.status_code == 200, response.status_code
    return response.text


async def watch_through(http: httpx.AsyncClient, seen: dict[str, Any]) -> None:
    """An index page, then a held watch on its ETag (no write of dev-bob's comes first)."""
    page = await http.get("/v1/sessions", params={"limit": 1})
    assert page.status_code == 200, page.status_code
    seen["index"] = page.status_code
    held = await http.get(
        "/v1/sessions",
        params={"limit": 1},
        headers={"If-None-Match": page.headers["ETag"], "Prefer": "wait=2"},
    )
    assert held.status_code in (200, 304), held.status_code
    seen["watch"] = (held.status_code, held.headers.get("Preference-Applied"))


async def stream_through(http: httpx.AsyncClient, seen: dict[str, Any]) -> None:
    """A run of a second (`/wait 1`) and its event stream to the terminal event."""
    created = await http.post("/v1/sessions", json={})
    assert created.status_code == 201, created.status_code
    body = {"input": {"role": "user", "content": [{"type": "text", "text": "/wait 1"}]}}
    run = await http.post(f"/v1/sessions/{created.json()['id']}/runs", json=body)
    assert run.status_code == 202, run.status_code
    types: list[str] = []
    url = f"/v1/runs/{run.json()['id']}/events"
    async with http.stream("GET", url, headers={"Accept": "text/event-stream"}) as stream:
        assert stream.status_code == 200, stream.status_code
        seen["stream_type"] = stream.headers["content-type"]
        async for line in stream.aiter_lines():
            if line.startswith("event: "):
                types.append(line.removeprefix("event: "))
    assert types and types[-1] in TERMINAL, types  # a stream cut by a restart is retried
    seen["events"] = types


async def metrics_through(http: httpx.AsyncClient, seen: dict[str, Any]) -> None:
    metrics = await http.get("/metrics")
    seen["metrics"] = (metrics.status_code, metrics.text)


async def through_nginx(base: str) -> dict[str, Any]:
    """The probes through nginx as `dev-bob`, each retried on its own (a probe may meet a
    process the harness is restarting); the watch first, before any write of bob's."""
    seen: dict[str, Any] = {}
    async with httpx.AsyncClient(base_url=base, headers=BOB, timeout=30) as http:
        for step in (watch_through, stream_through, metrics_through):
            await retrying(functools.partial(step, http, seen))
    return seen


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def wait_for_port(port: int, nginx: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 10
    while True:
        assert nginx.poll() is None, "nginx exited"
        try:
            _reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.05)
            continue
        writer.close()
        await writer.wait_closed()
        return


def stop_nginx(nginx: subprocess.Popen[bytes]) -> None:
    """SIGTERM: the master stops its workers (a SIGKILL of the master would orphan them)."""
    nginx.terminate()
    try:
        nginx.wait(timeout=10)
    except subprocess.TimeoutExpired:
        nginx.kill()
        nginx.wait()


async def probe(harness: Harness, deployment: Deployment, prefix: Path) -> None:
    """Once the devices run: scrape each process, then nginx's probes where it exists."""
    for server in harness.servers:
        deployment.scrapes.append(await retrying(functools.partial(scrape, server.url)))
    binary = shutil.which("nginx")
    if binary is None:
        return
    listen = free_port()
    prefix.mkdir()
    conf = prefix / "nginx.conf"
    conf.write_text(nginx_config([s.port for s in harness.servers], listen), encoding="utf-8")
    log = (prefix / "stderr.log").open("wb")
    nginx = subprocess.Popen(
        [binary, "-p", str(prefix), "-c", str(conf), "-e", "stderr"],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
    )
    try:
        await wait_for_port(listen, nginx)
        base = f"http://127.0.0.1:{listen}"
        deployment.nginx = await through_nginx(base)
    finally:
        stop_nginx(nginx)
        log.close()


async def run_deployment(argv: list[str], prefix: Path) -> Deployment:
    args = build_parser().parse_args(argv)
    args.interval = 30.0  # `converge qa`'s default with watches (its main sets it)
    harness = Harness(options_from_args(args))
    run = asyncio.get_running_loop().create_task(harness.run())
    deadline = time.monotonic() + 60
    while len(harness.fleet) < args.devices:  # set-up done: both processes up
        if run.done():
            await run  # its own error, when it failed
            raise AssertionError("the qa run ended before its devices started")
        assert time.monotonic() < deadline, "the qa run's set-up took over 60 s"
        await asyncio.sleep(0.05)
    deployment = Deployment(report=harness.report)
    try:
        await probe(harness, deployment, prefix)
        assert not run.done(), "the qa run ended before the probes: they saw stopped servers"
    finally:
        deployment.report = await run
    return deployment


@pytest.fixture(scope="module")
def deployment(
    postgres_cluster: PostgresCluster, seaweed: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    if shutil.which("nginx") is None:
        print(f"\n{NGINX_ABSENT}")
    argv = [
        "--servers", "2",
        "--database", postgres_cluster.new_database(),
        "--artifacts", f"s3://{S3_BUCKET}/deploy-{os.getpid()}",
        "--s3-endpoint", seaweed.endpoint,
        "--devices", "3",
        "--operations", "40",
        "--initial", "5",
        "--seed", "22",
        "--deadline", "30",
    ]  # fmt: skip
    yield asyncio.run(run_deployment(argv, tmp_path_factory.mktemp("nginx") / "prefix"))


def test_two_processes_on_postgresql_and_seaweedfs_converge_with_no_violation(
    deployment: Deployment,
) -> None:
    report = deployment.report
    assert report.violations == [], [v.to_json() for v in report.violations]
    assert report.operations == 40
    assert report.mode != "external"
    assert report.server_log_errors == 0


def test_each_process_is_scraped_with_its_own_process_label(deployment: Deployment) -> None:
    processes = []
    for text in deployment.scrapes:
        families = {f.name: f for f in text_string_to_metric_families(text)}
        assert "converge_outbox_pending" in families
        assert families["converge_outbox_pending"].samples
        labels = {s.labels.get("process") for f in families.values() for s in f.samples}
        assert len(labels) == 1 and None not in labels, labels
        processes.append(labels.pop())
    assert len(processes) == 2 and len(set(processes)) == 2, processes


def test_nginx_passes_streams_and_held_watches_and_blocks_metrics(
    deployment: Deployment,
) -> None:
    if deployment.nginx is None:
        print(NGINX_ABSENT)
        pytest.skip(NGINX_ABSENT)
    seen = deployment.nginx
    assert seen["index"] == 200
    status, applied = seen["watch"]
    assert (status, applied) == (304, "wait=2"), seen["watch"]
    assert seen["stream_type"].startswith("text/event-stream")
    assert seen["events"][0] == "run.started" and seen["events"][-1] in TERMINAL, seen["events"]
    status, body = seen["metrics"]
    assert status == 404
    assert "converge_" not in body and '"not_found"' in body
