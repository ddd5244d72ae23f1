"""`converge export ID --out PATH`: the window's Export without the window (CONTRACT §11).

It calls the same `sync.files.export.export_conversation`, so the files, names, bounds and path
rules are the window's (CONTRACT §10.1), and so is the offline fallback: the server's copy
when it answers, this device's otherwise, with the caveats printed after the path.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from sync.cli.terminal import for_terminal
from sync.errors import LocalFileError

if TYPE_CHECKING:
    from sync.profile.profile import Profile

#: An export reads the whole transcript and every file's bytes: longer than a pass.
EXPORT_DEADLINE = 120.0

EXIT_OK = 0
EXIT_FAILED = 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", metavar="ID", help="the session id (ses_…)")
    parser.add_argument(
        "--out", metavar="PATH", required=True, help="the document to write (.md or .json)"
    )
    parser.add_argument(
        "--format", choices=("markdown", "json"), default="markdown", help="default: markdown"
    )


async def export(args: argparse.Namespace, profile: Profile, out: TextIO, err: TextIO) -> int:
    """Export one conversation; 0 written, 1 not (one line on `err`). A SyncError with
    words (an unknown id, a refused name, a full disk) is the caller's to print."""
    import asyncio  # the engine and its loop: loaded by this command alone

    from sync.engine import SyncEngine
    from sync.files.export import export_conversation

    profile.require_connection()
    if args.out.endswith(("/", os.sep)):  # a Path would drop the slash and write a file
        raise LocalFileError(
            f"{args.out} ends with a folder separator: name the file to write, such as "
            f"{args.out}conversation.md."
        )
    engine = await SyncEngine.open(profile)
    try:
        async with asyncio.timeout(EXPORT_DEADLINE):
            written = await export_conversation(
                engine, args.id, Path(args.out).expanduser(), args.format
            )
    except TimeoutError:
        print(
            f"converge: the server at {for_terminal(profile.server or '')} did not send the "
            f"conversation within {EXPORT_DEADLINE:.0f} s; the export was not finished.",
            file=err,
        )
        return EXIT_FAILED
    finally:
        await engine.close()
    caveats = written.caveats()
    print(f"exported {args.id} to {written.path}" + (f" ({caveats})" if caveats else ""), file=out)
    return EXIT_OK
