"""Prefixed opaque identifiers (`ses_…`, `run_…`): random, URL-safe, fixed length."""

from __future__ import annotations

import secrets

_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"


def new_id(prefix: str) -> str:
    """A fresh identifier `<prefix>_<20 random base-36 characters>`."""
    return prefix + "_" + "".join(secrets.choice(_ALPHABET) for _ in range(20))
