"""The keyset cursor codec on its own (`server_stub.domain.cursors`, CONTRACT §3 route 1).

A cursor is opaque, self-contained and authenticated: it reads back as the position it was
minted for, only for the same list and caller, and any change to its text, a foreign key or
content of another shape is a 400 `invalid cursor`, never a server error. (The routes that
use it: tests/server/test_session_index.py.)"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from server_stub.domain.cursors import CursorCodec, Position
from server_stub.edge.errors import ApiError

KEY = b"k" * 32
CODEC = CursorCodec(KEY)
CALLER = ("sessions", "tenant_a", "principal_a")
POSITION = Position("2026-01-01T00:00:00.000000Z", "ses_0001")


def _refused(cursor: str, kind: str = "sessions", codec: CursorCodec = CODEC) -> ApiError:
    with pytest.raises(ApiError) as refused:
        codec.decode(cursor, kind, "tenant_a", "principal_a")
    return refused.value


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _mint(body: str, key: bytes = KEY) -> str:
    """A cursor holding `body` as its payload, authenticated with `key` as the module's
    docstring describes it (as another server version sharing the key could mint it)."""
    payload = _b64(body.encode("utf-8"))
    mac = _b64(hmac.new(key, payload.encode("ascii"), hashlib.sha256).digest())
    return f"{payload}.{mac}"


fields = st.text(max_size=40)


@settings(max_examples=300, deadline=None)
@given(kind=fields, tenant=fields, principal=fields, timestamp=fields, item_id=fields)
@example(kind="", tenant="", principal="", timestamp="", item_id="")
def test_a_cursor_reads_back_as_the_position_it_was_minted_for(
    kind: str, tenant: str, principal: str, timestamp: str, item_id: str
) -> None:
    position = Position(timestamp, item_id)
    cursor = CODEC.encode(kind, tenant, principal, position)
    assert CODEC.decode(cursor, kind, tenant, principal) == position


@pytest.mark.parametrize("length", range(13))
def test_the_round_trip_holds_for_every_length_of_payload(length: int) -> None:
    """Each residue of the payload's length (base64 padding, restored before decoding)."""
    position = Position("2026-01-01T00:00:00.000000Z", "x" * length)
    assert CODEC.decode(CODEC.encode(*CALLER, position), *CALLER) == position


@settings(max_examples=100, deadline=None)
@given(timestamp=fields, item_id=fields)
def test_a_cursor_is_two_base64url_parts_without_padding(timestamp: str, item_id: str) -> None:
    """URL-safe as it is: it goes into a query string unescaped."""
    cursor = CODEC.encode(*CALLER, Position(timestamp, item_id))
    payload, mac = cursor.split(".")
    for part in (payload, mac):
        assert part and set(part) <= set(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        ), cursor


def test_a_refused_cursor_is_a_400_that_says_invalid_cursor() -> None:
    refused = _refused("not-a-cursor")
    assert refused.status == 400
    assert refused.message == "invalid cursor"


def test_a_cursor_of_another_list_caller_or_key_is_refused() -> None:
    cursor = CODEC.encode(*CALLER, POSITION)
    assert CODEC.decode(cursor, *CALLER) == POSITION
    for kind, tenant, principal in [
        ("memories", "tenant_a", "principal_a"),
        ("sessions", "tenant_b", "principal_a"),
        ("sessions", "tenant_a", "principal_b"),
    ]:
        with pytest.raises(ApiError):
            CODEC.decode(cursor, kind, tenant, principal)
    _refused(cursor, codec=CursorCodec(b"another key"))


_VALID = CODEC.encode(*CALLER, POSITION)


@settings(max_examples=300, deadline=None)
@given(
    at=st.integers(min_value=0, max_value=len(_VALID)),
    cut=st.integers(min_value=0, max_value=3),
    insert=st.text(max_size=3),
)
@example(at=0, cut=1, insert="é")  # a non-ASCII payload
@example(at=len(_VALID) - 1, cut=1, insert="é")  # a non-ASCII MAC
@example(at=len(_VALID), cut=0, insert="=")  # padding a lenient decoder would forgive
@example(at=_VALID.index("."), cut=1, insert="")  # no separator
@example(at=len(_VALID), cut=0, insert=".x")  # a third part
def test_any_change_to_a_cursor_is_refused_never_a_server_error(
    at: int, cut: int, insert: str
) -> None:
    changed = _VALID[:at] + insert + _VALID[at + cut :]
    if changed == _VALID:
        return
    assert _refused(changed).status == 400


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
@example("é.é")
@example("abc.é")
@example("é.abc")
def test_any_text_that_was_not_minted_is_refused_never_a_server_error(text: str) -> None:
    assert _refused(text).status == 400


@pytest.mark.parametrize(
    "body",
    [
        "{}",
        "5",
        "null",
        '"abcde"',
        '["sessions", "tenant_a", "principal_a", "2026-01-01T00:00:00.000000Z"]',
        '["sessions", "tenant_a", "principal_a", "t", "id", "extra"]',
        '["sessions", "tenant_a", "principal_a", 1, "id"]',
        '["sessions", "tenant_a", "principal_a", "t", null]',
        "[1, 2, 3, 4, 5]",
        "not json",
    ],
)
def test_authentic_content_of_another_shape_is_refused_never_a_server_error(body: str) -> None:
    """A cursor signed with the right key but holding something else (another version's
    format: the key outlives a server restart) is a 400 too."""
    assert _refused(_mint(body)).status == 400


def test_a_cursor_minted_as_documented_reads_back() -> None:
    """The helper above mints what the codec mints: the shape tests are about content only."""
    body = json.dumps([*CALLER, POSITION.timestamp, POSITION.item_id])
    assert CODEC.decode(_mint(body), *CALLER) == POSITION
