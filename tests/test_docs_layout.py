"""The guides stay short and true to the code's shape: `docs/architecture.md`'s package map
names exactly the packages and subpackages, and every guide is one a person reads to the end."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
#: A guide past this many lines is a reference nobody reads whole: split it, or move the
#: reasoning into a decision record (`docs/decisions/`).
MOST_LINES = 420
#: The packages the map describes, each with its subpackages.
PACKAGES = ("app", "ui", "sync", "qa", "server_stub")
#: A row of the package map: `| `sync/api/` | its job |`.
MAP_ROW = re.compile(rf"^\| `((?:{'|'.join(PACKAGES)})[\w/]*)/` \|", re.MULTILINE)


def packages_in_the_code() -> set[str]:
    return {
        init.parent.relative_to(ROOT).as_posix()
        for package in PACKAGES
        for init in (ROOT / package).rglob("__init__.py")
        if "migrations" not in init.parts
    }


def packages_in_the_map() -> set[str]:
    return set(MAP_ROW.findall((DOCS / "architecture.md").read_text(encoding="utf-8")))


def test_the_package_map_names_exactly_the_packages_and_their_subpackages() -> None:
    assert packages_in_the_map() == packages_in_the_code()


def test_every_guide_is_at_most_420_lines() -> None:
    lengths = {
        guide.name: len(guide.read_text(encoding="utf-8").splitlines())
        for guide in sorted(DOCS.glob("*.md"))
    }
    assert {name: n for name, n in lengths.items() if n > MOST_LINES} == {}
