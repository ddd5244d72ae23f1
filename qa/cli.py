"""`converge qa`'s command line: options, the run (cancellable by SIGINT/SIGTERM), exit status.

A run that stops early, whatever the cause (its server never started, the harness failed,
Ctrl-C or SIGTERM), still prints its report and writes the files asked for, saying what it
checked and what it did not: a long soak is never lost without a word.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import random
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from qa.faults import FaultSchedule, FaultSpec
from qa.harness import Harness, why_stopped
from qa.report import QaOptions, QaReport
from qa.reports import write_html, write_junit
from qa.server import START_TIMEOUT
from sync.cli import token_input
from sync.cli.terminal import for_terminal, inert_streams, json_for_terminal
from sync.errors import ProfileError
from sync.profile.profile import server_url_problem

log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_VIOLATIONS = 1
EXIT_SETUP = 2  # set-up problems, and a run that stopped early without a violation
EXIT_INTERRUPTED = 130
#: The stub's development token: what the harness's own server accepts.
DEFAULT_TOKEN = "dev-alice"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="converge qa",
        description=(
            "Multi-device convergence harness: N simulated devices, a seeded workload "
            "(creates, turns, deletes, refused deletes; object-store outages with a control "
            "plane, restarts of its own server), a quiet phase, then the ADR-0050 §8 "
            "invariants, through the public routes."
        ),
    )
    p.add_argument("--devices", type=int, default=5, metavar="N", help="devices (default 5)")
    p.add_argument("--seed", type=int, help="workload seed (default: random, printed)")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--operations", type=int, metavar="N", help="run N operations")
    size.add_argument("--duration", type=float, metavar="SECONDS", help="run for SECONDS")
    p.add_argument(
        "--interval",
        type=float,
        metavar="SECONDS",
        help="each device's reconcile timer (default 30 with watches, as the window; "
        "0.2 with --no-watch)",
    )
    p.add_argument(
        "--no-watch",
        dest="watch",
        action="store_false",
        help="devices keep no index watch open (timer and triggers only)",
    )
    p.add_argument(
        "--server",
        metavar="URL",
        help="use this server: any implementation of the contract (its control plane, when "
        "it serves /_stub, adds extras)",
    )
    p.add_argument(
        "--public-only",
        action="store_true",
        help="use the sixteen public routes alone, even when the server has a control plane "
        "(the harness's own server then starts without --control)",
    )
    p.add_argument(
        "--database",
        metavar="URL",
        help="SQLAlchemy URL for the harness's own server, e.g. an empty PostgreSQL database "
        "(default: a SQLite file in its work folder; ignored with --server)",
    )
    p.add_argument(
        "--servers",
        type=int,
        default=1,
        metavar="N",
        help="own server processes on one database, devices spread over them, restarted "
        "and killed in turn during the workload (N > 1 needs --database postgresql+psycopg://…)",
    )
    p.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="run the devices in N worker processes, each with its own event loop (0: in "
        "the harness's process; default: 0 up to 10 devices, else one per 10 devices, at "
        "most one per core; docs/qa.md)",
    )
    p.add_argument(
        "--artifacts",
        metavar="DIR_OR_URL",
        help="the own servers' object store: a folder or s3://BUCKET/PREFIX (default: a "
        "folder in the work folder; ignored with --server)",
    )
    p.add_argument(
        "--s3-endpoint", metavar="URL", help="the S3 server of --artifacts s3://… (e.g. SeaweedFS)"
    )
    # The token as every `converge` command takes it (`sync.cli.token_input`): --token-file and
    # --token-stdin keep it out of the process list; without any, the stub's dev-alice.
    token_input.add_token_arguments(p)
    p.add_argument(
        "--deadline",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="convergence deadline of the quiet phase (default 60)",
    )
    p.add_argument(
        "--server-start-timeout",
        type=float,
        default=START_TIMEOUT,
        metavar="SECONDS",
        help="how long the harness's own server may take to start, each time it starts "
        f"(default {START_TIMEOUT:g}: a loaded machine is slow)",
    )
    p.add_argument(
        "--initial",
        type=int,
        default=30,
        metavar="N",
        help="sessions with past activity created before the devices start (default 30)",
    )
    p.add_argument(
        "--page-limit",
        type=int,
        default=20,
        metavar="N",
        help="the devices' walk page size (default 20: walks span pages, items move)",
    )
    p.add_argument(
        "--faults",
        metavar="SPEC",
        help="run a fault proxy between each device and the server, on a schedule drawn "
        "from --seed: e.g. 'latency=20,jitter=30,drop=0.03,cut=0.03,stall=0.03,"
        "partition=1@10:4,partitions=2', or 'standard' (docs/qa.md)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--junit-xml", metavar="FILE", help="also write JUnit XML to FILE")
    p.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report to FILE")
    p.add_argument("--keep", action="store_true", help="keep the temporary folders")
    p.add_argument("-v", "--verbose", action="store_true", help="log details to stderr")
    return p


def options_from_args(args: argparse.Namespace) -> QaOptions:
    """The run's options; reads the token (`--token-file`, `--token-stdin`), so it raises
    `ProfileError` for a token file or input that cannot be used."""
    token = token_input.token_from_arguments(args)
    if token is None and args.server:
        token = os.environ.get("CONVERGE_TOKEN") or None
        if token is None:
            print(
                f"converge qa: no token given; using the stub's development token "
                f"{DEFAULT_TOKEN} (give your deployment's with --token-file, --token-stdin "
                "or CONVERGE_TOKEN)",
                file=sys.stderr,
            )
    token = token or DEFAULT_TOKEN
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
    return QaOptions(
        devices=args.devices,
        seed=seed,
        operations=args.operations,
        duration=args.duration,
        interval=args.interval,
        watch=args.watch,
        server=args.server,
        database=args.database,
        token=token,
        deadline=args.deadline,
        initial=args.initial,
        page_limit=args.page_limit,
        keep=args.keep,
        servers=args.servers,
        public_only=args.public_only,
        faults=args.faults,
        artifacts=args.artifacts,
        s3_endpoint=args.s3_endpoint,
        workers=args.workers,
        server_start_timeout=args.server_start_timeout,
    )


async def _run_cancellable(harness: Harness) -> QaReport:
    """Run the harness; SIGTERM cancels it like Ctrl-C, so the server child is stopped and
    the report says why the run ended."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()

    def terminate() -> None:
        if harness.report.stopped is None:
            harness.report.stopped = "the run was stopped by SIGTERM before it finished"
        if task is not None:
            task.cancel()

    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGTERM, terminate)
    try:
        return await harness.run()
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGTERM)


