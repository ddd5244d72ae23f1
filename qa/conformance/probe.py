"""The conformance checker's only way to the server: bounded requests through public routes.

A server under test is not trusted (CONTRACT §10.1), so every request has its own timeout,
every answer a byte cap, and a 429 is waited out only within the run's deadline. Every
error answer is kept (bounded) so that the envelope rule can judge all of them at the end,
rather than each check re-deciding what an envelope is. A check that cannot get an answer
fails with `RuleFailed`: a rule it could not observe is not a rule that holds.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

#: The largest answer read: far above a full index page.
MAX_ANSWER_BYTES = 4 * 1024 * 1024
#: Each request's own bound (a held watch gets its wait on top).
REQUEST_SECONDS = 15.0
#: Error answers kept for the envelope rule.
MAX_KEPT_ERRORS = 2000
#: A 429's `Retry-After` is honoured up to this long, at most a few times.
MAX_RATE_WAIT = 5.0
RATE_RETRIES = 5


class RuleFailed(Exception):
    """A rule does not hold; `evidence` is one line saying what was seen."""

    def __init__(self, evidence: str) -> None:
        super().__init__(evidence)
        self.evidence = evidence


class Unreachable(Exception):
    """The server cannot be asked anything (exit 2, not a rule's failure)."""


def seg(value: object) -> str:
    """An id from the server as one percent-encoded path segment (`sync.api.client._seg` for the
    checker). The server is not trusted: unquoted, a control character makes the HTTP
    client refuse the URL and a `/` or `?` steers the request to another route. An id that
    is not a string, or that URL handling would normalise away (empty, `.`, `..`), fails
    the rule that needed it."""
    if not isinstance(value, str) or value in ("", ".", ".."):
        raise RuleFailed(f"the server handed out the id {value!r}, which cannot be a path segment")
    return quote(value, safe="")


def expect(condition: bool, evidence: str) -> None:
    """Fail the current rule with `evidence` unless `condition` holds."""
    if not condition:
        raise RuleFailed(evidence)


@dataclass(frozen=True)
class Answer:
    """One answer, read whole within the bounds."""

    method: str
    path: str
    status: int
    headers: httpx.Headers
    body: bytes
    seconds: float

    def json(self) -> Any:
        """The body as JSON, or None when it is not JSON."""
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    def obj(self) -> dict[str, Any]:
        """The body as a JSON object; a rule fails when it is anything else."""
        value = self.json()
        if not isinstance(value, dict):
            raise RuleFailed(f"{self.what()}: the body is not a JSON object")
        return value

    def what(self) -> str:
        """`METHOD /path → status`, for evidence."""
        return f"{self.method} {self.path} -> {self.status}"

    def code(self) -> str | None:
        """The envelope's `error.code`, when there is one."""
        value = self.json()
        if isinstance(value, dict) and isinstance(value.get("error"), dict):
            code = value["error"].get("code")
            return code if isinstance(code, str) else None
        return None

    def details(self) -> dict[str, Any]:
        """The envelope's `error.details` (empty when absent or malformed)."""
        value = self.json()
        if isinstance(value, dict) and isinstance(value.get("error"), dict):
            details = value["error"].get("details")
            if isinstance(details, dict):
                return details
        return {}


@dataclass
class Probe:
    """The two principals' view of one server: `a` and `b` are their tokens."""

    client: httpx.AsyncClient
    a: str
    b: str
    deadline: float
    errors: list[Answer] = field(default_factory=list)
    requests: int = 0

    @classmethod
    def open(cls, server: str, a: str, b: str, deadline: float) -> Probe:
        """A probe with its own client (`close` it); `deadline` is a `time.monotonic` value."""
        client = httpx.AsyncClient(
            base_url=server.rstrip("/"),
            timeout=httpx.Timeout(REQUEST_SECONDS),
            limits=httpx.Limits(max_connections=20),
            follow_redirects=False,
            # Raw bytes are what is bounded and compared: no compression to undo.
            headers={"Accept-Encoding": "identity"},
        )
        return cls(client=client, a=a, b=b, deadline=deadline)

    async def close(self) -> None:
        await self.client.aclose()

    def left(self) -> float:
        """Seconds before the run's deadline."""
        return self.deadline - time.monotonic()

    async def call(
        self,
        method: str,
        path: str,
        *,
        token: str | None,
        params: Mapping[str, str] | None = None,
        body: Any = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = REQUEST_SECONDS,
    ) -> Answer:
        """One request; `token` None sends no `Authorization`. `body` is sent as JSON,
        `content` as raw bytes (JSON content type)."""
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        if body is not None:
            content = json.dumps(body).encode()
        if content is not None:
            sent.setdefault("Content-Type", "application/json")
        for _attempt in range(RATE_RETRIES):
            answer = await self._once(method, path, params, content, sent, timeout)
            if answer.status != 429:
                break
            wait = _retry_after(answer.headers.get("Retry-After"))
            if wait > self.left() - 1:
                break
            await asyncio.sleep(wait)
        if answer.status >= 400 and len(self.errors) < MAX_KEPT_ERRORS:
            self.errors.append(answer)
        return answer

    async def _once(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | None,
        content: bytes | None,
        headers: dict[str, str],
        timeout: float,
    ) -> Answer:
        bound = min(timeout, max(self.left(), 0.5))
        started = time.monotonic()
        try:
            async with asyncio.timeout(bound):
                request = self.client.build_request(
                    method, path, params=params, content=content, headers=headers
                )
                response = await self.client.send(request, stream=True)
                try:
                    body = bytearray()
                    async for chunk in response.aiter_raw():
                        body += chunk
                        if len(body) > MAX_ANSWER_BYTES:
                            raise RuleFailed(
                                f"{method} {path}: the answer exceeds {MAX_ANSWER_BYTES} bytes"
                            )
                finally:
                    await response.aclose()
        except TimeoutError as exc:
            raise RuleFailed(f"{method} {path}: no answer within {bound:.1f} s") from exc
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise RuleFailed(f"{method} {path!r}: no answer ({type(exc).__name__})") from exc
        self.requests += 1
        return Answer(
            method=method,
            path=path,
            status=response.status_code,
            headers=response.headers,
            body=bytes(body),
            seconds=time.monotonic() - started,
        )


def _retry_after(value: str | None) -> float:
    try:
        seconds = float(value or "1")
    except ValueError:
        seconds = 1.0
    return min(max(seconds, 0.05), MAX_RATE_WAIT)


async def oversized_post(probe: Probe, path: str, size: int) -> Answer:
    """POST a declared body of `size` bytes, sending only its head: a server may answer
    413 before reading it (CONTRACT §1) and close, which an HTTP client that is still
    writing reports as a broken connection rather than the answer. Plain sockets here."""
    url = probe.client.base_url
    host = url.host
    port = url.port or (443 if url.scheme == "https" else 80)
    head = (
        f"POST {url.raw_path.decode().rstrip('/')}{path} HTTP/1.1\r\nHost: {url.netloc.decode()}"
        f"\r\nAuthorization: Bearer {probe.a}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {size}\r\nConnection: close\r\n\r\n"
    ).encode()
    started = time.monotonic()
    try:
        async with asyncio.timeout(REQUEST_SECONDS):
            reader, writer = await asyncio.open_connection(
                host, port, ssl=url.scheme == "https" or None
            )
            try:
                writer.write(head + b'{"pad": "' + b"x" * 1024)
                await writer.drain()
                raw = await reader.read(MAX_ANSWER_BYTES)
                while len(raw) < MAX_ANSWER_BYTES:
                    more = await reader.read(MAX_ANSWER_BYTES - len(raw))
                    if not more:
                        break
                    raw += more
            finally:
                writer.close()
    except (OSError, TimeoutError) as exc:
        raise RuleFailed(
            f"POST {path} with {size} bytes: no answer ({type(exc).__name__})"
        ) from exc
    status_line, _, rest = raw.partition(b"\r\n")
    parts = status_line.split()
    if len(parts) < 2 or not parts[1].isdigit():
        raise RuleFailed(f"POST {path} with {size} bytes: no HTTP answer")
    head_bytes, _, body = rest.partition(b"\r\n\r\n")
    pairs: list[tuple[bytes, bytes]] = []
    for line in head_bytes.split(b"\r\n"):
        name, colon, value = line.partition(b":")
        if colon:
            pairs.append((name.strip(), value.strip()))
    headers = httpx.Headers(pairs)
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = _unchunk(body)
    answer = Answer("POST", path, int(parts[1]), headers, body, time.monotonic() - started)
    if answer.status >= 400:
        probe.errors.append(answer)
    return answer


def _unchunk(data: bytes) -> bytes:
    out = bytearray()
    while data:
        size_line, _, data = data.partition(b"\r\n")
        try:
            size = int(size_line.split(b";")[0], 16)
        except ValueError:
            break
        if size == 0:
            break
        out += data[:size]
        data = data[size + 2 :]
    return bytes(out)
