"""The client when the server's database really fails (CONTRACT §10.2).

A real stub on a real PostgreSQL cluster that is halted: the stub answers 503
`unavailable` with `Retry-After`, and the engine says the server is having trouble, neither
offline nor in error, keeps every row, and concludes again once the cluster is back.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sync.errors import Unavailable
from sync.events import EngineState
from tests.conftest import PostgresCluster, ServerFactory
from tests.sync.helpers import Server, device, run

TROUBLE = "The server is having trouble (its database is unavailable); Converge will try again."


@pytest.mark.postgres
def test_a_halted_database_leaves_the_engine_having_trouble_then_it_syncs_again(
    postgres_cluster: PostgresCluster, server_factory: ServerFactory, tmp_path: Path
) -> None:
    server = server_factory(
        backend="postgres",
        database_url=postgres_cluster.new_database(),
        artifacts_dir=tmp_path / "objects",
    )

    async def scenario() -> None:
        async with Server(server.url) as stub:
            made = await stub.create("before the outage")
            async with device(server.url, tmp_path / "a") as (engine, _):
                assert (await engine.reconcile()).ok
                postgres_cluster.halt()
                try:
                    report = await engine.reconcile()
                finally:
                    postgres_cluster.resume()
                assert isinstance(report.error, Unavailable), report.error
                assert engine.status.state is EngineState.TROUBLE
                assert engine.status.message == TROUBLE
                assert await engine.row(made.id) is not None
                again = await engine.reconcile()
                assert again.ok, again.problem
                back = engine.status
                assert back.state is EngineState.IDLE

    run(scenario(), timeout=120)
