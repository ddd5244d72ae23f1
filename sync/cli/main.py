"""The headless commands of CONTRACT §8: `converge sync | ls | delete | watch | qa`,
`converge show | search | export`
(§11, `sync.cli.content`), and `converge repair` (a damaged mirror rebuilt, `sync.repair`).

Each takes `--server URL --profile DIR` and a token anywhere among its own arguments: the
token from `--token-file PATH`, `--token-stdin` or `$CONVERGE_TOKEN` keeps it out of the
process list; `--token TOKEN` still works, with a warning (`sync.cli.token_input`).
`--ca-bundle FILE` adds a private CA to the OS trust store (`sync.api.tls`), and a plain
`http://` server that is not on this machine gets a warning on stderr.
Output for people goes to stdout (results) and stderr (problems); never a traceback: every
`SyncError` becomes one clear line and a non-zero exit. Headless commands never start the
bundled server.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from sync import wording
from sync.api.bounds import DEFAULT_BOUNDS, operation_deadline
from sync.cli import content as cli_content
from sync.cli import export as cli_export
from sync.cli import ls as cli_ls
from sync.cli import token_input
from sync.cli import watch as cli_watch
from sync.cli.terminal import for_terminal, inert_streams, json_for_terminal
from sync.errors import (
    MirrorDamaged,
    MirrorError,
    MirrorUnwritable,
    SearchTooLong,
    SyncError,
    Unauthenticated,
    Unavailable,
    WalkUnfinished,
)
from sync.profile.profile import MIRROR_FILE, Profile

if TYPE_CHECKING:
    from sync.reconcile.reconciler import ReconcileReport

log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_FAILED = 1  # the operation did not happen (server unreachable, refused, ...)
EXIT_USAGE = 2  # argparse's own code for bad arguments
EXIT_CONFLICT = 3  # delete refused: a run is active (409)
EXIT_ABORTED = 4  # delete not confirmed by the user
EXIT_UNCONFIRMED = 5  # delete sent, answer lost: the row stays, marked (CONTRACT §9.2)
EXIT_DAMAGED = 6  # the mirror file is damaged: `converge repair` rebuilds it (sync.repair)

#: `converge sync` has one deadline, `Bounds.pass_seconds` (50 s), for its pass and the
#: content phase after it: the pass ends itself within it (an unreachable or silent server
#: sooner: CONTRACT §8's 30 s, see docs/sync.md "Bounds") and the phase gets what is left.
#: This guard past it only covers what is never cut (a mirror write) and should never fire.
SYNC_GRACE = 10.0
SYNC_DEADLINE = DEFAULT_BOUNDS.pass_seconds + SYNC_GRACE
DELETE_DEADLINE = 25.0


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--server", metavar="URL", help="server base URL (or $CONVERGE_SERVER)")
    token_input.add_token_arguments(parser)
    parser.add_argument(
        "--ca-bundle",
        metavar="FILE",
        help="PEM file of CA certificates to trust besides the system's (or $CONVERGE_CA_BUNDLE)",
    )
    parser.add_argument("--profile", metavar="DIR", help="profile folder (mirror and cache)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log details to stderr")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="converge", description="Converge headless commands (the window opens without one)."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p_sync = sub.add_parser("sync", help="run one reconcile pass against the server")
    _common(p_sync)
    p_sync.add_argument(
        "--json", action="store_true", help="print the report as one JSON object instead"
    )
    p_ls = sub.add_parser("ls", help="list the local mirror (never uses the network)")
    _common(p_ls)
    p_ls.add_argument("--json", action="store_true", help="print one JSON array and nothing else")
    p_show = sub.add_parser("show", help="print a mirrored conversation (never uses the network)")
    _common(p_show)
    p_show.add_argument("id", metavar="ID", help="the session id (ses_…)")
    p_show.add_argument("--json", action="store_true", help="print one JSON object instead")
    p_find = sub.add_parser("search", help="search the mirrored history (never uses the network)")
    _common(p_find)
    p_find.add_argument("words", metavar="WORDS", nargs="+", help="what to look for")
    p_find.add_argument("--json", action="store_true", help="print one JSON array instead")
    p_find.add_argument(
        "--limit",
        type=int,
        metavar="N",
        help="print the first N matches (default: every one); stderr says when more were left",
    )
    p_del = sub.add_parser("delete", help="delete a conversation everywhere (server first)")
    _common(p_del)
    p_del.add_argument("id", metavar="ID", help="the session id (ses_…)")
    p_del.add_argument("--yes", action="store_true", help="skip the confirmation")
    p_watch = sub.add_parser(
        "watch", help="keep the mirror converged until interrupted (one line per pass)"
    )
    _common(p_watch)
    cli_watch.add_arguments(p_watch)
    p_export = sub.add_parser(
        "export", help="write a conversation and its files as the window's Export does"
    )
    _common(p_export)
    cli_export.add_arguments(p_export)
    p_repair = sub.add_parser(
        "repair",
        help="rebuild a damaged mirror from the server",
        description="Rebuild the mirror from the server when it is damaged: nothing the "
        "server does not confirm is kept; deletes not yet confirmed are tried again. Exit "
        "0: rebuilt (or not damaged); 1: the server could not be walked, or no file can take "
        "the mirror's place (a folder there, a read-only folder); nothing changed.",
    )
    _common(p_repair)
    p_repair.add_argument(
        "--force", action="store_true", help="rebuild even when the mirror passes its check"
    )
    return parser


def _profile(args: argparse.Namespace, *, network: bool = True) -> Profile:
    """The profile the arguments name; for a command that uses the network, a warning on
    stderr when the server is plain http:// off this machine."""
    token = token_input.token_from_arguments(args)
    profile = Profile.load(args.profile, server=args.server, token=token, ca_bundle=args.ca_bundle)
    if network:
        from sync.api.tls import plain_http_warning

        if warning := plain_http_warning(profile.server):
            _err(f"warning: {warning}")
    return profile


