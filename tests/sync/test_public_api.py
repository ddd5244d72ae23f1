"""`sync`'s public names: each loads its home module on first use, so that importing `sync`
loads neither httpx nor SQLAlchemy, and the light names load none of the heavy ones (the
engine, the rebuild, the command line)."""

from __future__ import annotations

import ast
import subprocess
import sys
import types
from pathlib import Path

import pytest

import sync

#: The names whose first use loads the engine's machinery (after the first paint).
HEAVY_NAMES = {
    "RepairResult",
    "SyncEngine",
    "repair_mirror",
    "run_command",
}
#: Globals of `sync/__init__.py` that are not part of its interface.
NOT_PUBLIC = {"TYPE_CHECKING", "annotations"}


def public_names() -> list[str]:
    names = set()
    for name in dir(sync):
        if name.startswith("_") or name in NOT_PUBLIC:
            continue
        if name in HEAVY_NAMES:
            names.add(name)
            continue
        value = getattr(sync, name)
        # A submodule is an attribute of its package once anything imported it.
        if isinstance(value, types.ModuleType) and name != "wording":
            continue
        names.add(name)
    return sorted(names)


def test_the_heavy_names_are_listed_before_their_first_use() -> None:
    assert set(dir(sync)) >= HEAVY_NAMES


@pytest.mark.parametrize("name", public_names())
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(sync, name) is not None


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        _ = sync.not_a_name
    assert not hasattr(sync, "not_a_name")


def loaded_after(names: list[str], modules: tuple[str, ...]) -> list[str]:
    """Which of `modules` a fresh interpreter holds after `from sync import <names>`."""
    code = (
        f"from sync import {', '.join(names)}\n"
        "import sys\n"
        f"print(sorted(m for m in {modules!r} if sys.modules.get(m) is not None))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    return list(ast.literal_eval(result.stdout.strip()))


def test_importing_sync_and_its_light_names_loads_neither_httpx_nor_sqlalchemy() -> None:
    light = sorted(set(public_names()) - HEAVY_NAMES)
    assert loaded_after(light, ("sqlalchemy", "httpx", "sync.engine")) == []


def test_the_names_are_the_home_modules_own() -> None:
    from sync.engine import SyncEngine
    from sync.events import IndexChanged, TriggerReason
    from sync.events import TriggerReason as ReconcileTriggerReason
    from sync.mirror.store import Mirror

    assert sync.SyncEngine is SyncEngine and sync.Mirror is Mirror
    assert sync.IndexChanged is IndexChanged
    assert sync.TriggerReason is TriggerReason is ReconcileTriggerReason


def test_the_lazy_table_names_the_typed_imports_home_modules() -> None:
    """What mypy sees (`if TYPE_CHECKING:` imports) is what a first use loads."""
    source = ast.parse(Path(sync.__file__).read_text(encoding="utf-8"))
    (block,) = [n for n in source.body if isinstance(n, ast.If)]
    typed = {
        alias.asname or alias.name: (node.module, alias.name)
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert typed == sync._HOME
    assert set(typed) | {"wording"} == set(sync.__all__)


def test_loading_the_engine_skips_httpx_s_command_line() -> None:
    """httpx's `_main` (click, rich) is a command line the engine never runs."""
    assert loaded_after(["SyncEngine"], ("click", "rich", "httpx._main")) == []
