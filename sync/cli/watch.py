"""`converge watch`: keep a profile's mirror converged until interrupted, one line per pass.

What QA scripts and demos run beside a window: the engine's triggers as the window has them
(connect now, the index watch, the 30 s timer), printed. SIGINT or SIGTERM ends it cleanly
with exit 0 (the open watch is cancelled, the mirror closed).
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
from typing import TYPE_CHECKING, TextIO

from sync.cli.terminal import for_terminal, json_for_terminal

if TYPE_CHECKING:
    from sync.profile.profile import Profile
    from sync.reconcile.reconciler import ReconcileReport

EXIT_OK = 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--wait", type=int, metavar="SECONDS", help="watch hold (1..60)")
    parser.add_argument(
        "--interval", type=float, default=30.0, metavar="SECONDS", help="timer trigger (0: off)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per pass")


def pass_line(report: ReconcileReport, *, as_json: bool) -> str:
    """One line describing a pass (its reason, what changed, or why it did not conclude).
    Ids and messages are the server's words: inert, and kept on this one line."""
    problem = report.problem
    if as_json:
        return json_for_terminal(
            {
                "reason": report.reason.value,
                "inserted": list(report.inserted),
                "updated": list(report.updated),
                "pruned": list(report.pruned),
                "kept": list(report.kept),
                "not_modified": report.not_modified,
                "ok": report.ok,
                "error": problem.message if problem is not None else None,
            }
        )
    if report.error is not None:
        why = for_terminal(report.error.message)
        return f"{report.reason.value}: failed, nothing changed: {why}"
    words = (
        "unchanged"
        if report.not_modified
        else (f"+{len(report.inserted)} ~{len(report.updated)} -{len(report.pruned)}")
    )
    ids = " ".join(for_terminal(i) for i in [*report.inserted, *report.updated, *report.pruned])
    line = f"{report.reason.value}: {words}" + (f" {ids}" if ids else "")
    if report.kept:
        why = for_terminal(problem.message) if problem else ""
        line += f" (kept {len(report.kept)} unconfirmed: {why})"
    return line


async def watch(args: argparse.Namespace, profile: Profile, out: TextIO | None = None) -> int:
    """Run until SIGINT/SIGTERM; exit 0. Lines go to `out` (sys.stdout as it is at the
    call, so the command's inert stream, not the one of import time)."""
    import asyncio  # the engine and its loop: loaded by this command alone

    from sync.engine import SyncEngine
    from sync.events import TriggerReason
    from sync.reconcile.watch import DEFAULT_WAIT

    out = sys.stdout if out is None else out
    wait = max(1, min(60, DEFAULT_WAIT if args.wait is None else args.wait))
    engine = await SyncEngine.open(profile, timer_interval=args.interval or 30.0)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)

    def printed(report: ReconcileReport) -> None:
        out.write(pass_line(report, as_json=args.json) + "\n")
        out.flush()

    try:
        engine.add_pass_listener(printed)
        print(
            f"converge: keeping {profile.root} converged with {profile.server} (Ctrl-C to stop)",
            file=sys.stderr,
            flush=True,
        )
        engine.trigger(TriggerReason.CONNECT)
        engine.start_watch(wait)
        if args.interval > 0:
            engine.start_timer(args.interval)
        await stop.wait()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(sig)
        await engine.close()
    return EXIT_OK