def _walk_kept(report: ReconcileReport) -> bool:
    """The pass's walk stopped, but the pages it wrote stay in the mirror and the next
    pass resumes (`sync.reconcile.walk`): the sync changed something, even on a first sync."""
    return isinstance(report.error, WalkUnfinished) or bool(report.inserted or report.updated)


def _err(message: str) -> None:
    """One line on stderr; its words may hold a server's or a file's text (CONTRACT §10.1:
    replaced visibly, newlines included, so no line of output can be forged)."""
    print(f"converge: {for_terminal(message)}", file=sys.stderr)


def _ids(ids: Sequence[str]) -> str:
    """Server-given ids, space-separated; a newline inside one is replaced (one line)."""
    return " ".join(for_terminal(i) for i in ids)


# -- sync -----------------------------------------------------------------------------------


async def _sync(args: argparse.Namespace) -> int:
    import asyncio
    import shutil

    from sync.engine import SyncEngine
    from sync.events import TriggerReason

    started = asyncio.get_running_loop().time()  # the command's one deadline counts from here
    profile = _profile(args)
    profile.require_connection()
    # A brand-new account (nothing adopted from a pre-account mirror) that fails its first
    # sync is removed again below.
    new_account = not profile.account_dir.exists() and not (profile.root / MIRROR_FILE).exists()
    engine = await SyncEngine.open(profile)
    seconds = engine.api.bounds.pass_seconds
    engine.content.deadline = started + seconds
    report: ReconcileReport | None = None
    left = 0
    try:
        async with asyncio.timeout_at(started + seconds + SYNC_GRACE):
            report = await engine.reconcile(TriggerReason.MANUAL)
            # Transcripts follow the rows (CONTRACT §11) until the deadline; each is kept as
            # it is stored, and the next sync (or the window) fetches the rest.
            await engine.content.wait_idle()
            if report.error is None:
                left = await engine.content.backlog()
    except TimeoutError:
        if report is None:
            _err(
                f"the server at {profile.server} did not answer within "
                f"{seconds + SYNC_GRACE:.0f} s; nothing was changed."
            )
    finally:
        await engine.close()
        if new_account and (
            report is None or (report.error is not None and not _walk_kept(report))
        ):
            # A first sync of an account that failed leaves no empty mirror behind: the
            # profile is exactly as it was ("changes nothing", CONTRACT §8).
            shutil.rmtree(profile.account_dir, ignore_errors=True)
    if report is None:
        return EXIT_FAILED
    if isinstance(report.error, MirrorDamaged):  # met during the pass (a read failed)
        _err(report.error.message)
        return EXIT_DAMAGED
    if report.error is not None:
        words = report.error.message
        if isinstance(report.error, Unavailable):  # the engine's status says the same
            words = wording.will_try_again(words)
        if isinstance(report.error, WalkUnfinished):  # pages kept; the next sync goes on
            _err(f"sync not finished: {words}")
            return EXIT_FAILED
        if _walk_kept(report):  # the walk wrote pages before it stopped: they stay
            _err(f"sync stopped: {words} What it walked so far is kept; the next sync goes on.")
            return EXIT_FAILED
        _err(f"sync failed: {words} Nothing was changed.")
        return EXIT_FAILED
    content = engine.content.last_report
    if args.json:
        print(
            json_for_terminal(
                {
                    "inserted": list(report.inserted),
                    "updated": list(report.updated),
                    "pruned": list(report.pruned),
                    "kept": list(report.kept),
                    "not_modified": report.not_modified,
                    "requests": report.requests,
                    "transcripts_fetched": len(content.fetched) if content else 0,
                    "transcripts_left": left,
                }
            )
        )
        return _kept_verdict(report)
    for label, ids in (
        ("inserted", report.inserted),
        ("updated", report.updated),
        ("pruned", report.pruned),
    ):
        print(f"{label} {len(ids)}" + (": " + _ids(ids) if ids else ""))
    if report.kept:
        print(f"kept {len(report.kept)}: " + _ids(report.kept))
    if report.not_modified:
        print("index unchanged since the last sync (one request)")
    if left:
        reason = content.error.message if content and content.error else None
        _err(wording.messages_to_fetch(left, reason))  # a notice, as `search --limit`'s
    return _kept_verdict(report)


