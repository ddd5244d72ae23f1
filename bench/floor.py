"""The server beside its floor: the real `converge-server` and a floor app, same uvicorn, same
bytes, measured interleaved in one run (`python -m bench server`, the "floor" tables).

The floor app is the least a server can do for `GET /v1/sessions?limit=50`: a minimal
Starlette app under the same uvicorn settings as `converge-server` (`server_stub.cli`: the
bounded h11 protocol, its head limit and timeouts) that answers the bytes the real server
answered for the first page, with its ETag, and 304 when `If-None-Match` names that ETag.
The deepest page (the last full page of a walk at `limit=50`, by its cursor) is measured
the same way against the floor answering that page's bytes to any request with a cursor.
Beside the page, the DELETE of a typical conversation (one scripted run, made through the API
untimed) is measured against the floor's 304: a bodiless round trip, the least any request
costs, so that the ratio is what the purge and the route add to a round trip.

Both run as child processes, so a server's CPU time is its own (read from
`/proc/PID/stat`), and both are spoken to over raw keep-alive sockets: one request's bytes,
written once, and a response read by `Content-Length`, so that no client library's cost
lands in the figures. Ratios of the two, measured round by round in the same run, are what
compares across a busy machine; absolute figures move with the load of the moment.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from bench import report

PATH = "/v1/sessions?limit=50"
#: Ceiling of one response the client will read (a first page of 50 is ~10 KiB).
MAX_RESPONSE = 1 << 20
CLIENT_COUNTS = (1, 32)

TARGETS = {
    "first_page_floor_ratio": 2.5,
    #: A page read from the database (the unchanged page above may be answered from the
    #: bytes remembered with its version, decision 0110), and the deepest page, read by its
    #: cursor (issue 38).
    "first_page_after_a_change_floor_ratio": 1.5,
    "deepest_page_floor_ratio": 2.0,
    "not_modified_floor_ratio": 1.5,
    "throughput_32_over_1": 1.0,
    "typical_delete_floor_ratio": 5.0,
}


def floor_main(argv: list[str]) -> int:
    """Child process: serve the floor app for BODY_FILE with ETAG (and DEEP_FILE to a request
    with a cursor); print "listening on URL"."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from server_stub.cli import serve, server_config
    from server_stub.config import ServerSettings

    body_file, etag, deep_file = argv
    body = Path(body_file).read_bytes()
    deep = Path(deep_file).read_bytes()

    async def sessions(request: Request) -> Response:
        if "cursor" in request.query_params:
            return Response(deep, media_type="application/json")
        if request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers={"ETag": etag})
        return Response(body, media_type="application/json", headers={"ETag": etag})

    app = Starlette(routes=[Route("/v1/sessions", sessions)])
    settings = ServerSettings(host="127.0.0.1", port=0)
    return serve(app, server_config(app, settings, "warning"))  # the CLI's own (PITFALLS §14)


