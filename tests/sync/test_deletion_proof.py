"""CONTRACT §9.2–§9.3 on the client: only the contract's 404 proves absence, a lost answer
is "not confirmed", one mirror per account, and nothing of a removed conversation is kept.

Every scenario runs against the real stub server; faults are injected in front of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

import pytest

from sync.cli import main as cli
from sync.delete.outcome import DeleteStatus
from sync.errors import ConversationGone
from sync.mirror import schema as mirror_schema
from sync.mirror import sqlite_driver
from sync.mirror import store as mirror_module
from sync.profile.profile import Profile
from sync.wire.models import SessionView
from tests.sync.helpers import Server, device, run

SESSION_PATH = r"/v1/sessions/ses_[^/]+"


# -- only the contract's own 404 proves absence ------------------------------------------------


def test_a_bare_404_on_delete_deletes_nothing_and_keeps_the_row(
    live_server: Any, tmp_path: Path
) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            victim = await server.create("behind a proxy")
            async with device(live_server.url, tmp_path / "a") as (engine, transport):
                await engine.reconcile()
                transport.add("DELETE", SESSION_PATH, "bare", status=404)
                outcome = await engine.delete(victim.id)
                assert outcome.status is DeleteStatus.FAILED and not outcome.removed
                assert "Nothing was deleted" in outcome.message
                assert victim.id in {r.id for r in await engine.rows()}
            assert await server.exists(victim.id)

    run(go())


def test_a_wrong_base_url_on_a_converge_server_is_no_proof_of_absence(
    live_server: Any, tmp_path: Path
) -> None:
    """`…/v1` as the base URL: every path is an unknown route, answered with the envelope's
    404; the delete asks the index at the same base URL before believing it."""

    async def go() -> None:
        async with Server(live_server.url) as server:
            victim = await server.create("wrong base URL")
            async with device(f"{live_server.url}/v1", tmp_path / "a") as (engine, _):
                await asyncio.to_thread(engine.mirror.apply, [victim])
                outcome = await engine.delete(victim.id)
                assert not outcome.removed and outcome.status is DeleteStatus.FAILED
                assert "does not serve" in outcome.message
                assert [r.id for r in await engine.rows()] == [victim.id]
            assert await server.exists(victim.id)

    run(go())


def test_a_bare_404_on_a_point_read_keeps_the_row_until_the_real_404(
    live_server: Any, tmp_path: Path
) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            victim = await server.create("pruned only on proof")
            async with device(live_server.url, tmp_path / "a") as (engine, transport):
                await engine.reconcile()
                await server.delete(victim.id)
                transport.add("GET", SESSION_PATH, "bare", status=404)
                report = await engine.reconcile()
                assert report.kept == (victim.id,) and report.pruned == ()
                assert report.point_read_error is not None
                assert victim.id in {r.id for r in await engine.rows()}
                report = await engine.reconcile()
                assert report.pruned == (victim.id,)

    run(go())


def test_converge_delete_against_a_server_that_answers_404_to_everything_fails(
    live_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async def make() -> SessionView:
        async with Server(live_server.url) as server:
            return await server.create("alive on the server")

    victim = run(make())
    profile = tmp_path / "p"
    args = ["--server", f"{live_server.url}/nowhere", "--token", "dev-alice"]
    code = cli.main(["delete", *args, "--profile", str(profile), victim.id, "--yes"])
    out, err = capsys.readouterr()
    assert code != 0
    assert "deleted" not in out and "Nothing was deleted" in err, (out, err)


# -- a lost answer is "not confirmed" ----------------------------------------------------------


def test_a_delete_whose_answer_was_lost_is_not_confirmed_and_the_next_sync_settles_it(
    live_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = tmp_path / "a"

    async def go() -> None:
        async with Server(live_server.url) as server:
            victim = await server.create("answer lost")
            async with device(live_server.url, profile) as (engine, transport):
                await engine.reconcile()
                transport.add("DELETE", SESSION_PATH, "lose_response")
                outcome = await engine.delete(victim.id)
                assert outcome.status is DeleteStatus.UNCONFIRMED and not outcome.removed
                assert "not confirmed" in outcome.message
                assert "Nothing was deleted" not in outcome.message
                assert await engine.unconfirmed_deletes() == {victim.id}
                assert victim.id in {r.id for r in await engine.rows()}

                code = cli.main(["ls", "--profile", str(profile)])
                assert code == 0
                assert "[delete not confirmed]" in capsys.readouterr().out

                report = await engine.reconcile()  # the server did delete it: 404 prunes
                assert report.pruned == (victim.id,)
                assert await engine.unconfirmed_deletes() == set()

    run(go())


def test_an_unconfirmed_delete_the_server_refused_is_unmarked_by_the_next_sync(
    live_server: Any, tmp_path: Path
) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            victim = await server.create("refused, answer lost")
            async with device(live_server.url, tmp_path / "a") as (engine, transport):
                await engine.reconcile()
                run_id = await server.start(victim.id, "/wait 30")
                transport.add("DELETE", SESSION_PATH, "lose_response")  # the 409 is lost
                outcome = await engine.delete(victim.id)
                assert outcome.status is DeleteStatus.UNCONFIRMED
                await engine.reconcile()
                assert await engine.unconfirmed_deletes() == set()
                assert victim.id in {r.id for r in await engine.rows()}
                await server.api.cancel_run(run_id)
                await server.wait_run(run_id)

    run(go())


def test_the_mirror_failing_after_a_204_still_says_the_server_deleted_it(
    live_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mirror_schema, "BUSY_TIMEOUT_MS", 100)

    async def go() -> None:
        async with Server(live_server.url) as server:
            victim = await server.create("mirror locked")
            async with device(live_server.url, tmp_path / "a") as (engine, _):
                await engine.reconcile()
                holder = sqlite_driver.connect(engine.mirror.path, isolation_level=None)
                try:
                    holder.execute("BEGIN EXCLUSIVE")
                    outcome = await engine.delete(victim.id)
                finally:
                    holder.execute("ROLLBACK")
                    holder.close()
                assert outcome.status is DeleteStatus.SERVER_ONLY and not outcome.removed
                assert outcome.message.startswith("The conversation was deleted from the server")
                assert not await server.exists(victim.id)
                report = await engine.reconcile()
                assert report.pruned == (victim.id,)

    run(go())


# -- one mirror per account --------------------------------------------------------------------


def test_a_sync_with_another_accounts_token_neither_shows_nor_prunes_this_accounts_rows(
    live_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async def make() -> tuple[str, str]:
        async with Server(live_server.url) as alice, Server(live_server.url, "dev-bob") as bob:
            return (await alice.create("alice's")).id, (await bob.create("bob's")).id

    alice_id, bob_id = run(make())
    profile = str(tmp_path / "p")
    base = ["--server", live_server.url, "--profile", profile]
    assert cli.main(["sync", *base, "--token", "dev-alice"]) == 0
    assert cli.main(["sync", *base, "--token", "dev-bob"]) == 0
    capsys.readouterr()

    def ls(token: str) -> list[str]:
        assert cli.main(["ls", "--json", *base, "--token", token]) == 0
        return [row["id"] for row in json.loads(capsys.readouterr().out)]

    assert ls("dev-alice") == [alice_id]
    assert ls("dev-bob") == [bob_id]
    # CONTRACT §9.3's own words: `converge ls --token T` (no server) shows T's account.
    assert cli.main(["ls", "--json", "--profile", profile, "--token", "dev-bob"]) == 0
    assert [row["id"] for row in json.loads(capsys.readouterr().out)] == [bob_id]
    # Several accounts and none named: `ls` refuses to guess.
    assert cli.main(["ls", "--profile", profile]) != 0
    assert "--token" in capsys.readouterr().err


def test_the_first_account_adopts_a_mirror_from_before_accounts(tmp_path: Path) -> None:
    stamp = "2026-11-29T10:00:00.000000Z"
    legacy = mirror_module.Mirror.open(tmp_path / "mirror.sqlite3")
    legacy.apply([SessionView("ses_old", "Kept across the upgrade", stamp, stamp, None, None)])
    legacy.close()
    profile = Profile.load(tmp_path, server="http://127.0.0.1:9", token="t", environ={})
    profile.ensure_dirs()
    assert not (tmp_path / "mirror.sqlite3").exists()
    adopted = mirror_module.Mirror.open(profile.mirror_path, create=False)
    try:
        assert [r.id for r in adopted.rows()] == ["ses_old"]
    finally:
        adopted.close()


# -- nothing kept of a removed conversation ----------------------------------------------------


def test_a_download_that_finishes_after_its_session_was_pruned_keeps_nothing(
    live_server: Any, tmp_path: Path
) -> None:
    async def go() -> None:
        async with Server(live_server.url) as server:
            victim = await server.create("/artifact late.txt bytes on their way")
            events = await server.api.session_events(victim.id)
            artifact_id = next(
                e.data["artifact_id"] for e in events.items if e.type == "artifact.created"
            )
            async with device(live_server.url, tmp_path / "a") as (engine, transport):
                await engine.reconcile()

                async def pruned_meanwhile(_request: object) -> None:
                    # A prune (or a delete on this device) lands while the bytes travel.
                    await asyncio.to_thread(engine.mirror.apply, (), [victim.id])

                transport.add("GET", r"/v1/artifacts/[^/]+/content", "hook", hook=pruned_meanwhile)
                with pytest.raises(ConversationGone):
                    await engine.artifact_file(artifact_id)
                assert await engine.row(victim.id) is None
                assert await asyncio.to_thread(engine.mirror.cached_file, artifact_id) is None
                assert list(engine.profile.cache_dir.iterdir()) == []

    run(go())


def test_the_title_filter_folds_non_ascii_capitals(tmp_path: Path) -> None:
    stamp = "2026-11-29T10:00:00.000000Z"
    mirror = mirror_module.Mirror.open(tmp_path / "m.sqlite3")
    try:
        mirror.apply(
            [
                SessionView("ses_1", "Écrire une lettre", stamp, stamp, None, None),
                SessionView("ses_2", "ÜBER STRASSE", stamp, stamp, None, None),
                SessionView("ses_3", "Plain", stamp, stamp, None, None),
            ]
        )
        assert [r.id for r in mirror.rows("écrire")] == ["ses_1"]
        assert [r.id for r in mirror.rows("ÉCRIRE")] == ["ses_1"]
        assert [r.id for r in mirror.rows("über straße")] == ["ses_2"]
    finally:
        mirror.close()


def test_ls_names_a_malformed_mirror_row_instead_of_failing_with_a_type_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = Profile.load(tmp_path, server="http://127.0.0.1:9", token="t", environ={})
    profile.ensure_dirs()
    stamp = "2026-11-29T10:00:00.000000Z"
    mirror = mirror_module.Mirror.open(profile.mirror_path)
    mirror.apply([SessionView("ses_bad", "fine for now", stamp, stamp, None, None)])
    mirror.close()
    # closing(): sqlite3's own context manager commits but leaves the connection open.
    with contextlib.closing(sqlite_driver.connect(profile.mirror_path)) as db, db:
        db.execute("UPDATE sessions SET title = ? WHERE id = 'ses_bad'", (b"\xff\xfe",))
    code = cli.main(["ls", "--json", "--profile", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code != 0 and out == ""
    assert "ses_bad" in err and "title" in err and "TypeError" not in err


def test_a_removal_under_a_reader_is_scrubbed_once_the_reader_goes(tmp_path: Path) -> None:
    """PITFALLS §10 on the client: the checkpoint after a removal cannot finish while a
    reader holds older frames; the row is removed all the same, the content leaves the
    files at the next try (here `scrub`; the next write or `close` also try)."""
    stamp = "2026-11-29T10:00:00.000000Z"
    needle = "Zq-mirror-reader-4b1d"
    mirror = mirror_module.Mirror.open(tmp_path / "m.sqlite3")
    try:
        mirror.apply([SessionView("ses_1", needle, stamp, stamp, None, None)])
        reader = sqlite_driver.connect(tmp_path / "m.sqlite3", isolation_level=None)
        try:
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM sessions").fetchone()
            mirror.apply((), ["ses_1"])
            assert mirror.rows() == []
            files = [p for p in tmp_path.iterdir() if needle.encode() in p.read_bytes()]
            assert files  # still in the WAL (or the main file awaiting the checkpoint)
        finally:
            reader.execute("ROLLBACK")
            reader.close()
        assert mirror.scrub()
        assert [p for p in tmp_path.iterdir() if needle.encode() in p.read_bytes()] == []
    finally:
        mirror.close()