def _kept_verdict(report: ReconcileReport) -> int:
    """A pass whose point reads were inconclusive did not finish its job: say so and why
    (the engine's status line says the same), exit 1."""
    if not report.kept:
        return EXIT_OK
    reason = report.point_read_error
    if reason is None:  # not expected: kept rows always come with their point read's error
        _err(
            f"the server did not confirm whether {len(report.kept)} conversation(s) still "
            "exist; they were kept. Run `converge sync` again."
        )
    else:
        token_refused = isinstance(reason, Unauthenticated)
        words = wording.unconfirmed(len(report.kept), reason.message, token_refused=token_refused)
        _err(f"{words} Run `converge sync` again.")
    return EXIT_FAILED


# -- ls -------------------------------------------------------------------------------------


def _ls(args: argparse.Namespace, out: TextIO) -> int:
    cli_ls.ls(_profile(args, network=False), json=args.json, out=out)
    return EXIT_OK


# -- delete ---------------------------------------------------------------------------------


def _confirm(title: str | None, stdin: TextIO, stderr: TextIO) -> bool:
    shown = for_terminal(title) if title is not None else None  # the sentence keeps its \n
    stderr.write(wording.delete_confirmation(shown) + "\n")
    stderr.write(wording.DELETE_PROMPT)
    stderr.flush()
    answer = stdin.readline()
    return answer.strip().lower() in {"y", "yes"}


async def _delete(args: argparse.Namespace) -> int:
    import asyncio

    from sync.delete.outcome import DeleteStatus
    from sync.engine import SyncEngine

    profile = _profile(args)
    profile.require_connection()
    engine = await SyncEngine.open(profile)
    try:
        if not args.yes:
            row = await engine.row(args.id)
            confirmed = await asyncio.to_thread(
                _confirm, row.title if row else None, sys.stdin, sys.stderr
            )
            if not confirmed:
                _err("not deleted (not confirmed).")
                return EXIT_ABORTED
        try:
            with operation_deadline(DELETE_DEADLINE):  # a 429's wait must fit in it
                async with asyncio.timeout(DELETE_DEADLINE):
                    outcome = await engine.delete(args.id)
        except TimeoutError:
            # The request may have reached the server: not "nothing was deleted" (§9.2).
            await engine.mark_delete_unconfirmed(args.id)
            _err(wording.delete_not_confirmed("the server did not answer in time."))
            return EXIT_UNCONFIRMED
    finally:
        await engine.close()
    if outcome.status is DeleteStatus.DELETED:
        print(f"deleted {for_terminal(args.id)}")
        return EXIT_OK
    if outcome.status is DeleteStatus.ALREADY_GONE:
        print(f"deleted {for_terminal(args.id)} (it was already gone from the server)")
        return EXIT_OK
    _err(outcome.message)
    if outcome.status is DeleteStatus.ACTIVE_RUN:
        return EXIT_CONFLICT
    if outcome.status is DeleteStatus.UNCONFIRMED:
        return EXIT_UNCONFIRMED
    return EXIT_FAILED


