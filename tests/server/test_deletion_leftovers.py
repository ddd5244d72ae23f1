"""CONTRACT §9.2 on the server: no bytes without a row, a stuck outbox entry is visible, and
purged content leaves SQLite's WAL even when a reader held it back for a while."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from server_stub.db.engine import Database
from server_stub.domain import purge
from server_stub.domain.scrub import Scrubber
from server_stub.storage.objectstore import FilesystemObjectStore
from tests.conftest import LiveServer
from tests.server.conftest import (
    new_session,
    residue,
    run_to_end,
    start_run,
    wait_terminal,
    wait_until,
)


def store_files(server: LiveServer) -> list[str]:
    root = server.settings.artifacts_dir
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


@pytest.fixture
def held_put(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[threading.Event, threading.Event]]:
    """Byte writes complete, then wait (`written` is set) until the test sets `release`."""
    written, release = threading.Event(), threading.Event()
    real_put = FilesystemObjectStore.put

    def put(self: FilesystemObjectStore, locator: str, data: bytes) -> None:
        real_put(self, locator, data)
        written.set()
        assert release.wait(30), "the test never released the held byte write"

    monkeypatch.setattr(FilesystemObjectStore, "put", put)
    yield written, release
    release.set()


def test_a_cancel_between_the_byte_write_and_the_artifact_row_leaves_no_bytes(
    live_server: LiveServer, held_put: tuple[threading.Event, threading.Event]
) -> None:
    written, release = held_put
    alice = live_server.client()
    control = live_server.control()
    sid = new_session(alice)
    run = start_run(alice, sid, "/artifact secret.txt bytes that never got a row")
    assert written.wait(15)
    assert alice.post(f"/v1/runs/{run['id']}/cancel").status_code == 202
    release.set()
    assert wait_terminal(alice, run["id"])["status"] == "cancelled"
    # The run ended without an artifact row: its write intent went to the outbox.
    assert control.post("/_stub/maintenance").json() == {"outbox_pending": 0}
    assert store_files(live_server) == []
    assert alice.delete(f"/v1/sessions/{sid}").status_code == 204
    audit = residue(live_server, sid)
    assert audit["objects"] == 0 and not any(audit["rows"].values())


def test_maintenance_removes_bytes_no_row_names_while_the_server_runs(
    live_server: LiveServer,
) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    run_to_end(alice, sid, "/artifact kept.txt still owned")
    stray = live_server.settings.artifacts_dir / "ses_stray" / "art_stray"
    stray.parent.mkdir(parents=True)
    stray.write_bytes(b"left by a crash of an older build")
    (stray.parent / "art_half.tmp").write_bytes(b"half written")
    live_server.control().post("/_stub/maintenance")
    assert not stray.exists() and not (stray.parent / "art_half.tmp").exists()
    assert len(store_files(live_server)) == 1  # the owned artifact stays
    artifact = next(
        e["data"]["artifact_id"]
        for e in alice.get(f"/v1/sessions/{sid}/events").json()["items"]
        if e["type"] == "artifact.created"
    )
    assert alice.get(f"/v1/artifacts/{artifact}/content").content == b"still owned"


def test_maintenance_never_removes_a_write_in_flight(
    live_server: LiveServer, held_put: tuple[threading.Event, threading.Event]
) -> None:
    written, release = held_put
    alice = live_server.client()
    sid = new_session(alice)
    run = start_run(alice, sid, "/artifact slow.txt written while maintenance runs")
    assert written.wait(15)
    live_server.control().post("/_stub/maintenance")
    assert len(store_files(live_server)) == 1  # its intent row names it
    release.set()
    assert wait_terminal(alice, run["id"])["status"] == "completed"
    artifact = next(
        e["data"]["artifact_id"]
        for e in alice.get(f"/v1/sessions/{sid}/events").json()["items"]
        if e["type"] == "artifact.created"
    )
    assert alice.get(f"/v1/artifacts/{artifact}/content").status_code == 200


def test_a_stuck_byte_delete_is_visible_with_attempts_error_and_age_and_warned_about(
    live_server: LiveServer, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(purge, "OUTBOX_WARN_ATTEMPTS", 3)
    alice = live_server.client()
    control = live_server.control()
    sid = new_session(alice)
    run_to_end(alice, sid, "/artifact a.txt alpha")
    control.put("/_stub/faults", json={"object_store": "down"})
    assert alice.delete(f"/v1/sessions/{sid}").status_code == 204  # attempt 1
    with caplog.at_level(logging.INFO, logger="server_stub.domain.purge"):
        control.post("/_stub/maintenance")  # attempt 2
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
        control.post("/_stub/maintenance")  # attempt 3: past the threshold
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings and "attempt 3" in warnings[-1] and sid in warnings[-1]
    body = control.get("/_stub/outbox").json()
    assert body["pending"] == 1
    (item,) = body["items"]
    assert item["session_id"] == sid and item["attempts"] == 3
    assert "down" in item["last_error"] and item["last_attempt_at"]
    assert item["age_seconds"] >= 0 and body["oldest_age_seconds"] == item["age_seconds"]
    control.put("/_stub/faults", json={"object_store": "up"})
    assert control.post("/_stub/maintenance").json() == {"outbox_pending": 0}
    assert control.get("/_stub/outbox").json() == {
        "pending": 0,
        "oldest_age_seconds": 0.0,
        "items": [],
    }


def _files_holding(folder: Path, needle: bytes) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.is_file() and needle in p.read_bytes())


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_purged_content_leaves_the_wal_once_a_blocking_reader_is_gone(
    live_server: LiveServer,
) -> None:
    """PITFALLS §10: a checkpoint cannot finish under a reader of older frames; the scrub
    says so and maintenance finishes it later, rather than assuming it worked."""
    alice = live_server.client()
    needle = b"Zq-blocked-by-a-reader-7f3a"
    sid = new_session(alice)
    run_to_end(alice, sid, needle.decode())
    db_path = Path(live_server.settings.database_url.removeprefix("sqlite:///"))
    reader = sqlite3.connect(db_path, isolation_level=None)
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM events").fetchone()  # holds its snapshot
        assert alice.delete(f"/v1/sessions/{sid}").status_code == 204
        live_server.control().post("/_stub/maintenance")  # cannot finish: reader
        assert _files_holding(db_path.parent, needle)
    finally:
        reader.execute("ROLLBACK")
        reader.close()
    live_server.control().post("/_stub/maintenance")
    wait_until(lambda: not _files_holding(db_path.parent, needle))


def test_a_burst_of_purges_shares_one_background_scrub(tmp_path: Path) -> None:
    """A WAL-truncating checkpoint blocks writers while it runs: deletes in a burst must not
    each pay for one (server_stub.domain.scrub.Scrubber)."""
    db = Database(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    db.create_schema()

    async def go() -> int:
        scrubber = Scrubber(db, asyncio.get_running_loop())
        for _ in range(5):
            scrubber.request()
        task = scrubber._task
        assert task is not None
        await task
        await scrubber.shutdown()
        return scrubber.completed

    try:
        assert asyncio.run(go()) == 1
    finally:
        db.dispose()


def test_a_connection_given_back_after_dispose_is_closed_too(tmp_path: Path) -> None:
    """A worker thread that finishes its statement after the app's shutdown disposed the
    engine gives its connection back late: it is closed, not left open in the disposed pool
    for the garbage collector to warn about."""
    db = Database(f"sqlite:///{tmp_path / 'server.sqlite3'}")
    in_use = db.engine.connect()
    raw = in_use.connection.dbapi_connection
    assert raw is not None
    db.dispose()
    in_use.close()
    with pytest.raises(sqlite3.ProgrammingError):
        raw.execute("SELECT 1")
