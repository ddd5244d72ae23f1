"""`sync`'s public names (`__all__`) load on first use, each from its home module, and the
ones the window needs before its first paint load neither SQLAlchemy nor httpx."""

from __future__ import annotations

import subprocess
import sys

import pytest

import sync

#: The names whose first use loads the engine's machinery (after the first paint).
HEAVY_NAMES = {"Mirror", "SyncEngine"}


@pytest.mark.parametrize("name", sync.__all__)
def test_every_public_name_resolves_and_is_listed(name: str) -> None:
    assert getattr(sync, name) is not None
    assert name in dir(sync)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        _ = sync.not_a_name
    assert not hasattr(sync, "not_a_name")


def test_the_light_names_load_neither_sqlalchemy_nor_httpx() -> None:
    light = sorted(set(sync.__all__) - HEAVY_NAMES)
    code = (
        f"from sync import {', '.join(light)}\n"
        "import sys\n"
        "print(sorted(m for m in ('sqlalchemy', 'httpx', 'sync.engine', 'sync.mirror') "
        "if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == "[]"


def test_the_names_are_the_home_modules_own() -> None:
    from sync.engine import SyncEngine
    from sync.engine_events import IndexChanged, TriggerReason
    from sync.reconcile import TriggerReason as ReconcileTriggerReason

    assert sync.SyncEngine is SyncEngine and sync.IndexChanged is IndexChanged
    assert sync.TriggerReason is TriggerReason is ReconcileTriggerReason
