"""Fixtures shared by the engine's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sync.mirror.store import Mirror


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[Mirror]:
    """A new mirror file of its own, closed after the test."""
    m = Mirror.open(tmp_path / "m.sqlite3")
    try:
        yield m
    finally:
        m.close()
