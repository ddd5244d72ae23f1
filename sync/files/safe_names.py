"""Names from a server or from content, made safe for the file system.

An artifact's name, a conversation's title or an id is whatever the server (or whoever wrote
the conversation) sent: `../../.config/autostart/x.desktop`, `CON`, a NUL, 300 characters
of emoji, a right-to-left override. This module is the one place that turns such a string
into a file name that is a single harmless component on every operating system
(`safe_file_name`) and that picks ` (2)`, ` (3)`… for names already taken (`unique_name`).
Everything here is a pure function of its arguments, shared by the command line and the
window. Showing server text is another job: `sync.cli.terminal` for a terminal, `ui.text.plain` for
the window.

Sanitising is only half of the path rule (CONTRACT §10.1): `sync.files.private_files.inside`
checks every path after resolution, so even a name this module let through cannot write
outside its folder.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import MutableSet

#: Names Windows reserves in every folder, whatever the extension (`nul.txt` is `NUL`).
_RESERVED = frozenset(
    {"con", "prn", "aux", "nul"}
    | {f"{dev}{n}" for dev in ("com", "lpt") for n in (*"123456789", "¹", "²", "³")}
)
#: Path separators of any OS and the characters Windows refuses in a name.
_FORBIDDEN = re.compile(r'[/\\<>:"|?*]')
#: Format characters kept because words need them: the zero-width joiner (emoji sequences,
#: Indic scripts) and non-joiner (Persian). Every other Cf (bidi controls, zero-width space,
#: the BOM, soft hyphen, tag characters) is invisible and can disguise a name.
_KEPT_FORMAT = frozenset({"\u200c", "\u200d"})
#: Bytes a file name may have: 255 is the limit of ext4, APFS and NTFS; the rest leaves room
#: for a ` (999)` suffix and a temporary file's prefix.
MAX_NAME_BYTES = 200
#: An extension longer than this is treated as part of the name when cutting to length.
_MAX_SUFFIX_CHARS = 16


def _is_control(char: str) -> bool:
    return unicodedata.category(char) in ("Cc", "Zl", "Zp")


def _is_hidden_format(char: str) -> bool:
    return unicodedata.category(char) == "Cf" and char not in _KEPT_FORMAT


def _split_suffix(name: str) -> tuple[str, str]:
    """(stem, ".ext"), the extension only when it is short and the stem is not empty."""
    stem, dot, ext = name.rpartition(".")
    if dot and stem and 0 < len(ext) <= _MAX_SUFFIX_CHARS and " " not in ext:
        return stem, f".{ext}"
    return name, ""


def _cut_utf8(text: str, limit: int) -> str:
    """The longest prefix of `text` that is at most `limit` bytes in UTF-8 (whole
    characters only)."""
    return text.encode("utf-8")[: max(limit, 0)].decode("utf-8", errors="ignore")


def _fit(stem: str, suffix: str, limit: int) -> str:
    """`stem + suffix` cut to `limit` bytes, shortening the stem first so the extension (and
    a duplicate's ` (2)`) survives."""
    if len(suffix.encode("utf-8")) >= limit:
        return _cut_utf8(stem + suffix, limit).rstrip(" .")
    room = limit - len(suffix.encode("utf-8"))
    return _cut_utf8(stem, room).rstrip(" .") + suffix


def safe_file_name(name: object, fallback: str = "file", max_bytes: int = MAX_NAME_BYTES) -> str:
    """One file-name component that cannot leave its folder or upset a file system.

    Separators of any OS and Windows' forbidden characters become `_`; control characters
    become `_` and invisible format characters go; leading and trailing dots and spaces go
    (so no `.`, `..`, hidden file or name Windows would silently trim); a Windows device
    name (`CON`, `nul.txt`, `COM1`) gets a leading `_`; the result is at most `max_bytes`
    bytes of UTF-8, cut between characters, keeping a short extension. Anything that ends
    up empty (or was not text) is `fallback`, itself made safe the same way.
    """
    text = unicodedata.normalize("NFC", name) if isinstance(name, str) else ""
    chars = []
    for char in text:
        if _is_control(char):
            chars.append("_")
        elif not _is_hidden_format(char):
            chars.append(char)
    cleaned = _FORBIDDEN.sub("_", "".join(chars)).strip(" .")
    if cleaned.split(".", 1)[0].rstrip(" ").casefold() in _RESERVED:
        cleaned = f"_{cleaned}"
    stem, suffix = _split_suffix(cleaned)
    result = _fit(stem, suffix, max_bytes)
    if result:
        return result
    if fallback == "file":
        return "file"
    return safe_file_name(fallback, "file", max_bytes)


def name_key(name: str) -> str:
    """What makes two names the same file on a case-insensitive, normalising file system
    (NTFS, APFS): `Notes.txt` and `notes.TXT` collide there, so they collide here."""
    return unicodedata.normalize("NFC", name).casefold()


def unique_name(name: str, used: MutableSet[str], max_bytes: int = MAX_NAME_BYTES) -> str:
    """`name` (already safe), or `stem (2).ext`, `stem (3).ext`… when it is taken; the one
    returned is added to `used` (a set of `name_key`s). Never an id from the server: the
    suffix is a count, so the files read as the user would name them."""
    candidate = name
    number = 1
    while name_key(candidate) in used:
        number += 1
        stem, suffix = _split_suffix(name)
        marker = f" ({number})"
        candidate = _fit(stem, marker + suffix, max_bytes)
        if not candidate.endswith(marker + suffix):  # a suffix longer than the limit
            candidate = _fit(stem, marker, max_bytes)
    used.add(name_key(candidate))
    return candidate
