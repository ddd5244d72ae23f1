"""How a command is given a token without it showing in the process list.

`--token TOKEN` puts the token in argv, which every user of the machine can read (`ps`,
`/proc/PID/cmdline`). So there are three other ways, for every headless command and for the
window: `--token-file PATH` (a file holding the token, refused when group or others may read
it, as ssh refuses a private key), `--token-stdin` (the first line of standard input: a
pipe from a password manager), and `CONVERGE_TOKEN` (the environment, readable only by the
same user). `--token TOKEN` keeps working, with a one-line warning on stderr.

A token from any of these is bounded (`MAX_TOKEN_BYTES`) and must be visible ASCII: it goes
into an HTTP header, where a newline or a control character would be a header injection,
and a stray space or BOM would only show up later as "the server did not accept the token".
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from pathlib import Path
from typing import TextIO

from sync.errors import ProfileError

#: A bearer token is tens of bytes; a file or pipe much larger is not a token.
MAX_TOKEN_BYTES = 4096


def argv_warning(option: str, instead: str) -> str:
    """The warning for a secret given as `option` on the command line."""
    return (
        f"warning: {option} puts the token in the process list, where other users of this "
        f"machine can read it; use {instead} instead."
    )


TOKEN_IN_ARGV_WARNING = argv_warning(
    "--token", "--token-file PATH, --token-stdin or CONVERGE_TOKEN"
)


def add_token_arguments(parser: argparse.ArgumentParser) -> None:
    """The mutually exclusive ways of giving a token on the command line."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--token",
        metavar="TOKEN",
        help="bearer token (visible in the process list: prefer the options below or "
        "$CONVERGE_TOKEN)",
    )
    group.add_argument(
        "--token-file",
        metavar="PATH",
        help="read the bearer token from PATH (readable only by you, e.g. chmod 600)",
    )
    group.add_argument(
        "--token-stdin",
        action="store_true",
        help="read the bearer token from the first line of standard input",
    )


def token_from_arguments(
    args: argparse.Namespace, *, stdin: TextIO | None = None, stderr: TextIO | None = None
) -> str | None:
    """The token the command line gave (None: none given, use the environment or profile).

    Prints the argv warning for `--token` on `stderr`; raises ProfileError for a token file
    or input that cannot be used.
    """
    if getattr(args, "token_file", None):
        return read_token_file(Path(args.token_file))
    if getattr(args, "token_stdin", False):
        return read_token_stream(sys.stdin if stdin is None else stdin)
    token = getattr(args, "token", None)
    if token:
        err = sys.stderr if stderr is None else stderr
        print(f"converge: {TOKEN_IN_ARGV_WARNING}", file=err, flush=True)
        return str(token)
    return None


def read_token_file(path: Path) -> str:
    """The token in `path`; a ProfileError when the file is missing, too open or not a token.

    The permission check is ssh's: a secret that group or others can read is treated as
    already leaked, and refused rather than used (Windows has no such mode bits).
    """
    shown = str(path)
    try:
        # Non-blocking open: a named pipe nobody writes to must not hang the command.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise ProfileError(f"Cannot read the token file {shown}: {exc.strerror or exc}.") from exc
    try:
        info = os.fstat(fd)
        # A pipe is fine: `--token-file <(pass show converge)` never touches the disk.
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISFIFO(info.st_mode)):
            raise ProfileError(f"The token file {shown} is not a regular file.")
        if os.name == "posix" and info.st_mode & 0o077:
            raise ProfileError(
                f"The token file {shown} can be read by other users (permissions "
                f"{stat.S_IMODE(info.st_mode):04o}); it is not used. Make it private with "
                f"`chmod 600 {shown}`."
            )
        os.set_blocking(fd, True)  # a pipe's writer may not have written yet: wait for it
        data = _read_bounded(fd)
    finally:
        os.close(fd)
    return clean_token(data, f"the token file {shown}")


def _read_bounded(fd: int) -> bytes:
    """Up to MAX_TOKEN_BYTES + 1 bytes (a pipe may deliver them in several reads)."""
    chunks: list[bytes] = []
    size = 0
    while size <= MAX_TOKEN_BYTES:
        chunk = os.read(fd, MAX_TOKEN_BYTES + 1 - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def read_token_stream(stream: TextIO) -> str:
    """The first line of `stream` (standard input) as the token."""
    line = stream.readline(MAX_TOKEN_BYTES + 1)
    return clean_token(line.encode("utf-8", errors="replace"), "standard input")


def clean_token(data: bytes, source: str) -> str:
    """`data` stripped of surrounding white space, checked to be one visible-ASCII token."""
    if len(data) > MAX_TOKEN_BYTES:
        raise ProfileError(f"{_cap(source)} holds more than {MAX_TOKEN_BYTES} bytes: not a token.")
    text = data.decode("utf-8", errors="replace").strip()
    if not text:
        raise ProfileError(f"{_cap(source)} holds no token.")
    if "\n" in text or any(not ("!" <= ch <= "~") for ch in text):
        raise ProfileError(
            f"{_cap(source)} does not hold one token: a token is a single line of visible "
            "ASCII characters (no spaces or control characters)."
        )
    return text


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]
