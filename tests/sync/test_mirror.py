"""The SQLite mirror: schema versions, refusal of a newer mirror, upsert/remove bookkeeping."""

from __future__ import annotations

import hashlib
import logging
import threading
from pathlib import Path

import pytest

from sync.errors import MirrorError, MirrorTooNew
from sync.mirror import sqlite_driver
from sync.mirror import store as mirror_module
from sync.mirror.file_index import CachedFile
from sync.mirror.schema import MIGRATIONS, SCHEMA_VERSION, read_schema_version
from sync.mirror.store import Mirror
from sync.wire.models import SessionView


def view(sid: str, updated: str, title: str | None = "t") -> SessionView:
    return SessionView(sid, title, "2026-01-01T00:00:00.000000Z", updated, None, None)


def test_new_mirror_is_created_at_the_current_schema_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    mirror = Mirror.open(path)
    try:
        assert mirror.schema_version() == SCHEMA_VERSION
        with mirror._writing() as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
            assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000
            assert conn.execute("PRAGMA secure_delete").fetchone()[0] == 1
    finally:
        mirror.close()
    assert read_schema_version(path) == SCHEMA_VERSION


def test_mirror_from_a_newer_schema_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    conn = sqlite_driver.connect(path)
    conn.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, future_column TEXT)")
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(MirrorTooNew) as info:
        Mirror.open(path)
    assert info.value.found == SCHEMA_VERSION + 1
    assert "newer version" in info.value.message
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.sqlite3"]  # no -wal, no -shm


def test_reopening_an_existing_mirror_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    mirror = Mirror.open(path)
    mirror.apply([view("ses_a", "2026-01-01T00:00:01.000000Z")])
    mirror.close()
    mirror = Mirror.open(path)
    try:
        assert [r.id for r in mirror.rows()] == ["ses_a"]
    finally:
        mirror.close()


def test_apply_reports_inserted_updated_removed_and_skips_unchanged(tmp_path: Path) -> None:
    mirror = Mirror.open(tmp_path / "m.sqlite3")
    try:
        a = view("ses_a", "2026-01-01T00:00:01.000000Z")
        b = view("ses_b", "2026-01-01T00:00:02.000000Z")
        first = mirror.apply([a, b])
        assert sorted(first.inserted) == ["ses_a", "ses_b"] and first.updated == []
        b2 = view("ses_b", "2026-01-01T00:00:03.000000Z", "renamed")
        second = mirror.apply([a, b2], ["ses_zzz"])
        assert second.inserted == [] and second.updated == ["ses_b"] and second.removed == []
        mirror.record_cached_file(
            CachedFile("art_1", "ses_a", "n.txt", "text/plain", 3, "00", "art_1.bin")
        )
        third = mirror.apply([], ["ses_a"])
        assert third.removed == ["ses_a"] and third.removed_files == ["art_1.bin"]
        assert mirror.cached_file("art_1") is None
        skipped = mirror.apply([a], skip=lambda sid: sid == "ses_a")
        assert skipped.inserted == []
        assert [r.id for r in mirror.rows()] == ["ses_b"]
    finally:
        mirror.close()


def test_rows_are_in_sidebar_order_and_filter_by_title(tmp_path: Path) -> None:
    mirror = Mirror.open(tmp_path / "m.sqlite3")
    try:
        same = "2026-01-01T00:00:05.000000Z"
        mirror.apply(
            [
                view("ses_a", same, "Alpha"),
                view("ses_b", same, "Beta 100%"),
                view("ses_c", "2026-01-01T00:00:09.000000Z", "Gamma"),
                view("ses_d", "2026-01-01T00:00:01.000000Z", None),
            ]
        )
        assert [r.id for r in mirror.rows()] == ["ses_c", "ses_b", "ses_a", "ses_d"]
        assert [r.id for r in mirror.rows("alp")] == ["ses_a"]
        assert [r.id for r in mirror.rows("100%")] == ["ses_b"]
        assert [r.id for r in mirror.rows("%")] == ["ses_b"]
    finally:
        mirror.close()


def _record_upserts(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[tuple[object, ...]]]]:
    """Every executemany of the sessions' upsert on the mirrors opened from now on: its
    statement and its rows' parameters."""
    upserts: list[tuple[str, list[tuple[object, ...]]]] = []

    class Recording(sqlite_driver.DBAPI.Connection):  # type: ignore[misc,name-defined]
        def executemany(self, sql: str, rows: object) -> object:
            if sql.lstrip().upper().startswith("INSERT INTO SESSIONS"):
                rows = list(rows)  # type: ignore[call-overload]
                upserts.append((sql, rows))  # type: ignore[arg-type]
            return super().executemany(sql, rows)

    connect = sqlite_driver.connect
    monkeypatch.setattr(
        sqlite_driver, "connect", lambda *a, **k: connect(*a, **k, factory=Recording)
    )
    return upserts


