"""`converge ls`: the local mirror's rows, read offline (CONTRACT §8), as lines for people or
one JSON array; a row whose fields are not text is named, not half printed.

Apart from `sync.cli.main` (argument parsing, the network commands) because it never touches the
network and reads the mirror alone; `open_mirror` is how `converge show` and `search` open it
too.
"""

from __future__ import annotations

from typing import TextIO

from sync.cli.terminal import for_terminal, json_for_terminal
from sync.errors import MirrorError
from sync.mirror.check import check_mirror
from sync.mirror.schema import SCHEMA_VERSION
from sync.mirror.store import Mirror
from sync.profile.profile import Profile
from sync.wire.models import SessionView


def open_mirror(profile: Profile) -> Mirror | None:
    """The account's mirror opened to be read, or None when it has none (no file is made).

    A read needs no free space, so a current mirror is opened without a single write (no
    migration, journal mode, file mode or closing checkpoint; its connections are
    `sync.mirror.schema.open_read_only`'s): a full disk still shows the history. A mirror
    of another schema opens as usual: an older one must be migrated before it can be read,
    a newer one is refused in words. A large current file is checked in part
    (`sync.mirror.check`): the read names any damage it meets."""
    path = profile.find_mirror()  # the account named, or the only one (CONTRACT §9.3)
    if path is None or not path.exists():
        return None
    if check_mirror(path, reading=True) != SCHEMA_VERSION:
        return Mirror.open(path, create=False)
    return Mirror(path, read_only=True)


def _read_rows(profile: Profile) -> tuple[list[SessionView], set[str]]:
    """The mirror's rows and the ids whose delete is unconfirmed, in one open; an account
    that never synced has none (and gets no file)."""
    mirror = open_mirror(profile)
    if mirror is None:
        return [], set()
    try:
        return mirror.rows(), mirror.unconfirmed_deletes()
    finally:
        mirror.close()


_NULLABLE = frozenset({"title", "active_run_id", "last_run_id"})


def _check_row(row: SessionView) -> None:
    """A row whose fields are not text (a mirror edited by hand, a disk error) is named, not
    met with a TypeError halfway through the output."""
    for name in ("id", "title", "created_at", "updated_at", "active_run_id", "last_run_id"):
        value = getattr(row, name)
        if isinstance(value, str) or (value is None and name in _NULLABLE):
            continue
        raise MirrorError(
            f"The mirror holds a malformed row {str(row.id)[:80]!r}: its {name} is "
            f"{type(value).__name__}, not text. Run `converge sync` to refresh the mirror, "
            "or use another profile."
        )


def ls(profile: Profile, *, json: bool, out: TextIO) -> None:
    """`converge ls`: the mirror's rows, newest first, or one JSON array with `json`."""
    rows, unconfirmed = _read_rows(profile)
    for row in rows:
        _check_row(row)
    if json:
        out.write(json_for_terminal([row.to_json() for row in rows]))
        out.write("\n")
        return
    if not rows:
        out.write("(no conversations in the mirror; run `converge sync`)\n")
        return
    for row in rows:
        mark = f"  [running {for_terminal(row.active_run_id)}]" if row.active_run_id else ""
        if row.id in unconfirmed:
            mark += "  [delete not confirmed]"
        title = for_terminal(row.title) if row.title is not None else "(untitled)"
        out.write(f"{for_terminal(row.id)}  {for_terminal(row.updated_at)}  {title}{mark}\n")
