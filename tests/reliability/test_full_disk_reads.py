"""Reading the mirror on a full disk: `converge ls`, `show` and `search` need no free byte.

A user whose disk filled up still wants to read their history. Opening the mirror to read
must therefore write nothing: no journal-mode switch, no migration, no checkpoint or scrub
at close, and no shared-memory WAL index grown on disk. A real 16 MiB tmpfs filled to its
last byte (`small_disk`, `fill`), a real stub server and the command line as a subprocess.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from sync.mirror.store import Mirror
from tests.reliability.conftest import fill
from tests.sync.helpers import Server, run
from tests.sync.test_cli_live import conn, converge


@pytest.mark.parametrize("index", ["none", "another reader's", "a stale one"])
def test_ls_show_and_search_read_the_history_on_a_full_disk(
    live_server: Any, small_disk: Path, index: str
) -> None:
    """Whatever WAL index file the mirror has when the disk fills up: none (every program
    closed it), the live one of a program that holds it open (the window), or a stub that
    a reader on the full disk could not grow."""

    async def setup() -> list[str]:
        async with Server(live_server.url) as server:
            return [(await server.control_session(f"gooseberry {n}")).id for n in range(3)]

    ids = run(setup())
    profile = small_disk / "profile"
    synced = converge("sync", *conn(live_server.url, profile))
    assert synced.returncode == 0, synced.stderr
    (mirror,) = (profile / "accounts").glob("*/mirror.sqlite3")
    live_server.stop()  # reads never use the network
    with contextlib.ExitStack() as stack:
        if index == "another reader's":
            window = Mirror.open(mirror)
            stack.callback(window.close)
            assert {row.id for row in window.rows()} == set(ids)
        if index == "a stale one":
            mirror.with_name(mirror.name + "-shm").write_bytes(b"\0\0\0")
        before = {p.name: p.read_bytes() for p in mirror.parent.glob(mirror.name + "*")}
        filler = fill(small_disk)
        stack.callback(filler.unlink)
        assert shutil.disk_usage(small_disk).free == 0
        offline = ["--profile", str(profile)]

        listed = converge("ls", "--json", *offline)
        assert listed.returncode == 0 and listed.stderr == "", listed.stderr
        assert {row["id"] for row in json.loads(listed.stdout)} == set(ids)
        people = converge("ls", *offline)
        assert people.returncode == 0 and people.stderr == "", people.stderr
        assert all(i in people.stdout for i in ids)
        shown = converge("show", ids[0], "--json", *offline)
        assert shown.returncode == 0 and shown.stderr == "", shown.stderr
        assert json.loads(shown.stdout)["session"]["id"] == ids[0]
        found = converge("search", "gooseberry", "--json", *offline)
        assert found.returncode == 0 and found.stderr == "", found.stderr
        assert {hit["id"] for hit in json.loads(found.stdout)} == set(ids)

        after = {p.name: p.read_bytes() for p in mirror.parent.glob(mirror.name + "*")}
    assert after.keys() == before.keys()
    assert after[mirror.name] == before[mirror.name]  # a read wrote nothing to the file
