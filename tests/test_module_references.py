"""Every module of `sync`, `ui` or `app` that the docs or a docstring names exists, so a
rename or a removal cannot leave a stale reference behind.

Scanned: `docs/**/*.md`, and the strings and comments of every Python file. Recognised:
dotted names (`sync.mirror.apply`, `sync.engine.SyncEngine`, `ui.sidebar.delegate`) and
paths (`sync/mirror/store.py`, `ui/pane/items.CardButtons`). The first name after the
package must be a module, a subpackage, or a name the package's `__init__.py` defines;
what follows a module (a class, a function) is not checked.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("sync", "ui", "app", "qa")
#: `app.<x>` that is not our package: a FastAPI `app` variable, a log file, a host name.
NOT_OUR_APP = {"router", "release_held_watches", "log", "localhost"}
#: `qa.<x>` that is not our package: report files and JUnit class names.
NOT_OUR_QA = {"html", "xml", "invariants", "run"}
#: Paths made by the build, not kept in the repository (`make translations`).
BUILT = {"ui/translations"}

_ALT = "|".join(PACKAGES)
DOTTED = re.compile(rf"(?<![\w./-])({_ALT})((?:\.[A-Za-z_]\w*)+)")
PATH = re.compile(rf"(?<![\w./-])({_ALT})/([\w/.-]*\w)")


def texts() -> Iterator[tuple[Path, str]]:
    for page in sorted((ROOT / "docs").rglob("*.md")):
        yield page, page.read_text(encoding="utf-8")
    for top in (*PACKAGES, "bench", "server_stub", "tests", "scripts"):
        for source in sorted((ROOT / top).rglob("*.py")):
            code = source.read_text(encoding="utf-8")
            for token in tokenize.generate_tokens(io.StringIO(code).readline):
                if token.type in (tokenize.STRING, tokenize.COMMENT):
                    yield source, token.string


def defined_in_init(package: Path, name: str) -> bool:
    init = package / "__init__.py"
    text = init.read_text(encoding="utf-8") if init.exists() else ""
    return (
        re.search(rf"\b(?:import|def|class|as)\s+{name}\b|^{name}\s*[:=]|\"{name}\"", text, re.M)
        is not None
    )


def names_a_module(package: str, parts: list[str]) -> bool:
    """Walk subpackages; the first part that is not one must be a module or an export."""
    base = ROOT / package
    for part in parts:
        if (base / part / "__init__.py").exists():
            base = base / part
            continue
        return (base / f"{part}.py").exists() or defined_in_init(base, part)
    return True


def path_exists(path: str) -> bool:
    """A file or folder, a module written `pkg/module.Name`, or the start of file names
    (`qa/conformance/checks_` for `checks_*.py`)."""
    if (ROOT / path).exists() or (ROOT / f"{path}.py").exists():
        return True
    module = path.split(".", 1)[0]
    if "." in path and (ROOT / f"{module}.py").exists():
        return True
    folder, _, start = path.rpartition("/")
    return any(child.name.startswith(start) for child in (ROOT / folder).glob("*"))


def stale_references() -> set[str]:
    stale = set()
    for where, text in texts():
        seen = f"{where.relative_to(ROOT)}: "
        for match in DOTTED.finditer(text):
            package, parts = match.group(1), match.group(2)[1:].split(".")
            if parts[-1] in {"py", "md", "json"} or parts[0].startswith("__"):
                continue
            if package == "app" and parts[0] in NOT_OUR_APP:
                continue
            if package == "qa" and parts[0] in NOT_OUR_QA:
                continue
            if not names_a_module(package, parts):
                stale.add(seen + match.group(0))
        for match in PATH.finditer(text):
            path = f"{match.group(1)}/{match.group(2)}".rstrip("/")
            if any(path.startswith(built) for built in BUILT):
                continue
            if not path_exists(path):
                stale.add(seen + match.group(0))
    return stale


def test_every_module_the_docs_and_docstrings_name_exists() -> None:
    assert sorted(stale_references()) == []


def test_a_stale_reference_is_found() -> None:
    assert not names_a_module("sync", ["mirror_that_never_was"])
    assert names_a_module("sync", ["mirror", "store", "Mirror", "rows"])
    assert names_a_module("sync", ["SyncEngine"])  # exported by sync/__init__.py
    assert names_a_module("qa", ["conformance", "probe"])
    assert not path_exists("/".join(("sync", "mirror_that_never_was.py")))
    assert path_exists("ui/pane/items.CardButtons")
    assert path_exists("qa/conformance/checks_")
