"""Reading a Server-Sent Events stream within bounds: frames out of bytes, never unbounded.

`httpx_sse` reads a stream with `aiter_lines`, which holds a line until its end arrives: a
server that sends bytes without ever ending a line (or data lines without ever ending a
frame) would grow the client's memory for as long as the connection lasts, and the read
timeout never fires because bytes keep coming. This decoder does the same job (the
WHATWG event-stream format: lines ended by CRLF, LF or CR; `data`, `event`, `id` fields;
comments; a blank line dispatches) over `aiter_bytes`, and stops with `ResponseTooLarge`
as soon as an unfinished line passes `Bounds.sse_line_bytes` or an undispatched frame's
data passes `Bounds.sse_frame_bytes`, and with `ResponseTooSlow` when an event is still
unfinished `Bounds.sse_event_seconds` after its first byte (bytes trickled a few at a
time never trip the read timeout, nor a byte cap for months). Keep-alive comments are
complete lines, so a stream of nothing but keep-alives is never cut (the contract sends one
at least every 15 s).

It does not parse the frame's JSON (`sync.api.body.parse_json` does, with the same
rules as a page) and knows nothing of routes.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx

from sync.errors import ResponseTooLarge, ResponseTooSlow


@dataclass(frozen=True, slots=True)
class Frame:
    """One dispatched event: its `data` (lines joined by LF), `event` type and `id`."""

    data: str
    event: str
    id: str | None


def _too_large(what: str, cap: int, path: str) -> ResponseTooLarge:
    size = f"{cap / (1 << 20):g} MiB" if cap >= 1 << 20 else f"{cap / 1024:g} KiB"
    return ResponseTooLarge(
        f"The server's live event stream sent {what} longer than the {size} this client "
        "accepts; the stream was closed.",
        status=200,
        method="GET",
        path=path,
    )


class FrameDecoder:
    """Bytes in (`feed`), complete frames out; raises `ResponseTooLarge` past a cap.

    Bytes are kept as bytes until a line ends, so a multi-byte character split across
    network chunks decodes whole, and the line cap counts what was actually held."""

    def __init__(self, *, line_bytes: int, frame_bytes: int, path: str = "") -> None:
        self._line_cap = line_bytes
        self._frame_cap = frame_bytes
        self._path = path
        self._pending = bytearray()  # the unfinished line
        self._skip_lf = False  # the last line ended with CR: a leading LF belongs to it
        self._data: list[str] = []
        self._data_bytes = 0
        self._event = ""
        self._id: str | None = None

    @property
    def unfinished(self) -> bool:
        """Bytes of an event are held: a line not ended yet, or data lines not dispatched."""
        return bool(self._pending or self._data)

    def feed(self, chunk: bytes) -> list[Frame]:
        """The frames `chunk` completes (often none, sometimes several)."""
        frames: list[Frame] = []
        if self._skip_lf and chunk[:1] == b"\n":
            chunk = chunk[1:]  # the LF of a CRLF split across chunks
        self._skip_lf = False
        # `bytes.splitlines` splits at CRLF, LF and CR only: the format's line ends.
        for piece in chunk.splitlines(keepends=True):
            ended = piece[-1:] in (b"\n", b"\r")
            body = piece.rstrip(b"\r\n") if ended else piece
            if len(self._pending) + len(body) > self._line_cap:
                raise _too_large("a line", self._line_cap, self._path)
            if not ended:
                self._pending += body  # only ever the chunk's last piece
                break
            if self._pending:
                body = bytes(self._pending) + body
                self._pending.clear()
            self._skip_lf = piece.endswith(b"\r")  # matters for the last piece only
            frame = self._line(body.decode("utf-8", errors="replace"))
            if frame is not None:
                frames.append(frame)
        return frames

    def _line(self, line: str) -> Frame | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None  # a comment: keep-alive
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data_bytes += len(value) + 1
            if self._data_bytes > self._frame_cap:
                raise _too_large("an event", self._frame_cap, self._path)
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
        return None  # `retry` and unknown fields are ignored, as the format says

    def _dispatch(self) -> Frame | None:
        data, self._data, self._data_bytes = self._data, [], 0
        event, self._event = self._event, ""
        if not data:
            return None
        return Frame("\n".join(data), event or "message", self._id)


async def frames(
    response: httpx.Response, *, line_bytes: int, frame_bytes: int, event_seconds: float
) -> AsyncIterator[Frame]:
    """The frames of a streamed `response`, each within the caps; the caller closes it."""
    path = response.request.url.path
    decoder = FrameDecoder(line_bytes=line_bytes, frame_bytes=frame_bytes, path=path)
    clock = asyncio.get_running_loop().time
    began: float | None = None  # when the event now held unfinished began to arrive
    async for chunk in response.aiter_bytes():
        for frame in decoder.feed(chunk):
            yield frame
        if not decoder.unfinished:
            began = None
        elif began is None:
            began = clock()
        elif clock() - began > event_seconds:
            raise ResponseTooSlow(
                "The server's live event stream did not finish sending an event within "
                f"{event_seconds:g} s; the stream was closed."
            )
