"""CONTRACT §9.2: a deleted conversation leaves no byte on any disk, server or client.

The server runs as a real child process (`converge-server`, debug logging to a file in its
folder) and keeps running while the folders are scanned; two client devices mirror it, both
download the artifact into their caches, one deletes server-first, the other prunes on its
next pass, then one maintenance pass runs. Every file under the server's folder and both
profiles is then read whole and searched for the deleted conversation's markers (UTF-8 and
UTF-16). A second, surviving conversation's markers must still be found: the scan sees
content where content is.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import psycopg
import pytest

from qa.server import ControlPlane, ServerProcess
from tests.reliability.residue_scan import Markers, Planted, holders, plant_conversation, scan
from tests.sync.helpers import Server, device, run


async def _scenario(
    workdir: Path,
    profiles: Path,
    database_url: str | None = None,
    extra_args: tuple[str, ...] = (),
) -> tuple[Planted, Planted, dict[str, list[str]], dict[str, list[str]], list[Path]]:
    proc = ServerProcess(
        workdir, log_level="debug", database_url=database_url, extra_args=extra_args
    )
    # The client's log, at its most talkative, lands beside the profiles and is scanned too.
    profiles.mkdir(parents=True, exist_ok=True)
    client_log = logging.FileHandler(profiles / "client.log", encoding="utf-8")
    root = logging.getLogger()
    previous_level = root.level
    root.addHandler(client_log)
    root.setLevel(logging.DEBUG)
    try:
        url = await proc.start()
        async with Server(url) as server:
            victim = await plant_conversation(server, Markers.fresh("gone"))
            keeper = await plant_conversation(server, Markers.fresh("kept"))
            async with (
                device(url, profiles / "a") as (a, _),
                device(url, profiles / "b") as (b, _),
            ):
                for engine in (a, b):
                    await engine.reconcile()
                    for artifact_id in victim.artifact_ids + keeper.artifact_ids:
                        await engine.artifact_file(artifact_id)
                outcome = await a.delete(victim.session_id)
                assert outcome.removed, outcome.message
                report = await b.reconcile()
                assert victim.session_id in report.pruned
                control = ControlPlane(url)
                try:
                    assert await control.maintenance() == 0
                finally:
                    await control.aclose()
                folders = [workdir, profiles]
                gone = scan(folders, victim.markers.values())
                kept = scan(folders, keeper.markers.values())
        return victim, keeper, gone, kept, folders
    finally:
        root.removeHandler(client_log)
        root.setLevel(previous_level)
        client_log.close()
        await proc.close()


def test_a_deleted_conversation_leaves_no_byte_on_a_running_sqlite_server_or_either_client(
    tmp_path: Path,
) -> None:
    async def go() -> None:
        _victim, keeper, gone, kept, _ = await _scenario(tmp_path / "server", tmp_path / "devices")
        assert holders(gone) == {}
        # The scan is able to see content: the survivor's markers are on disk.
        assert set(holders(kept)) == set(keeper.markers.values())

    run(go(), timeout=120)


@pytest.mark.postgres
@pytest.mark.parametrize("vacuum", ["plain", "full"])
def test_what_a_deleted_conversation_leaves_on_postgresql(
    postgres_cluster: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], vacuum: str
) -> None:
    """PostgreSQL keeps dead tuples until VACUUM and WAL segments until they are recycled,
    and a plain VACUUM frees the space of dead tuples without zeroing it: their bytes stay in
    the table files until new rows overwrite them. The object store, the server log and both
    client profiles must hold nothing either way; with `--pg-vacuum-full` no table or index
    file holds a marker either. What remains is printed (docs/reliability.md has it)."""
    url = postgres_cluster.new_database()
    extra = ("--pg-vacuum-full",) if vacuum == "full" else ()

    async def go() -> None:
        victim, keeper, gone, _kept, _ = await _scenario(
            tmp_path / "server", tmp_path / "devices", database_url=url, extra_args=extra
        )
        assert holders(gone) == {}  # server folder (objects, log) and both profiles
        # Pages reach the table files at a checkpoint (until then they live in shared
        # buffers and the WAL): force one, so the scan reads what the files will hold.
        base = postgres_cluster.data / "base"
        with psycopg.connect(url.replace("+psycopg", ""), autocommit=True) as conn:
            conn.execute("CHECKPOINT")
            table_files = _by_relation(conn, scan([base], victim.markers.values()))
            live = scan([base], keeper.markers.values())
        wal = holders(scan([postgres_cluster.data / "pg_wal"], victim.markers.values()))
        with capsys.disabled():
            print(
                f"\nPostgreSQL ({vacuum} VACUUM) after delete + maintenance: relations holding "
                f"deleted bytes {sorted({r for rs in table_files.values() for r in rs})}; "
                f"WAL holds {len(wal)}/{len(victim.markers.values())} markers"
            )
        assert holders(live)  # the table files do hold live content: the scan sees it
        if vacuum == "full":
            assert table_files == {}

    run(go(), timeout=120)


def _by_relation(conn: psycopg.Connection[Any], found: dict[str, list[str]]) -> dict[str, set[str]]:
    """The relations (tables, indexes) whose files hold each found marker."""
    names = {
        str(node): name
        for node, name in conn.execute(
            "SELECT pg_relation_filenode(oid), relname FROM pg_class"
            " WHERE pg_relation_filenode(oid) IS NOT NULL"
        )
    }
    out: dict[str, set[str]] = {}
    for marker, where in holders(found).items():
        for entry in where:
            node = Path(entry.split(" [")[0]).name.split("_")[0].split(".")[0]
            out.setdefault(marker, set()).add(names.get(node, node))
    return out


def test_scan_finds_markers_in_utf16(tmp_path: Path) -> None:
    (tmp_path / "a.bin").write_bytes(b"\x00\x01" + "Zqmarker".encode("utf-16-le") + b"\x02")
    found = scan([tmp_path], ["Zqmarker", "Zqother"])
    assert list(holders(found)) == ["Zqmarker"]
