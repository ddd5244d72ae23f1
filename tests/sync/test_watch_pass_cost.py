"""What one change on the server costs a watching device's mirror: every index commit wakes
every watching device, and their CPU bounds how fast a fleet converges (`python -m bench
device_cost`). Counted, not timed: transactions and statements do not depend on the load."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sync.events import TriggerReason
from tests.sync.helpers import Server, device, run
from tests.sync.test_watch_live import Inserts, _held, _removed, _until


def _counted(mirror: Any) -> list[tuple[str, list[str]]]:
    """From now until `del mirror._transaction`: each transaction's kind and statements
    (not those FTS5 runs inside one of them, traced with a `--` prefix)."""
    transaction = mirror._transaction
    begun: list[tuple[str, list[str]]] = []

    def counted(pool: list[Any], begin: str) -> Any:
        statements: list[str] = []
        begun.append(("read" if pool is mirror._readers else "write", statements))
        context = transaction(pool, begin)

        class Traced:
            def __enter__(self) -> Any:
                conn = context.__enter__()
                conn.set_trace_callback(
                    lambda sql: None if sql.startswith("--") else statements.append(sql)
                )
                self.conn = conn
                return conn

            def __exit__(self, *exc: Any) -> Any:
                self.conn.set_trace_callback(None)
                return context.__exit__(*exc)

        return Traced()

    mirror._transaction = counted
    return begun


async def _watching_counted(engine: Any, live_server: Any) -> tuple[Any, list[Any]]:
    """The device synced, its transcripts fetched, its watch held; then its mirror's
    transactions counted (`_counted`)."""
    await engine.reconcile(TriggerReason.CONNECT)
    await engine.content.wait_idle()
    engine.start_watch()
    await _until(lambda: _held(live_server) == 1, "the watch to be held")
    mirror: Any = engine.mirror
    return mirror, _counted(mirror)


def test_a_change_costs_a_watching_device_one_read_and_one_lean_write_of_its_mirror(
    live_server: Any, tmp_path: Path
) -> None:
    """The watch asks again with the ETag its pass just stored, without reading it back; the
    one-page walk that concludes at once writes no position it would clear in the same
    transaction, and clears the walk's keys in one statement."""

    async def go() -> None:
        async with Server(live_server.url) as server:
            for _ in range(3):
                await server.create()
            async with device(live_server.url, tmp_path / "a") as (engine, _):
                mirror, begun = await _watching_counted(engine, live_server)
                # The content phase is the pass's follower, counted by device_cost: held.
                content_kick = engine.content.kick
                engine.content.kick = lambda: None  # type: ignore[method-assign]
                inserts = Inserts(engine)
                try:
                    made = await server.create()
                    await inserts.of(made.id)
                    await _until(lambda: _held(live_server) == 1, "the next watch to be held")
                finally:
                    del mirror._transaction
                    engine.content.kick = content_kick  # type: ignore[method-assign]
                writes = [statements for kind, statements in begun if kind == "write"]
                state_writes = [sql for sql in writes[0] if "sync_state" in sql]
                # One read (the pass's start) and one write; in it, three statements of
                # state: the change sequence, the ETag, the clear.
                assert ([kind for kind, _ in begun], len(state_writes)) == (["read", "write"], 3)
                assert not any("walk_seen" in sql for sql in state_writes if "INSERT" in sql)
                assert (await engine.reconcile()).not_modified  # the ETag was stored

    run(go())


def test_a_conversation_fetched_under_the_budget_costs_one_read_and_one_write(
    live_server: Any, tmp_path: Path
) -> None:
    """The content phase a change kicks: which transcripts are behind (a read), the new
    events stored (a write). The bytes held are read in the store's transaction; only
    past the budget does an eviction take a write of its own."""

    async def go() -> None:
        async with Server(live_server.url) as server:
            session = await server.create("hi")
            async with device(live_server.url, tmp_path / "a") as (engine, _):
                await engine.reconcile(TriggerReason.CONNECT)
                await engine.content.wait_idle()
                await server.wait_run(await server.start(session.id, "hello"))
                content_kick = engine.content.kick
                engine.content.kick = lambda: None  # type: ignore[method-assign]
                try:
                    assert (await engine.reconcile()).updated == (session.id,)
                finally:
                    engine.content.kick = content_kick  # type: ignore[method-assign]
                mirror: Any = engine.mirror
                begun = _counted(mirror)
                try:
                    content_kick()
                    await engine.content.wait_idle()
                finally:
                    del mirror._transaction
                assert engine.content.last_report is not None
                assert engine.content.last_report.fetched == [session.id]
                assert [kind for kind, _ in begun] == ["read", "write"]

    run(go())


def test_a_delete_costs_a_watching_device_one_read_and_one_write_of_its_mirror(
    live_server: Any, tmp_path: Path
) -> None:
    """A delete is a row missing from the watch's page: the pass point-reads it before it
    writes, so the page, the prune and the ETag are one write, with no walk position
    written to be cleared; and a pass that only pruned starts no content phase (nothing
    it removed can leave a transcript behind)."""

    async def go() -> None:
        async with Server(live_server.url) as server:
            ids = [(await server.create("hi")).id for _ in range(3)]
            async with device(live_server.url, tmp_path / "a") as (engine, _):
                mirror, begun = await _watching_counted(engine, live_server)
                phases: list[object] = []
                content_kick = engine.content.kick
                engine.content.kick = lambda: phases.append(content_kick())  # type: ignore[method-assign]
                gone = _removed(engine, ids[1])
                try:
                    await server.delete(ids[1])
                    await gone
                    await _until(lambda: _held(live_server) == 1, "the next watch to be held")
                    await engine.content.wait_idle()
                finally:
                    del mirror._transaction
                    engine.content.kick = content_kick  # type: ignore[method-assign]
                writes = [statements for kind, statements in begun if kind == "write"]
                assert [kind for kind, _ in begun] == ["read", "write"]
                assert not any("walk_" in sql for sql in writes[0] if "INSERT" in sql)
                assert phases == []
                assert [r.id for r in await engine.rows()] == [ids[2], ids[0]]
                assert (await engine.reconcile()).not_modified  # the ETag was stored

    run(go())
