"""The headless commands of CONTRACT §8: `converge sync | ls | delete | qa`.

Each takes `--server URL --token TOKEN --profile DIR` anywhere among its own arguments.
Output for people goes to stdout (results) and stderr (problems); never a traceback: every
`SyncError` becomes one clear line and a non-zero exit. Headless commands never start the
bundled server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections.abc import Sequence
from typing import TextIO

from sync import wording
from sync.deletion import DeleteStatus
from sync.engine import SyncEngine
from sync.errors import MirrorError, SyncError, Unauthenticated
from sync.mirror import Mirror, SessionRow
from sync.profile import Profile
from sync.reconcile import ReconcileReport, TriggerReason

log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_FAILED = 1  # the operation did not happen (server unreachable, refused, ...)
EXIT_USAGE = 2  # argparse's own code for bad arguments
EXIT_CONFLICT = 3  # delete refused: a run is active (409)
EXIT_ABORTED = 4  # delete not confirmed by the user

#: CONTRACT §8: with the server unreachable or failing, `converge sync` ends within 30 s.
SYNC_DEADLINE = 25.0
DELETE_DEADLINE = 25.0


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--server", metavar="URL", help="server base URL (or $CONVERGE_SERVER)")
    parser.add_argument("--token", metavar="TOKEN", help="bearer token (or $CONVERGE_TOKEN)")
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
    p_del = sub.add_parser("delete", help="delete a conversation everywhere (server first)")
    _common(p_del)
    p_del.add_argument("id", metavar="ID", help="the session id (ses_…)")
    p_del.add_argument("--yes", action="store_true", help="skip the confirmation")
    return parser


def _profile(args: argparse.Namespace) -> Profile:
    return Profile.load(args.profile, server=args.server, token=args.token)


def _err(message: str) -> None:
    print(f"converge: {message}", file=sys.stderr)


# -- sync -----------------------------------------------------------------------------------


async def _sync(args: argparse.Namespace) -> int:
    profile = _profile(args)
    engine = await SyncEngine.open(profile)
    try:
        try:
            async with asyncio.timeout(SYNC_DEADLINE):
                report = await engine.reconcile(TriggerReason.MANUAL)
        except TimeoutError:
            _err(
                f"the server at {profile.server} did not answer within {SYNC_DEADLINE:.0f} s; "
                "nothing was changed."
            )
            return EXIT_FAILED
    finally:
        await engine.close()
    if report.error is not None:
        _err(f"sync failed: {report.error.message} Nothing was changed.")
        return EXIT_FAILED
    if args.json:
        print(
            json.dumps(
                {
                    "inserted": list(report.inserted),
                    "updated": list(report.updated),
                    "pruned": list(report.pruned),
                    "kept": list(report.kept),
                    "not_modified": report.not_modified,
                    "requests": report.requests,
                }
            )
        )
        return _kept_verdict(report)
    for label, ids in (
        ("inserted", report.inserted),
        ("updated", report.updated),
        ("pruned", report.pruned),
    ):
        print(f"{label} {len(ids)}" + (": " + " ".join(ids) if ids else ""))
    if report.kept:
        print(f"kept {len(report.kept)}: " + " ".join(report.kept))
    if report.not_modified:
        print("index unchanged since the last sync (one request)")
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


def _read_rows(profile: Profile) -> list[SessionRow]:
    """The mirror's rows; a profile that never synced has none (and gets no file)."""
    if not profile.mirror_path.exists():
        return []
    mirror = Mirror.open(profile.mirror_path, create=False)
    try:
        return mirror.rows()
    finally:
        mirror.close()


def _ls(args: argparse.Namespace, out: TextIO) -> int:
    rows = _read_rows(_profile(args))
    if args.json:
        out.write(json.dumps([row.to_json() for row in rows], ensure_ascii=False))
        out.write("\n")
        return EXIT_OK
    if not rows:
        out.write("(no conversations in the mirror; run `converge sync`)\n")
        return EXIT_OK
    for row in rows:
        mark = f"  [running {row.active_run_id}]" if row.active_run_id else ""
        title = row.title if row.title is not None else "(untitled)"
        out.write(f"{row.id}  {row.updated_at}  {title}{mark}\n")
    return EXIT_OK


# -- delete ---------------------------------------------------------------------------------


def _confirm(title: str | None, stdin: TextIO, stderr: TextIO) -> bool:
    stderr.write(wording.delete_confirmation(title) + "\n")
    stderr.write(wording.DELETE_PROMPT)
    stderr.flush()
    answer = stdin.readline()
    return answer.strip().lower() in {"y", "yes"}


async def _delete(args: argparse.Namespace) -> int:
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
            async with asyncio.timeout(DELETE_DEADLINE):
                outcome = await engine.delete(args.id)
        except TimeoutError:
            _err(wording.nothing_deleted("the server did not answer in time."))
            return EXIT_FAILED
    finally:
        await engine.close()
    if outcome.status is DeleteStatus.DELETED:
        print(f"deleted {args.id}")
        return EXIT_OK
    if outcome.status is DeleteStatus.ALREADY_GONE:
        print(f"deleted {args.id} (it was already gone from the server)")
        return EXIT_OK
    _err(outcome.message)
    if outcome.status is DeleteStatus.ACTIVE_RUN:
        return EXIT_CONFLICT
    return EXIT_FAILED


# -- entry ----------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; `argv` includes the subcommand name (`["sync", "--server", ...]`)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] == "qa":
        try:
            from sync import qa  # type: ignore[attr-defined,unused-ignore]
        except ImportError:
            _err("the QA harness is not available in this build.")
            return EXIT_FAILED
        result: int = qa.main(args_list[1:])
        return result
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
        if args.command == "sync":
            return asyncio.run(_sync(args))
        if args.command == "delete":
            return asyncio.run(_delete(args))
    except MirrorError as exc:
        _err(exc.message)
        return EXIT_FAILED
    except SyncError as exc:
        _err(exc.message)
        return EXIT_FAILED
    except KeyboardInterrupt:
        _err("interrupted.")
        return 130
    except Exception as exc:  # a bug or an environment problem: one line, details in -v
        log.debug("unexpected failure", exc_info=True)
        _err(f"unexpected error ({type(exc).__name__}: {exc}). Run with -v for details.")
        return EXIT_FAILED
    parser.error(f"unknown command {args.command!r}")
    return EXIT_USAGE  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main())
