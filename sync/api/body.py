"""Reading an answer within its bounds: the body by its byte cap, the JSON by its nesting.

`ApiClient` streams every response (`send(stream=True)`) and hands it here, so no body is
ever held past the cap chosen for its kind (`sync.api.bounds.Bounds`): a Content-Length above
the cap is refused before a byte is read, and a body without one (chunked, or lying) is cut
as soon as it passes the cap. Decompressed bytes are what count, so a small gzip body that
inflates to a gigabyte is cut too (one network chunk inflates at most about a thousandfold,
which bounds the overshoot). An error answer's body is only ever a hint: past its cap it is
treated as absent and the status alone decides the error.

What comes out is an `Answer`: the status, the headers and the body, read and closed, so
nothing downstream can read more.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import httpx

from sync.errors import ResponseTooLarge, UnexpectedResponse


@dataclass(frozen=True, slots=True)
class Answer:
    """A response read whole within its cap: what the routes' parsers look at."""

    status: int
    headers: httpx.Headers
    body: bytes
    method: str
    path: str


def _declared(response: httpx.Response) -> int | None:
    value = response.headers.get("Content-Length")
    if value is None or not value.strip().isdigit():
        return None
    return int(value)


def _too_large(response: httpx.Response, cap: int) -> ResponseTooLarge:
    return ResponseTooLarge(
        f"The server sent an answer larger than the {_size(cap)} this client accepts for it; "
        "it was not read.",
        status=response.status_code,
        method=response.request.method,
        path=response.request.url.path,
    )


def _size(cap: int) -> str:
    if cap >= 1 << 20:
        return f"{cap / (1 << 20):g} MiB"
    return f"{cap / 1024:g} KiB"


async def read_capped(response: httpx.Response, cap: int, *, hint_only: bool = False) -> bytes:
    """The body of a streamed `response`, at most `cap` bytes after decoding.

    Past the cap: `ResponseTooLarge`, or with `hint_only` (an error answer's envelope)
    an empty body. The caller closes the response either way."""
    declared = _declared(response)
    if declared is not None and declared > cap:
        if hint_only:
            return b""
        raise _too_large(response, cap)
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > cap:
            if hint_only:
                return b""
            raise _too_large(response, cap)
        chunks.append(chunk)
    return b"".join(chunks)  # one chunk (the usual page) is returned without a copy


def json_of(answer: Answer) -> Any:
    """The answer's JSON body; a body that is not JSON, or nests so deep that parsing it
    would exhaust the stack, is an `UnexpectedResponse`, never a crash of the pass."""
    return parse_json(answer.body, status=answer.status, method=answer.method, path=answer.path)


def parse_json(
    body: bytes | str, *, status: int, method: str, path: str, what: str = "a body"
) -> Any:
    """`body` as JSON, or `UnexpectedResponse` (not JSON, or nested too deep to read): one
    parser for pages, views and a live stream's frames (`what` names it in the message)."""
    try:
        value = json.loads(body)
    except RecursionError as exc:
        raise UnexpectedResponse(
            "The server sent JSON nested too deeply to read.",
            status=status,
            method=method,
            path=path,
        ) from exc
    except ValueError as exc:
        raise UnexpectedResponse(
            f"The server sent {what} that is not JSON.",
            status=status,
            method=method,
            path=path,
        ) from exc
    return _without_lone_surrogates(value) if _hinted(body) else value


#: What a body holds where its JSON may give a lone surrogate: a `\uD800`-`\uDFFF` escape,
#: or (bytes: `json.loads` decodes them with `surrogatepass`) a surrogate's UTF-8 bytes or a
#: body in UTF-16 or UTF-32, whose every ASCII character holds a NUL byte.
_ESCAPES_IN_BYTES = (b"\\ud", b"\\uD")
_RAW_IN_BYTES = (b"\xed", b"\x00")
_ESCAPES_IN_TEXT = ("\\ud", "\\uD")


def _hinted(body: bytes | str) -> bool:
    """Whether `body` holds one of the hints above. An escape needs a backslash, which
    most bodies lack: one search for a single byte (memchr) then spares the searches for
    an escape's spelling, each of them slow over a page of the index."""
    if isinstance(body, bytes):
        escaped = b"\\" in body and any(hint in body for hint in _ESCAPES_IN_BYTES)
        return escaped or any(hint in body for hint in _RAW_IN_BYTES)
    return "\\" in body and any(hint in body for hint in _ESCAPES_IN_TEXT)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_lone_surrogates(value: Any) -> Any:
    """`value` with each lone surrogate of its strings (keys too) replaced by U+FFFD.

    JSON can spell half of a UTF-16 pair (a server that cuts text by UTF-16 units does),
    and no UTF-8 text can hold one: the mirror could not store it, and every pass that met
    it would fail. Undecodable bytes are shown as U+FFFD; so is this. Iterative: the body's
    nesting is checked after parsing (`sync.api.bounds.json_depth_ok`)."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            for index, item in enumerate(node):
                if isinstance(item, str):
                    node[index] = _LONE_SURROGATE.sub("\ufffd", item)
                elif isinstance(item, list | dict):
                    stack.append(item)
        elif isinstance(node, dict):
            for key in [key for key in node if _LONE_SURROGATE.search(key)]:
                node[_LONE_SURROGATE.sub("\ufffd", key)] = node.pop(key)
            for key, item in node.items():
                if isinstance(item, str):
                    node[key] = _LONE_SURROGATE.sub("\ufffd", item)
                elif isinstance(item, list | dict):
                    stack.append(item)
    return value