# -- repair ---------------------------------------------------------------------------------


async def _repair(args: argparse.Namespace) -> int:
    import asyncio

    from sync.repair import repair_mirror

    profile = _profile(args)
    try:
        async with asyncio.timeout(SYNC_DEADLINE + DELETE_DEADLINE):
            result = await repair_mirror(profile, force=args.force)
    except TimeoutError:
        _err(f"the server at {profile.server} did not answer in time; nothing was changed.")
        return EXIT_FAILED
    except MirrorDamaged as exc:  # not expected: the new file is checked as it opens
        _err(f"repair failed: {exc.message}")
        return EXIT_FAILED
    except MirrorUnwritable as exc:  # its sentence says what to do
        _err(exc.message)
        return EXIT_FAILED
    except SyncError as exc:
        _err(f"repair failed: {exc.message} The saved copy was left as it was.")
        return EXIT_FAILED
    print(result.message)
    if result.marks_lost:
        _err("warning: the deletes not yet confirmed could not be read from the damaged file.")
    return EXIT_OK


# -- entry ----------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; `argv` includes the subcommand name (`["sync", "--server", ...]`).
    Everything it writes to stdout and stderr is inert (`sync.cli.terminal`)."""
    try:
        with inert_streams():
            return _main(argv)
    except BrokenPipeError:
        return _reader_gone()


def _reader_gone() -> int:
    """The reader of stdout went away (`converge ls | head`): what it asked for was
    delivered, so this is no error. Python would still try to flush stdout at exit and
    print a second BrokenPipeError; point the descriptor at /dev/null first (the recipe of
    the `signal` module's documentation)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_OK


def _main(argv: Sequence[str] | None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(args_list)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.ERROR,
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        if args.command == "ls":
            return _ls(args, sys.stdout)
        if args.command == "show":
            cli_content.show(_profile(args, network=False), args.id, json=args.json, out=sys.stdout)
            return EXIT_OK
        if args.command == "search":
            if args.limit is not None and args.limit < 1:
                parser.error("--limit must be at least 1")
            profile = _profile(args, network=False)
            try:
                cut = cli_content.search(
                    profile, args.words, json=args.json, out=sys.stdout, limit=args.limit
                )
            except SearchTooLong as exc:  # the words asked for, not the mirror, are wrong
                _err(exc.message)
                return EXIT_USAGE
            if cut:
                _err(f"showing the first {args.limit} matches; more were found (raise --limit).")
            return EXIT_OK
        import asyncio  # the network commands' loop (the offline ones above need none)

        if args.command == "sync":
            return asyncio.run(_sync(args))
        if args.command == "delete":
            return asyncio.run(_delete(args))
        if args.command == "export":
            return asyncio.run(cli_export.export(args, _profile(args), sys.stdout, sys.stderr))
        if args.command == "repair":
            return asyncio.run(_repair(args))
        if args.command == "watch":
            return asyncio.run(cli_watch.watch(args, _profile(args), sys.stdout))
    except MirrorDamaged as exc:
        _err(exc.message)
        return EXIT_DAMAGED
    except MirrorError as exc:
        _err(exc.message)
        return EXIT_FAILED
    except SyncError as exc:
        _err(exc.message)
        return EXIT_FAILED
    except KeyboardInterrupt:
        _err("interrupted.")
        return 130
    except BrokenPipeError:
        raise  # not an unexpected error: `main` ends quietly
    except Exception as exc:  # a bug or an environment problem: one line, details in -v
        log.debug("unexpected failure", exc_info=True)
        _err(f"unexpected error ({type(exc).__name__}: {exc}). Run with -v for details.")
        return EXIT_FAILED
    parser.error(f"unknown command {args.command!r}")
    return EXIT_USAGE  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main())
