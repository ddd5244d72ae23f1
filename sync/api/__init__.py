"""Talking to the server: the sixteen routes over one bounded, retried HTTP client.

Everything the server says is hostile until parsed: `bounds` caps bytes, items and time,
`body` reads within them, `failures` turns a refusal into a typed `sync.errors` class."""

from __future__ import annotations

import sys

# httpx imports its own command line (`httpx._main`: click, rich, Pygments' formatters)
# whenever those are installed, and a library never uses it. A None in its place makes that
# optional import fail the way httpx expects, so loading the engine skips it (memory and
# CPU the window's start does not spend: `tests/sync/test_public_api.py`).
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