def test_a_bulk_upsert_sends_its_rows_as_executemany_parameters_in_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PITFALLS §8: rows go as executemany parameters, never spelled into the statement, and
    in chunks, so the worker thread gives the GIL back between them."""
    from sync.mirror.apply import UPSERT_CHUNK

    upserts = _record_upserts(monkeypatch)
    mirror = Mirror.open(tmp_path / "m.sqlite3")
    try:
        views = [
            view(f"ses_{i:06d}", f"2026-01-01T00:00:{i % 60:02d}.000000Z") for i in range(10_000)
        ]
        result = mirror.apply(views)
        assert len(result.inserted) == 10_000
        assert all(sql.count("?") <= 16 for sql, _rows in upserts), "rows spelled into it"
        assert [len(rows) for _sql, rows in upserts] == [UPSERT_CHUNK] * (10_000 // UPSERT_CHUNK)
    finally:
        mirror.close()


def test_an_upsert_binds_no_null_and_writes_every_mix_of_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A None is spelled NULL in the upsert's statement, never bound (the driver looks for
    an adapter for each None it binds, a first sync's two a row): rows of every mix of
    None title and run ids, new and updated, in one write, read back as they were sent."""
    upserts = _record_upserts(monkeypatch)
    mirror = Mirror.open(tmp_path / "m.sqlite3")
    try:
        at = "2026-01-01T00:00:00.000000Z"
        mirror.apply([view("ses_old", at, None), view("ses_kept", at)])
        later = "2026-01-02T00:00:00.000000Z"
        views = [
            SessionView(f"ses_{n}", title, at, later, active, last)
            for n, (title, active, last) in enumerate(
                (title, active, last)
                for title in (None, "", "t")
                for active in (None, "run_a")
                for last in (None, "run_l")
            )
        ]
        views.append(SessionView("ses_old", "now titled", at, later, "run_a", None))
        result = mirror.apply(views)
        assert sorted(result.inserted) == sorted(v.id for v in views[:-1])
        assert result.updated == ["ses_old"]
        assert all(None not in row for _sql, rows in upserts for row in rows)
        assert {r.id: r for r in mirror.rows()} == {
            **{v.id: v for v in views},
            "ses_kept": view("ses_kept", at),
        }
    finally:
        mirror.close()


