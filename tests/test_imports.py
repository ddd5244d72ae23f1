"""The import rules that keep the packages' seams where `docs/architecture.md` draws them.

- A module imports a name from the module that defines it: no module passes on a name it
  imported, so a reader follows one import to the definition. A package's `__init__.py` is
  the one exception, and only for the names its `__all__` lists.
- The window (`ui`, `app`) imports the engine only through `sync`'s public names, so that
  everything else in `sync` can move without the window noticing.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OURS = ("sync", "ui", "app", "qa", "server_stub", "bench", "tests")


@dataclass(frozen=True)
class Import:
    source: Path
    line: int
    module: str
    name: str


def _module_path(module: str) -> Path | None:
    base = ROOT.joinpath(*module.split("."))
    if (base / "__init__.py").exists():
        return base / "__init__.py"
    if base.with_suffix(".py").exists():
        return base.with_suffix(".py")
    return None


def _absolute(source: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = source.relative_to(ROOT).parent.parts
    parts = list(package[: len(package) - node.level + 1])
    return ".".join([*parts, *([node.module] if node.module else [])])


def imports() -> Iterator[Import]:
    for top in OURS:
        for source in sorted((ROOT / top).rglob("*.py")):
            for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom):
                    module = _absolute(source, node)
                    if module.split(".")[0] in OURS:
                        for alias in node.names:
                            yield Import(source, node.lineno, module, alias.name)
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        if alias.name.split(".")[0] in OURS:
                            yield Import(source, node.lineno, alias.name, "")


@cache
def defined_names(path: Path) -> frozenset[str]:
    """The names a module binds itself: definitions and assignments, at any depth of its
    top-level `if`/`try` blocks (not its imports)."""
    names: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            elif isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(
                node.target, ast.Name
            ):
                names.add(node.target.id)
            elif isinstance(node, ast.TypeAlias):
                names.add(node.name.id)
            elif isinstance(node, ast.If | ast.Try | ast.With):
                for block in ("body", "orelse", "finalbody"):
                    visit(getattr(node, block, []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return frozenset(names)


@cache
def exported(path: Path) -> frozenset[str]:
    """A package's `__all__`, as written."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            value = ast.literal_eval(node.value)
            return frozenset(value)
    return frozenset()


def _where(imp: Import) -> str:
    return f"{imp.source.relative_to(ROOT)}:{imp.line}"


def test_every_name_is_imported_from_the_module_that_defines_it() -> None:
    passed_on = []
    for imp in imports():
        path = _module_path(imp.module)
        if path is None or not imp.name or imp.name == "*":
            continue
        if _module_path(f"{imp.module}.{imp.name}") is not None:
            continue  # a submodule
        if imp.name in defined_names(path):
            continue
        if path.name == "__init__.py" and imp.name in exported(path):
            continue
        passed_on.append(f"{_where(imp)}: {imp.name} from {imp.module}")
    assert passed_on == []


def test_no_module_but_a_package_marks_a_name_for_passing_on() -> None:
    """`from a import b as b` is the marker of a re-export; only a package's `__init__.py`
    (with its `__all__`) may pass names on."""
    marked = []
    for top in OURS:
        for source in sorted((ROOT / top).rglob("*.py")):
            if source.name == "__init__.py" or top == "tests":
                continue
            for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom | ast.Import):
                    marked += [
                        f"{source.relative_to(ROOT)}:{node.lineno}: {alias.name}"
                        for alias in node.names
                        if alias.asname is not None and alias.asname == alias.name.split(".")[-1]
                    ]
    assert marked == []


def test_the_window_imports_only_syncs_public_names() -> None:
    private = [
        f"{_where(imp)}: {imp.module}{'.' + imp.name if imp.name else ''}"
        for imp in imports()
        if imp.source.relative_to(ROOT).parts[0] in ("ui", "app")
        and imp.module.split(".")[0] == "sync"
        and (imp.module != "sync" or imp.name not in exported(ROOT / "sync/__init__.py"))
    ]
    assert private == []


@pytest.mark.parametrize("package", ["sync"])
def test_a_packages_public_list_names_what_it_imports(package: str) -> None:
    """`__all__` and the names the package binds agree: nothing exported that does not
    resolve, nothing imported for others that the list forgets."""
    import importlib

    module = importlib.import_module(package)
    listed = set(module.__all__)
    missing = [name for name in sorted(listed) if not hasattr(module, name)]
    assert missing == []
    assert len(listed) == len(module.__all__), "a name listed twice"