@contextmanager
def floor_server(body: bytes, etag: str, deep: bytes, workdir: Path) -> Iterator[tuple[int, str]]:
    """(pid, base URL) of a floor app child process answering `body` and `etag` (and `deep`
    to a request with a cursor)."""
    body_file, deep_file = workdir / "floor-body.json", workdir / "floor-deep.json"
    body_file.write_bytes(body)
    deep_file.write_bytes(deep)
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys, bench.floor as f; sys.exit(f.floor_main(sys.argv[1:]))",
         str(body_file), etag, str(deep_file)],
        stdout=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    try:
        line = proc.stdout.readline().decode()
        if not line.startswith("listening on "):
            raise RuntimeError(f"floor app did not start: {line!r}")
        yield proc.pid, line.removeprefix("listening on ").strip()
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def request_bytes(url: str, token: str, etag: str | None = None, cursor: str = "") -> bytes:
    """One keep-alive GET of the first page (or of the page at `cursor`), as bytes on the
    wire."""
    host = urlsplit(url).netloc
    path = f"{PATH}&cursor={cursor}" if cursor else PATH
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}", f"Authorization: Bearer {token}"]
    if etag is not None:
        lines.append(f"If-None-Match: {etag}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def create_bytes(url: str, token: str) -> bytes:
    """One keep-alive `POST /v1/sessions` with `{}`: a change of the principal's index."""
    host = urlsplit(url).netloc
    lines = [
        "POST /v1/sessions HTTP/1.1",
        f"Host: {host}",
        f"Authorization: Bearer {token}",
        "Content-Type: application/json",
        "Content-Length: 2",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n{}").encode()


def delete_bytes(url: str, token: str, session_id: str) -> bytes:
    """One keep-alive `DELETE /v1/sessions/{id}`, bodiless."""
    host = urlsplit(url).netloc
    lines = [
        f"DELETE /v1/sessions/{session_id} HTTP/1.1",
        f"Host: {host}",
        f"Authorization: Bearer {token}",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def typical_sessions(client: httpx.Client, count: int) -> tuple[list[str], int]:
    """`count` sessions made through the API, each with one finished run of the scripted
    agent; and how many events each holds."""
    made: list[tuple[str, str]] = []
    for n in range(count):
        sid = client.post("/v1/sessions", json={}).json()["id"]
        body = {"input": {"role": "user", "content": [{"type": "text", "text": f"hello {n}"}]}}
        resp = client.post(f"/v1/sessions/{sid}/runs", json=body)
        resp.raise_for_status()
        made.append((sid, resp.json()["id"]))
    deadline = time.monotonic() + 60
    for _sid, rid in made:
        while client.get(f"/v1/runs/{rid}").json()["status"] != "completed":
            if time.monotonic() > deadline:
                raise RuntimeError(f"run {rid} did not complete")
            time.sleep(0.01)
    events = client.get(f"/v1/sessions/{made[0][0]}/events").json()["items"]
    return [sid for sid, _ in made], len(events)


def delete_latency(
    real_url: str, floor_url: str, token: str, samples: int, warmup: int
) -> tuple[dict[str, list[float]], int]:
    """Seconds per DELETE of a typical session on the real server and per 304 of the floor,
    one of each per round, each on its own keep-alive connection; and the events a typical
    session holds."""
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=real_url, headers=headers, timeout=60) as client:
        sids, events = typical_sessions(client, warmup + samples)
    floor_304 = request_bytes(floor_url, token, _floor_etag(floor_url, token))
    real, floor = RawConnection(real_url), RawConnection(floor_url)
    out: dict[str, list[float]] = {"real DELETE, typical": [], "floor 304 beside it": []}
    try:
        for round_no, sid in enumerate(sids):
            for name, conn, request, expected in (
                ("real DELETE, typical", real, delete_bytes(real_url, token, sid), 204),
                ("floor 304 beside it", floor, floor_304, 304),
            ):
                started = time.perf_counter()
                status, _headers, _body = conn.fetch(request)
                elapsed = time.perf_counter() - started
                if status != expected:
                    raise RuntimeError(f"{name} answered {status}, not {expected}")
                if round_no >= warmup:
                    out[name].append(elapsed)
    finally:
        real.close()
        floor.close()
    return out, events


def deepest_cursor(url: str, token: str) -> tuple[str, bytes]:
    """The cursor of the deepest full page of a walk at `limit=50` whose page still names a
    next one, and that page's bytes."""
    conn = RawConnection(url)
    deepest, cursor = ("", b""), ""
    try:
        while True:
            status, _headers, body = conn.fetch(request_bytes(url, token, cursor=cursor))
            if status != 200:
                raise RuntimeError(f"the walk answered {status}")
            following = json.loads(body)["next_cursor"]
            if following is None:
                break
            if cursor:
                deepest = (cursor, body)
            cursor = following
    finally:
        conn.close()
    if not deepest[0]:
        raise RuntimeError("the index holds too few pages for a deepest one")
    return deepest


def _floor_etag(url: str, token: str) -> str:
    conn = RawConnection(url)
    try:
        _status, headers, _body = conn.fetch(request_bytes(url, token))
    finally:
        conn.close()
    return headers["etag"]


def _split_head(head: bytes) -> tuple[int, dict[str, str]]:
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(status_line.split(" ", 2)[1]), headers


class RawConnection:
    """A blocking keep-alive connection that writes one request's bytes and reads one
    response by its `Content-Length` (bounded: `MAX_RESPONSE`)."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buffer = b""

    def fetch(self, request: bytes) -> tuple[int, dict[str, str], bytes]:
        self.sock.sendall(request)
        while b"\r\n\r\n" not in self._buffer:
            self._read()
        head, _, rest = self._buffer.partition(b"\r\n\r\n")
        status, headers = _split_head(head)
        length = int(headers.get("content-length", "0"))
        if length > MAX_RESPONSE:
            raise RuntimeError(f"response of {length} bytes")
        while len(rest) < length:
            rest += self._recv()
        self._buffer = rest[length:]
        return status, headers, rest[:length]

    def _read(self) -> None:
        self._buffer += self._recv()
        if len(self._buffer) > MAX_RESPONSE:
            raise RuntimeError("response head too large")

    def _recv(self) -> bytes:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise RuntimeError("server closed the connection")
        return chunk

    def close(self) -> None:
        self.sock.close()


def loop_cpu_ns(pid: int) -> int:
    """Nanoseconds process `pid`'s main thread has run on a CPU so far (`/proc/PID/schedstat`:
    the scheduler's own clock, not the 10 ms ticks of `/proc/PID/stat`)."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` so far (Linux `/proc/PID/stat`)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def latency(
    targets: dict[str, tuple[str, bytes, int]],
    samples: int,
    warmup: int,
    *,
    before: dict[str, tuple[str, bytes, int]] | None = None,
    pids: dict[str, int] | None = None,
    cpu: dict[str, list[float]] | None = None,
) -> dict[str, list[float]]:
    """Seconds per request for each named (url, request, expected status), one of each per
    round (interleaved), each on its own keep-alive connection. `before` names, for some
    targets, a request sent (untimed, on a connection of its own) just before each of that
    target's timed requests: a write that moves the index, so that the timed page is the
    first one read after a change. With `pids` (target name → server pid), the seconds the
    server's main thread (its event loop) spent on CPU during each timed request go into
    `cpu`: on a loaded machine they move far less than the wall time."""
    before = before or {}
    pids = pids or {}
    conns = {name: RawConnection(url) for name, (url, _req, _status) in targets.items()}
    writers = {name: RawConnection(url) for name, (url, _req, _status) in before.items()}
    out: dict[str, list[float]] = {name: [] for name in targets}
    try:
        for round_no in range(warmup + samples):
            for name, (_url, request, expected) in targets.items():
                if name in before:
                    _wurl, write, wexpected = before[name]
                    wstatus, _h, _b = writers[name].fetch(write)
                    if wstatus != wexpected:
                        raise RuntimeError(f"{name}: the write answered {wstatus}")
                pid = pids.get(name)
                cpu_before = loop_cpu_ns(pid) if pid else 0
                started = time.perf_counter()
                status, _headers, _body = conns[name].fetch(request)
                elapsed = time.perf_counter() - started
                cpu_spent = (loop_cpu_ns(pid) - cpu_before) / 1e9 if pid else 0.0
                if status != expected:
                    raise RuntimeError(f"{name} answered {status}, not {expected}")
                if round_no >= warmup:
                    out[name].append(elapsed)
                    if pid and cpu is not None:
                        cpu.setdefault(name, []).append(cpu_spent)
    finally:
        for conn in (*conns.values(), *writers.values()):
            conn.close()
    return out


async def _client(
    streams: tuple[asyncio.StreamReader, asyncio.StreamWriter],
    request: bytes,
    stop_at: float,
    counts: list[int],
    expected: int,
) -> None:
    reader, writer = streams
    loop = asyncio.get_running_loop()
    while True:  # at least one request each, however late the loop reaches this client
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        status, headers = _split_head(head[:-4])
        if status != expected:
            raise RuntimeError(f"answered {status}, not {expected}")
        length = int(headers.get("content-length", "0"))
        if length > MAX_RESPONSE:
            raise RuntimeError(f"response of {length} bytes")
        await reader.readexactly(length)
        counts[0] += 1
        if loop.time() >= stop_at:
            return


def throughput(url: str, pid: int, request: bytes, clients: int, seconds: float) -> dict[str, Any]:
    """Requests per second with `clients` concurrent keep-alive connections for `seconds`,
    and the server's CPU time per request (all its threads). Every connection is open before
    the clock starts, so a slow accept on a loaded machine cannot eat the whole window."""
    parts = urlsplit(url)

    async def run() -> tuple[int, float, float]:
        streams = [
            await asyncio.open_connection(parts.hostname, parts.port) for _ in range(clients)
        ]
        try:
            counts = [0]
            cpu_before, started = cpu_seconds(pid), time.perf_counter()
            stop_at = asyncio.get_running_loop().time() + seconds
            await asyncio.gather(*(_client(s, request, stop_at, counts, 200) for s in streams))
            return counts[0], time.perf_counter() - started, cpu_seconds(pid) - cpu_before
        finally:
            for _reader, writer in streams:
                writer.close()

    done, elapsed, cpu = asyncio.run(run())
    return {
        "clients": clients,
        "requests": done,
        "requests_per_s": round(done / elapsed, 1),
        "cpu_ms_per_request": round(cpu / max(done, 1) * 1000, 3),
    }


def _median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 3)


