"""The `converge` console script: the window by default, headless subcommands for QA."""

from __future__ import annotations

import sys

HEADLESS_COMMANDS = frozenset(
    {"sync", "ls", "show", "search", "delete", "watch", "export", "repair", "qa", "conformance"}
)


def main(argv: list[str] | None = None) -> int:
    """Dispatch to a headless subcommand or open the desktop window.

    Headless commands are imported lazily so that `converge ls` never loads Qt. `app` is
    the composition root: it alone knows the three packages behind the one command.
    """
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "qa":  # the harness uses client and server: its own package
        from qa.cli import main as qa_main

        return qa_main(args[1:])
    if args and args[0] == "conformance":  # the contract checker: QA's too
        from qa.conformance.cli import command

        return command(args[1:])
    if args and args[0] in HEADLESS_COMMANDS:
        from sync import run_command

        return run_command(args)
    from app.desktop import run

    return run(args)


if __name__ == "__main__":
    sys.exit(main())
