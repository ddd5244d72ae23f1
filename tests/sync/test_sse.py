"""`sync.api.sse.FrameDecoder`: the event-stream format read right, whatever the chunking, and
bounded by what is held unfinished (a line, a frame), never by what has passed."""

from __future__ import annotations

import pytest

from sync.api.sse import Frame, FrameDecoder
from sync.errors import ResponseTooLarge

STREAM = (
    ": keep-alive\r\n\r\n"
    'id: 1\r\nevent: run.started\r\ndata: {"a": "é"}\r\n\r\n'
    "id: 2\nevent: message\ndata: line one\ndata:line two\n\n"
    "id: 3\revent: run.completed\rdata: {}\r\r"
    "retry: 10\nunknown: x\ndata\n\n"
).encode()
FRAMES = [
    Frame('{"a": "é"}', "run.started", "1"),
    Frame("line one\nline two", "message", "2"),
    Frame("{}", "run.completed", "3"),
    Frame("", "message", "3"),
]


def _decode(chunks: list[bytes], line: int = 1 << 20, frame: int = 1 << 20) -> list[Frame]:
    decoder = FrameDecoder(line_bytes=line, frame_bytes=frame)
    return [f for chunk in chunks for f in decoder.feed(chunk)]


@pytest.mark.parametrize("size", [1, 2, 3, 7, len(STREAM)])
def test_frames_are_the_same_however_the_bytes_are_split(size: int) -> None:
    chunks = [STREAM[i : i + size] for i in range(0, len(STREAM), size)]
    assert _decode(chunks) == FRAMES


def test_a_line_is_cut_once_its_unfinished_part_passes_the_cap() -> None:
    whole = b"data: " + b"x" * 1018  # exactly the cap of 1 KiB
    assert _decode([whole + b"\n\n"], line=1024) == [Frame("x" * 1018, "message", None)]
    with pytest.raises(ResponseTooLarge, match="a line longer than the 1 KiB"):
        _decode([b"data: ", b"x" * 600, b"x" * 600], line=1024)
    with pytest.raises(ResponseTooLarge):  # the line's end in the same chunk changes nothing
        _decode([b"data: " + b"x" * 1100 + b"\n\n"], line=1024)


def test_a_frame_is_cut_once_its_data_passes_the_cap_but_many_frames_are_not() -> None:
    small = b"data: " + b"x" * 40 + b"\n\n"
    assert len(_decode([small * 1000], frame=100)) == 1000
    with pytest.raises(ResponseTooLarge, match="an event longer"):
        _decode([b"data: " + b"x" * 40 + b"\n"] * 3, frame=100)