def measure(
    real: tuple[int, str],
    token: str,
    workdir: Path,
    *,
    samples: int,
    rounds: int,
    seconds: float,
    deletes: int = 0,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """The floor figures: the real server (pid, url) against a floor app serving its bytes;
    with `deletes`, that many DELETEs of typical sessions against the floor's 304."""
    real_pid, real_url = real
    probe = RawConnection(real_url)
    try:
        status, headers, body = probe.fetch(request_bytes(real_url, token))
    finally:
        probe.close()
    if status != 200 or "etag" not in headers:
        raise RuntimeError(f"the first page answered {status} without an ETag")
    etag = headers["etag"]
    cursor, deep = deepest_cursor(real_url, token)
    with floor_server(body, etag, deep, workdir) as (floor_pid, floor_url):
        log("measuring the floor (latency) ...")
        cpu: dict[str, list[float]] = {}
        lat = latency(
            {
                "real page": (real_url, request_bytes(real_url, token), 200),
                "floor page": (floor_url, request_bytes(floor_url, token), 200),
                "real 304": (real_url, request_bytes(real_url, token, etag), 304),
                "floor 304": (floor_url, request_bytes(floor_url, token, etag), 304),
                "real deepest page": (
                    real_url,
                    request_bytes(real_url, token, cursor=cursor),
                    200,
                ),
                "floor deepest page": (
                    floor_url,
                    request_bytes(floor_url, token, cursor=cursor),
                    200,
                ),
            },
            samples,
            max(5, samples // 10),
            pids=_pids(real_pid, floor_pid, "page", "304", "deepest page"),
            cpu=cpu,
        )
        # Apart, after the rest: each write moves the index, so the 304 above would turn 200.
        lat |= latency(
            {
                "real page after a change": (real_url, request_bytes(real_url, token), 200),
                "floor page beside it": (floor_url, request_bytes(floor_url, token), 200),
            },
            samples,
            max(5, samples // 10),
            before={"real page after a change": (real_url, create_bytes(real_url, token), 201)},
            pids={"real page after a change": real_pid, "floor page beside it": floor_pid},
            cpu=cpu,
        )
        events = 0
        if deletes:
            log("measuring DELETE against the floor ...")
            got, events = delete_latency(real_url, floor_url, token, deletes, max(5, deletes // 10))
            lat |= got
        log("measuring the floor (throughput) ...")
        runs: dict[tuple[str, int], list[dict[str, Any]]] = {}
        for _ in range(rounds):
            for clients in CLIENT_COUNTS:
                for name, pid, url in (
                    ("real", real_pid, real_url),
                    ("floor", floor_pid, floor_url),
                ):
                    got = throughput(url, pid, request_bytes(url, token), clients, seconds)
                    runs.setdefault((name, clients), []).append(got)
    figures: dict[str, Any] = {"body_bytes": len(body), "latency_ms": {}, "throughput": []}
    if deletes:
        figures["typical_delete_events"] = events
    figures["loop_cpu_us"] = {
        name: {
            "median_us": round(statistics.median(values) * 1e6, 1),
            "mean_us": round(statistics.fmean(values) * 1e6, 1),
        }
        for name, values in cpu.items()
    }
    for name, values in lat.items():
        figures["latency_ms"][name] = {
            **report.summarize_ms(values),
            "min_ms": round(min(values) * 1000, 3),
        }
    for (name, clients), measured in runs.items():
        figures["throughput"].append(
            {
                "server": name,
                "clients": clients,
                "requests_per_s": round(
                    statistics.median(g["requests_per_s"] for g in measured), 1
                ),
                "cpu_ms_per_request": round(
                    statistics.median(g["cpu_ms_per_request"] for g in measured), 3
                ),
                "rounds": len(measured),
            }
        )
    figures["targets"] = verdicts(figures)
    return figures


def _pids(real: int, floor: int, *kinds: str) -> dict[str, int]:
    """Target name → pid of the server answering it, for `latency`'s CPU figures."""
    return {
        f"{side} {kind}": pid for kind in kinds for side, pid in (("real", real), ("floor", floor))
    }


def _rate(figures: dict[str, Any], server: str, clients: int) -> dict[str, Any]:
    for row in figures["throughput"]:
        if row["server"] == server and row["clients"] == clients:
            return dict(row)
    raise KeyError((server, clients))


def verdicts(figures: dict[str, Any]) -> dict[str, Any]:
    """Each target's value and whether it is met."""
    lat = figures["latency_ms"]
    page = lat["real page"]["median_ms"] / lat["floor page"]["median_ms"]
    changed = (
        lat["real page after a change"]["median_ms"] / lat["floor page beside it"]["median_ms"]
    )
    nm = lat["real 304"]["median_ms"] / lat["floor 304"]["median_ms"]
    deepest = lat["real deepest page"]["median_ms"] / lat["floor deepest page"]["median_ms"]
    scaling = (
        _rate(figures, "real", CLIENT_COUNTS[-1])["requests_per_s"]
        / _rate(figures, "real", CLIENT_COUNTS[0])["requests_per_s"]
    )
    values = {
        "first_page_floor_ratio": (round(page, 2), page <= TARGETS["first_page_floor_ratio"]),
        "first_page_after_a_change_floor_ratio": (
            round(changed, 2),
            changed <= TARGETS["first_page_after_a_change_floor_ratio"],
        ),
        "not_modified_floor_ratio": (round(nm, 2), nm <= TARGETS["not_modified_floor_ratio"]),
        "deepest_page_floor_ratio": (
            round(deepest, 2),
            deepest <= TARGETS["deepest_page_floor_ratio"],
        ),
        "throughput_32_over_1": (round(scaling, 2), scaling >= TARGETS["throughput_32_over_1"]),
    }
    if "real DELETE, typical" in lat:
        ratio = lat["real DELETE, typical"]["median_ms"] / lat["floor 304 beside it"]["median_ms"]
        values["typical_delete_floor_ratio"] = (
            round(ratio, 2),
            ratio <= TARGETS["typical_delete_floor_ratio"],
        )
    return {k: {"value": v, "target": TARGETS[k], "met": ok} for k, (v, ok) in values.items()}


def print_figures(figures: dict[str, Any], backend: str) -> None:
    """The floor tables: latency with ratios, throughput with CPU per request, targets."""
    lat = figures["latency_ms"]
    rows = []
    labels = {
        "page": "first page of 50, unchanged",
        "page after a change": "first page of 50, just after a change",
        "304": "first page, If-None-Match (304)",
        "deepest page": "deepest full page of 50, by its cursor",
    }
    if "real DELETE, typical" in lat:
        events = figures.get("typical_delete_events", "?")
        labels["DELETE, typical"] = f"DELETE of a typical session ({events} events, 1 run)"
    for what, label in labels.items():
        floor_name = {
            "304": "floor 304",
            "page after a change": "floor page beside it",
            "DELETE, typical": "floor 304 beside it",
            "deepest page": "floor deepest page",
        }
        real_name, floor_name_ = f"real {what}", floor_name.get(what, "floor page")
        real, floor = lat[real_name], lat[floor_name_]
        cpu = figures.get("loop_cpu_us", {})
        real_cpu = cpu.get(real_name, {}).get("mean_us", "")
        floor_cpu = cpu.get(floor_name_, {}).get("mean_us", "")
        rows.append(
            [
                label,
                real["median_ms"],
                real["p95_ms"],
                real["min_ms"],
                floor["median_ms"],
                floor["min_ms"],
                round(real["median_ms"] / floor["median_ms"], 2),
                real_cpu,
                floor_cpu,
                round(real_cpu / floor_cpu, 2) if real_cpu and floor_cpu else "",
            ]
        )
    report.print_table(
        f"The floor ({backend}): real server against a minimal Starlette app answering the "
        "same bytes, same uvicorn, raw keep-alive sockets, interleaved (ms)",
        [
            "request",
            "real median",
            "real p95",
            "real min",
            "floor median",
            "floor min",
            "ratio",
            "real loop CPU µs",
            "floor loop CPU µs",
            "CPU ratio",
        ],
        rows,
    )
    report.print_table(
        f"Throughput ({backend}): keep-alive clients for a fixed time, median of rounds; CPU "
        "is the server process's own",
        ["server", "clients", "requests/s", "CPU ms/request", "rounds"],
        [
            [r["server"], r["clients"], r["requests_per_s"], r["cpu_ms_per_request"], r["rounds"]]
            for r in figures["throughput"]
        ],
    )
    report.print_table(
        f"Floor targets ({backend})",
        ["measure", "value", "target", "met"],
        [
            [k, v["value"], v["target"], "yes" if v["met"] else "NO"]
            for k, v in figures["targets"].items()
        ],
    )
