"""`converge conformance`: options, exit status and the three outputs.

Exit 0 when every rule passes, 1 when any fails, 2 for usage problems and a server that
cannot be checked at all (unreachable, not the API at that URL, a token refused), and when
no rule failed but the deadline left some unchecked. Tokens as for every headless
command (`sync.cli.token_input`): A by `--token`, `--token-file`, `--token-stdin` or
`$CONVERGE_TOKEN`; B by `--other-token`, `--other-token-file` or `$CONVERGE_OTHER_TOKEN`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from qa import junit
from qa.conformance import html, report
from qa.conformance.probe import Unreachable
from qa.conformance.rules import RULES
from qa.conformance.runner import run
from sync.cli import token_input
from sync.cli.terminal import for_terminal, inert_streams, json_for_terminal
from sync.errors import ProfileError
from sync.profile.profile import server_url_problem

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
DEFAULT_DEADLINE = 300.0


def command(argv: Sequence[str]) -> int:
    """`converge conformance ARGS` (`argv` without the word "conformance"). Everything it
    writes to stdout and stderr is inert (`sync.cli.terminal`)."""
    parser = argparse.ArgumentParser(
        prog="converge conformance",
        description="Check a server against every rule of CONTRACT §1-§5 and §9 that can "
        "be seen from outside, with two principals' tokens; each rule is named with its "
        "verdict and, when it fails, the evidence. Every session made is deleted again. "
        "Exit 0: every rule passes; 1: a rule fails; 2: the server cannot be checked "
        "(usage, unreachable, not the API, a token refused) or the deadline left rules "
        "unchecked.",
    )
    add_arguments(parser)
    args = parser.parse_args(list(argv))
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.ERROR,
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    with inert_streams():
        return main(args, sys.stdout)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--server", metavar="URL", help="server base URL (or $CONVERGE_SERVER)")
    token_input.add_token_arguments(parser)
    other = parser.add_mutually_exclusive_group()
    other.add_argument("--other-token", metavar="TOKEN", help="a second principal's token")
    other.add_argument("--other-token-file", metavar="PATH", help="read it from PATH")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    parser.add_argument("--junit-xml", metavar="FILE", help="also write JUnit XML to FILE")
    parser.add_argument(
        "--html", metavar="FILE", help="also write a self-contained HTML report to FILE"
    )
    parser.add_argument(
        "--deadline",
        type=float,
        default=DEFAULT_DEADLINE,
        metavar="SECONDS",
        help=f"the whole check's bound (default {DEFAULT_DEADLINE:.0f})",
    )
    parser.add_argument(
        "--rule", action="append", default=[], metavar="ID", help="check only this rule"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log details to stderr")


def _err(message: str) -> None:
    print(f"converge conformance: {for_terminal(message)}", file=sys.stderr)


def main(args: argparse.Namespace, out: TextIO) -> int:
    """Run the check the parsed `args` describe; its exit status."""
    server = args.server or os.environ.get("CONVERGE_SERVER")
    try:
        a = token_input.token_from_arguments(args) or os.environ.get("CONVERGE_TOKEN")
        if args.other_token_file:
            b: str | None = token_input.read_token_file(Path(args.other_token_file))
        else:
            if args.other_token:
                warning = token_input.argv_warning(
                    "--other-token", "--other-token-file PATH or CONVERGE_OTHER_TOKEN"
                )
                print(f"converge: {warning}", file=sys.stderr, flush=True)
            b = args.other_token or os.environ.get("CONVERGE_OTHER_TOKEN")
            if b is not None:
                b = token_input.clean_token(b.encode(), "--other-token")
    except ProfileError as exc:
        _err(exc.message)
        return EXIT_USAGE
    known = {r.id for r in RULES}
    unknown = sorted(set(args.rule) - known)
    if not server or not a or not b or unknown or args.deadline <= 0:
        _err(
            f"unknown rule {unknown[0]}"
            if unknown
            else "needs --server URL, --token A and --other-token B (two principals), "
            "and a positive --deadline"
        )
        return EXIT_USAGE
    if (problem := server_url_problem(server)) is not None:
        _err(f"--server {server} is {problem}")
        return EXIT_USAGE
    try:
        outcome = asyncio.run(run(server, a, b, deadline=args.deadline, only=frozenset(args.rule)))
    except Unreachable as exc:
        _err(str(exc))
        if args.junit_xml:  # CI still finds a report saying why nothing was checked
            with contextlib.suppress(OSError):
                junit.write_setup_error(Path(args.junit_xml), "conformance", str(exc))
        return EXIT_USAGE
    try:
        if args.junit_xml:
            report.write_junit(outcome, Path(args.junit_xml))
        if args.html:
            html.write_html(outcome, server, Path(args.html))
    except OSError as exc:
        _err(f"cannot write {exc.filename or 'a report'}: {exc.strerror or exc}")
        return EXIT_USAGE
    print(
        json_for_terminal(report.as_json(outcome)) if args.json else report.table(outcome), file=out
    )
    if any(v.failed for v in outcome.verdicts):
        return EXIT_FAILED
    if outcome.unchecked:
        _err(
            f"{outcome.unchecked} rules not checked: the --deadline of {args.deadline:g} s "
            "passed first; give it more time"
        )
        return EXIT_USAGE
    return EXIT_OK
