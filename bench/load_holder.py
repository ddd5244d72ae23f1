"""`python -m bench.load_holder URL TOKEN PATH N [HEADER...]`: hold N open requests.

A separate process for the load benchmark, so that the client side of hundreds of streams
costs the measured process nothing. Each connection sends one GET with the given headers
(`Name: value`) and then reads whatever comes (SSE frames, keep-alives) until the process is
stopped. Once every response head has arrived it prints `ready <N> <statuses>` and flushes.

PATH `-` holds N connections that send nothing (an idle, unauthenticated crowd), each opened
again whenever the server closes it; PATH prefixed with `sent:` prints `ready` once every
request is written rather than answered (held watches answer only when they end).
"""

from __future__ import annotations

import asyncio
import resource
import sys
from collections import Counter
from urllib.parse import urlsplit


async def _hold(
    host: str, port: int, request: bytes, heads: asyncio.Queue[int], sent: asyncio.Queue[int]
) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(request)
    await writer.drain()
    await sent.put(0)
    status_line = await reader.readline()
    parts = status_line.split()
    await heads.put(int(parts[1]) if len(parts) > 1 else 0)
    while await reader.read(65536):
        pass
    writer.close()


async def _idle(host: str, port: int, opened: asyncio.Queue[int]) -> None:
    first = True
    while True:
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError:
            await asyncio.sleep(0.05)
            continue
        if first:
            await opened.put(0)
            first = False
        while await reader.read(65536):
            pass
        writer.close()


async def _main(url: str, token: str, path: str, count: int, headers: list[str]) -> None:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    sent_only = path.startswith("sent:")
    path = path.removeprefix("sent:")
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}:{port}", f"Authorization: Bearer {token}"]
    request = ("\r\n".join([*lines, *headers]) + "\r\n\r\n").encode()
    heads: asyncio.Queue[int] = asyncio.Queue()
    sent: asyncio.Queue[int] = asyncio.Queue()
    tasks = []
    for _ in range(count):
        if path == "-":
            tasks.append(asyncio.create_task(_idle(host, port, heads)))
        else:
            tasks.append(asyncio.create_task(_hold(host, port, request, heads, sent)))
        await asyncio.sleep(0)  # let each connect start before the next
    if sent_only:
        for _ in range(count):
            await sent.get()
        print(f"ready {count} sent", flush=True)
    else:
        statuses: Counter[int] = Counter()
        for _ in range(count):
            statuses[await heads.get()] += 1
        summary = ",".join(f"{k}x{v}" for k, v in sorted(statuses.items()))
        print(f"ready {count} {summary}", flush=True)
    await asyncio.gather(*tasks, return_exceptions=True)


if __name__ == "__main__":
    _soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (_hard, _hard))  # the crowd needs its sockets
    url, token, path, n, *extra = sys.argv[1:]
    asyncio.run(_main(url, token, path, int(n), extra))
