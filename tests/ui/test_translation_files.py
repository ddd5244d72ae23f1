"""The shipped languages are complete: every string the code marks has a finished German
and Arabic translation in `ui/translations/*.ts`, with every plural form, and keeps the
placeholders the code fills in. A new string without its translations fails here (run
`make translations`, translate, commit the .ts)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "ui" / "translations"
LANGUAGES = {"de": 2, "ar": 6}  # plural forms Qt uses for each
PLACEHOLDER = re.compile(r"\{[a-z0-9]*\}|%L?n")


def _messages(path: Path) -> list[ET.Element]:
    return list(ET.parse(path).getroot().iter("message"))


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_every_message_is_translated(language: str) -> None:
    messages = _messages(FOLDER / f"converge_{language}.ts")
    assert len(messages) > 150
    for message in messages:
        source = message.findtext("source") or ""
        translation = message.find("translation")
        assert translation is not None
        assert translation.get("type") is None, f"{language}: not finished: {source!r}"
        if message.get("numerus") == "yes":
            forms = [form.text or "" for form in translation.findall("numerusform")]
            assert len(forms) == LANGUAGES[language], source
            assert all(forms), source
            assert any("%Ln" in form or "%n" in form for form in forms), source
        else:
            text = translation.text or ""
            assert text, f"{language}: empty translation of {source!r}"
            wanted = sorted(PLACEHOLDER.findall(source))
            assert sorted(PLACEHOLDER.findall(text)) == wanted, (language, source, text)


def test_the_sources_hold_every_string_the_code_marks(tmp_path: Path) -> None:
    """lupdate over the code finds nothing the .ts files lack (nothing new, nothing gone)."""
    lupdate = Path(sys.executable).parent / "pyside6-lupdate"
    if not lupdate.exists():
        lupdate = Path(shutil.which("pyside6-lupdate") or "pyside6-lupdate")
    copy = tmp_path / "converge_de.ts"
    shutil.copy(FOLDER / "converge_de.ts", copy)
    sources = sorted(str(p) for folder in ("ui", "app") for p in (ROOT / folder).rglob("*.py"))
    result = subprocess.run(
        [str(lupdate), "-no-obsolete", "-locations", "none", *sources, "-ts", str(copy)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "0 new" in result.stdout, result.stdout
    assert "obsolete" not in result.stdout, result.stdout