def main(argv: Sequence[str]) -> int:
    """Entry point of `converge qa` (`argv` without the word "qa"). Everything it writes to
    stdout and stderr is inert (`sync.cli.terminal`): a server under test is not trusted."""
    with inert_streams():
        return _main(argv)


def _main(argv: Sequence[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(list(argv))
    if args.devices < 1:
        parser.error("--devices must be at least 1")
    if args.operations is not None and args.operations < 0:
        parser.error("--operations must not be negative")
    if (args.interval is not None and args.interval <= 0) or args.deadline <= 0:
        parser.error("--interval and --deadline must be positive")
    if args.server_start_timeout <= 0:
        parser.error("--server-start-timeout must be positive")
    if args.workers is not None and args.workers < 0:
        parser.error("--workers must not be negative")
    if args.servers < 1:
        parser.error("--servers must be at least 1")
    if args.s3_endpoint and not (args.artifacts or "").startswith("s3://"):
        parser.error("--s3-endpoint needs --artifacts s3://BUCKET/PREFIX")
    if args.server and (problem := server_url_problem(args.server)) is not None:
        parser.error(f"--server {args.server} is {problem}")
    if args.servers > 1 and args.server:
        parser.error("--servers starts the harness's own processes; it excludes --server")
    if args.servers > 1 and not (args.database or "").startswith("postgresql"):
        parser.error(
            "--servers N > 1 needs --database postgresql+psycopg://… "
            "(SQLite is served by one process)"
        )
    if args.initial < 0 or not 1 <= args.page_limit <= 200:
        parser.error("--initial must not be negative; --page-limit is 1..200")
    if args.faults is not None:
        try:
            FaultSchedule(FaultSpec.parse(args.faults), 0, args.devices)
        except ValueError as exc:
            parser.error(str(exc))
    for option, target in (("--junit-xml", args.junit_xml), ("--html", args.html)):
        if target and (Path(target).is_dir() or not Path(target).parent.is_dir()):
            parser.error(f"{option} {target}: not a file in an existing folder")
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.ERROR,
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if args.interval is None:
        args.interval = 30.0 if args.watch else 0.2
    try:
        options = options_from_args(args)
    except ProfileError as exc:
        print(f"converge qa: {for_terminal(exc.message)}", file=sys.stderr)
        return EXIT_SETUP
    harness = Harness(options)
    interrupted = False
    try:
        report = asyncio.run(_run_cancellable(harness))
    except (KeyboardInterrupt, asyncio.CancelledError) as exc:
        interrupted = True
        report = harness.report  # what the run gathered before it was interrupted
        report.stopped = report.stopped or why_stopped(exc)
    except Exception as exc:  # the harness keeps its report itself; this is the last resort
        log.info("the harness failed", exc_info=True)
        report = harness.report
        report.stopped = why_stopped(exc)
    if args.json:
        print(json_for_terminal(report.to_json()))
    else:
        print(report.to_text())
    code = EXIT_OK if report.ok else EXIT_VIOLATIONS
    if report.stopped is not None:
        # One line: why the run ended early (the report above says what it checked).
        print(f"converge qa: {for_terminal(report.stopped)}", file=sys.stderr)
        if interrupted:
            code = EXIT_INTERRUPTED
        elif not report.violations:
            code = EXIT_SETUP
    for target, write in ((args.junit_xml, write_junit), (args.html, write_html)):
        if target:
            try:
                write(report, Path(target))
            except OSError as exc:
                print(f"converge qa: cannot write {for_terminal(target)}: {exc}", file=sys.stderr)
                return EXIT_SETUP
    return code