def test_a_mirror_at_an_older_schema_is_migrated_forward_keeping_its_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sync.mirror.schema as schema
    import sync.mirror.store as mirror_module

    path = tmp_path / "m.sqlite3"
    mirror = Mirror.open(path)
    mirror.apply([view("ses_a", "2026-01-01T00:00:01.000000Z")])
    mirror.close()
    future_step = ("CREATE TABLE future_notes (session_id TEXT PRIMARY KEY, body TEXT)",)
    monkeypatch.setattr(schema, "MIGRATIONS", (*MIGRATIONS, future_step))
    for module in (schema, mirror_module):
        monkeypatch.setattr(module, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    upgraded = mirror_module.Mirror.open(path)
    try:
        assert upgraded.schema_version() == SCHEMA_VERSION + 1
        assert [r.id for r in upgraded.rows()] == ["ses_a"]
        with upgraded._reading() as conn:
            assert conn.execute("SELECT count(*) FROM future_notes").fetchone()[0] == 0
    finally:
        upgraded.close()


def test_a_failed_migration_step_leaves_the_old_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sync.mirror.schema as schema
    import sync.mirror.store as mirror_module

    path = tmp_path / "m.sqlite3"
    Mirror.open(path).close()
    broken = ("CREATE TABLE ok_table (x INTEGER)", "THIS IS NOT SQL")
    monkeypatch.setattr(schema, "MIGRATIONS", (*MIGRATIONS, broken))
    for module in (schema, mirror_module):
        monkeypatch.setattr(module, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    with pytest.raises(MirrorError) as info:
        mirror_module.Mirror.open(path)
    assert "previous version" in info.value.message
    assert read_schema_version(path) == SCHEMA_VERSION
    conn = sqlite_driver.connect(path)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    conn.close()
    assert "ok_table" not in tables  # the step's transaction rolled back as a whole


def test_an_older_view_never_overwrites_a_newer_row(tmp_path: Path) -> None:
    mirror = Mirror.open(tmp_path / "m.sqlite3")
    try:
        newer = view("ses_a", "2026-01-01T00:00:09.000000Z", "after the run")
        older = view("ses_a", "2026-01-01T00:00:01.000000Z", "before the run")
        mirror.apply([newer])
        result = mirror.apply([older])
        assert result.updated == [] and result.inserted == []
        row = mirror.get("ses_a")
        assert row is not None and row.title == "after the run"
    finally:
        mirror.close()


def test_a_new_server_or_token_forgets_the_etag_but_keeps_rows(tmp_path: Path) -> None:
    from sync.mirror.state import ETAG_KEY

    mirror = Mirror.open(tmp_path / "m.sqlite3")
    try:
        assert mirror.bind_identity("server-a") is True
        mirror.apply([view("ses_a", "2026-01-01T00:00:01.000000Z")], state={ETAG_KEY: '"e1"'})
        assert mirror.bind_identity("server-a") is False
        assert mirror.get_state(ETAG_KEY) == '"e1"'
        assert mirror.bind_identity("server-b") is True
        assert mirror.get_state(ETAG_KEY) is None
        assert [r.id for r in mirror.rows()] == ["ses_a"]
    finally:
        mirror.close()


def test_a_chunked_upsert_is_still_one_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The upsert goes to SQLite in chunks (so the worker gives the GIL back), but a failure
    in a late chunk leaves nothing of the earlier ones, nor the state written with them."""
    import sync.mirror.apply

    monkeypatch.setattr(sync.mirror.apply, "UPSERT_CHUNK", 2)
    path = tmp_path / "m.sqlite3"
    mirror = Mirror.open(path)
    try:
        conn = sqlite_driver.connect(path)
        conn.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON sessions WHEN NEW.id = 'ses_bad'"
            " BEGIN SELECT RAISE(ABORT, 'refused'); END"
        )
        conn.commit()
        conn.close()
        t = "2026-01-02T00:00:00.000000Z"
        views = [view(f"ses_{i}", t) for i in range(5)] + [view("ses_bad", t)]
        with pytest.raises(MirrorError):
            mirror.apply(views, state={"etag": "W/1"})
        assert mirror.count() == 0
        assert mirror.get_state("etag") is None
        applied = mirror.apply(views[:5])
        assert sorted(applied.inserted) == [f"ses_{i}" for i in range(5)]
        assert mirror.count() == 5
    finally:
        mirror.close()


def test_close_waits_for_a_worker_thread_to_give_back_its_connection(tmp_path: Path) -> None:
    """`SyncEngine.close()` cancels a pass whose worker thread may still be inside the
    mirror. `close()` returns only once that thread has given its connection back, and then
    no connection holds the file: a rebuild switches the closed file out of WAL at once
    (`sync.repair`), which failed with "database is locked" under load before."""
    path = tmp_path / "m.sqlite3"
    mirror = Mirror.open(path)
    mirror.apply([view("ses_1", "2026-01-01T00:00:00.000000Z")])
    holding, release = threading.Event(), threading.Event()
    raws: list[object] = []

    def worker() -> None:
        with mirror._reading() as conn:  # a read transaction holds WAL frames
            conn.execute("SELECT count(*) FROM sessions").fetchone()
            raws.append(conn)
            holding.set()
            release.wait()

    reader = threading.Thread(target=worker)
    reader.start()
    assert holding.wait(30)
    closer = threading.Thread(target=mirror.close)
    closer.start()
    try:
        closer.join(0.2)
        assert closer.is_alive()  # still waiting for the reader
    finally:
        release.set()
        reader.join(30)
    closer.join(30)
    assert not closer.is_alive()
    with pytest.raises(sqlite_driver.DBAPI.ProgrammingError):
        raws[0].execute("SELECT 1")  # type: ignore[attr-defined]  # closed, not left for the GC
    conn = sqlite_driver.connect(path, timeout=0)
    try:
        assert conn.execute("PRAGMA journal_mode=DELETE").fetchone()[0] == "delete"
    finally:
        conn.close()


def test_close_gives_up_waiting_for_a_connection_never_given_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A thread stuck inside the mirror does not hang the app's shutdown: `close()` waits
    `CLOSE_WAIT` seconds, says so in the log, and closes what it can."""
    monkeypatch.setattr(mirror_module, "CLOSE_WAIT", 0.01)
    mirror = Mirror.open(tmp_path / "m.sqlite3")
    stuck = mirror._lease(mirror._readers)
    raw = stuck.__enter__()
    try:
        with caplog.at_level(logging.WARNING, logger="sync.mirror.store"):
            mirror.close()
        assert "still in use" in caplog.text
    finally:
        stuck.__exit__(None, None, None)  # given back after the close: closed, not pooled
    with pytest.raises(sqlite_driver.DBAPI.ProgrammingError):
        raw.execute("SELECT 1")


def test_the_walk_state_is_read_in_one_statement(tmp_path: Path) -> None:
    from sync.mirror.state import WALK_CURSOR, WALK_ETAG, WALK_KEYS

    mirror = Mirror.open(tmp_path / "m.sqlite3")
    try:
        mirror.apply([], state={WALK_CURSOR: "c1", WALK_ETAG: '"e2"'})
        statements: list[str] = []

        def seen(sql: str) -> None:
            if "sync_state" in sql:
                statements.append(sql)

        # One reader and one writer connection are pooled: trace them both.
        for pool in (mirror._readers, mirror._writers):
            with mirror._lease(pool) as conn:
                conn.set_trace_callback(seen)
        states = mirror.get_states(WALK_KEYS)
        assert states[WALK_CURSOR] == "c1" and states[WALK_ETAG] == '"e2"'
        assert len(statements) == 1  # one statement for the six keys
        statements.clear()
        mirror.apply([], state=dict.fromkeys(WALK_KEYS, "x"))
        assert len(statements) == len(WALK_KEYS)  # one executemany: a step per key
        assert len({s.split("VALUES")[0] for s in statements}) == 1
        assert mirror.get_states(WALK_KEYS) == dict.fromkeys(WALK_KEYS, "x")
    finally:
        mirror.close()
