"""The one sanitiser (`sync.files.safe_names`): a name from a server or from content becomes one
harmless file-name component on every OS, and text that cannot hide or reorder what is shown
around it."""

from __future__ import annotations

import pytest

from sync.files.safe_names import (
    MAX_NAME_BYTES,
    name_key,
    safe_file_name,
    unique_name,
)


@pytest.mark.parametrize(
    ("hostile", "expected"),
    [
        ("notes.txt", "notes.txt"),
        ("../../.config/autostart/x.desktop", "_.._.config_autostart_x.desktop"),
        ("/etc/passwd", "_etc_passwd"),
        ("C:\\Windows\\System32", "C__Windows_System32"),
        ("\\\\server\\share\\x", "__server_share_x"),
        ("a\x00b", "a_b"),
        ("tab\there", "tab_here"),
        ("esc\x1b[31mred", "esc_[31mred"),
        ("CON", "_CON"),
        ("con.tar.gz", "_con.tar.gz"),
        ("LPT9 .txt", "_LPT9.txt"),
        ("COM¹", "_COM¹"),
        ("CONSOLE.txt", "CONSOLE.txt"),
        ("name. . .", "name"),
        ("  spaced  ", "spaced"),
        (".bashrc", "bashrc"),
        (".", "file"),
        ("..", "file"),
        (" . .. ", "file"),
        ("", "file"),
        ("doc\u202egpj.exe", "docgpj.exe"),
        ("zero\u200bwidth", "zerowidth"),
        ("👩\u200d💻.txt", "👩\u200d💻.txt"),
        ("e\u0301.txt", "\u00e9.txt"),
        ('what?<>|*".txt', "what______.txt"),
    ],
)
def test_a_name_becomes_one_safe_component(hostile: str, expected: str) -> None:
    assert safe_file_name(hostile) == expected


def test_a_name_that_is_not_text_or_is_empty_gets_the_fallback_made_safe_too() -> None:
    assert safe_file_name(None) == "file"
    assert safe_file_name(42, "conversation") == "conversation"
    assert safe_file_name("..", "../x") == "_x"
    assert safe_file_name("..", "..") == "file"


@pytest.mark.parametrize("char", ["漢", "é", "🎒", "a"])
def test_a_long_name_is_cut_in_utf8_bytes_between_characters_keeping_its_extension(
    char: str,
) -> None:
    name = safe_file_name(char * 300 + ".pdf")
    assert name.endswith(".pdf")
    assert len(name.encode("utf-8")) <= MAX_NAME_BYTES
    assert set(name.removesuffix(".pdf")) == {char}
    assert len(name.encode("utf-8")) > MAX_NAME_BYTES - len(char.encode("utf-8")) - 1


def test_a_long_extension_is_cut_as_part_of_the_name() -> None:
    name = safe_file_name("x." + "y" * 400, max_bytes=50)
    assert len(name.encode()) <= 50 and name.startswith("x.")


def test_duplicates_are_numbered_case_and_normalisation_insensitively() -> None:
    used: set[str] = set()
    got = [
        unique_name(n, used)
        for n in ["notes.txt", "notes.txt", "NOTES.TXT", "e\u0301", "\u00e9", "notes (2).txt"]
    ]
    assert got == [
        "notes.txt",
        "notes (2).txt",
        "NOTES (3).TXT",
        "e\u0301",
        "\u00e9 (2)",
        "notes (2) (2).txt",
    ]
    assert name_key("Notes.TXT") == name_key("notes.txt")


def test_a_numbered_duplicate_of_a_name_at_the_limit_still_fits() -> None:
    name = safe_file_name("漢" * 300 + ".txt")
    used = {name_key(name)}
    second = unique_name(name, used)
    assert second.endswith(" (2).txt") and len(second.encode()) <= MAX_NAME_BYTES
