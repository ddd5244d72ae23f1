"""Request parsing shared by the routes: manual, after authentication, never a 422."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

from server_stub.edge.errors import bad_request
from server_stub.edge.schemas import MAX_MESSAGE_CHARACTERS


async def read_json_object(request: Request, *, allow_empty: bool = False) -> dict[str, Any]:
    """The request body as a JSON object, or 400."""
    raw = await request.body()
    if not raw.strip():
        if allow_empty:
            return {}
        raise bad_request("request body must be a JSON object")
    try:
        doc = json.loads(raw)
        # `\ud800` is valid JSON syntax but not text: no database or response could hold it.
        json.dumps(doc, ensure_ascii=False).encode("utf-8")
    except (ValueError, UnicodeError, RecursionError) as exc:
        raise bad_request("malformed JSON body") from exc
    if not isinstance(doc, dict):
        raise bad_request("request body must be a JSON object")
    return doc


def parse_int(request: Request, name: str, default: int | None, lo: int, hi: int) -> int | None:
    """An integer query parameter within [lo, hi], or 400 (repeated parameters are 400)."""
    values = request.query_params.getlist(name)
    if not values:
        return default
    if len(values) > 1:
        raise bad_request(f"{name} given more than once", parameter=name)
    text = values[0]
    if not text.isascii() or not (text.isdigit() or (text[:1] == "-" and text[1:].isdigit())):
        raise bad_request(f"{name} must be an integer", parameter=name)
    if len(text.lstrip("-0")) > 30:  # int() refuses over 4300 digits; no bound needs 30
        raise bad_request(f"{name} must be between {lo} and {hi}", parameter=name)
    value = int(text)
    if not lo <= value <= hi:
        raise bad_request(f"{name} must be between {lo} and {hi}", parameter=name)
    return value


MAX_SEQUENCE = 2**31 - 1  # event sequences are 32-bit integers in the database


def sequence_after(value: int) -> int:
    """An `after` bound for SQL: any bound past every possible sequence selects nothing, so
    clamp it rather than let a huge number overflow the column type (a 500)."""
    return min(value, MAX_SEQUENCE)


def parse_limit(request: Request, default: int, hi: int) -> int:
    """`limit` in 1..hi."""
    value = parse_int(request, "limit", default, 1, hi)
    assert value is not None
    return value


def parse_cursor(request: Request) -> str | None:
    """The `cursor` parameter; empty counts as absent."""
    values = request.query_params.getlist("cursor")
    if len(values) > 1:
        raise bad_request("cursor given more than once", parameter="cursor")
    if not values or values[0] == "":
        return None
    return values[0]


def validate_message(value: Any) -> dict[str, Any]:
    """A user Message with at least one well-formed content block and at most
    `MAX_MESSAGE_CHARACTERS` of text, or 400."""
    if not isinstance(value, dict) or value.get("role") != "user":
        raise bad_request("input must be a user message", field="input")
    content = value.get("content")
    if not isinstance(content, list) or not content:
        raise bad_request("input.content must hold at least one block", field="input.content")
    blocks: list[dict[str, Any]] = []
    for block in content:
        if not isinstance(block, dict):
            raise bad_request("content blocks must be objects", field="input.content")
        kind = block.get("type")
        if kind == "text":
            if not isinstance(block.get("text"), str):
                raise bad_request("a text block needs a string text", field="input.content")
            blocks.append({"type": "text", "text": block["text"]})
        elif kind == "image":
            media_type, data = block.get("media_type"), block.get("data")
            if not isinstance(media_type, str) or not isinstance(data, str):
                raise bad_request("an image block needs media_type and data", field="input.content")
            blocks.append({"type": "image", "media_type": media_type, "data": data})
        else:
            raise bad_request("unknown content block type", field="input.content")
    if sum(len(b["text"]) for b in blocks if b["type"] == "text") > MAX_MESSAGE_CHARACTERS:
        raise bad_request(
            f"the message's text is longer than {MAX_MESSAGE_CHARACTERS:,} characters",
            field="input.content",
            max_characters=MAX_MESSAGE_CHARACTERS,
        )
    return {"role": "user", "content": blocks}
