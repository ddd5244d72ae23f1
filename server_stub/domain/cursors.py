"""Opaque, HMAC-authenticated keyset cursors.

A cursor is `<payload>.<mac>`, both base64url without padding. The payload names the list,
the caller (tenant, principal) and the last item's `(timestamp, id)`. The MAC covers the exact
payload string and is compared as a string with its exact expected encoding, so any change to
the cursor text (even one a lenient base64 decoder would forgive) fails, and a cursor minted
for another principal or another list fails too. The key is per database.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from dataclasses import dataclass

from server_stub.edge.errors import bad_request


@dataclass(frozen=True)
class Position:
    """The keyset position after which the next page starts."""

    timestamp: str
    item_id: str


#: Built once: `json.dumps` with its own separators builds an encoder per call.
_COMPACT = json.JSONEncoder(separators=(",", ":"))


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


class CursorCodec:
    """Mints and verifies cursors with one key."""

    def __init__(self, key: bytes) -> None:
        # Keyed once and copied per MAC: `hmac.digest` looks the hash up again at every call.
        self._keyed = hmac.new(key, digestmod=hashlib.sha256)

    def _mac(self, payload: str) -> str:
        mac = self._keyed.copy()
        mac.update(payload.encode("ascii"))
        return _b64(mac.digest())

    def encode(self, kind: str, tenant: str, principal: str, position: Position) -> str:
        """A cursor for the page after `position`."""
        body = _COMPACT.encode([kind, tenant, principal, position.timestamp, position.item_id])
        payload = _b64(body.encode("utf-8"))
        return f"{payload}.{self._mac(payload)}"

    def decode(self, cursor: str, kind: str, tenant: str, principal: str) -> Position:
        """The position of a cursor minted for exactly this list and caller, else 400."""
        payload, sep, mac = cursor.partition(".")
        if not sep or not payload.isascii() or not mac.isascii():
            raise bad_request("invalid cursor")
        if not hmac.compare_digest(mac, self._mac(payload)):
            raise bad_request("invalid cursor")
        try:
            raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
            if _b64(raw) != payload:
                raise bad_request("invalid cursor")
            items = json.loads(raw.decode("utf-8"))
        except (binascii.Error, ValueError, UnicodeDecodeError) as exc:
            raise bad_request("invalid cursor") from exc
        if (
            not isinstance(items, list)
            or len(items) != 5
            or not all(isinstance(x, str) for x in items)
            or items[:3] != [kind, tenant, principal]
        ):
            raise bad_request("invalid cursor")
        return Position(timestamp=items[3], item_id=items[4])
