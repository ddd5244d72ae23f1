"""A throwaway PostgreSQL 15 cluster for `python -m bench server --postgres`: the tests'
own `PostgresCluster` (`tests/conftest.py`: initdb in a temp dir, loopback only, trust auth,
run as `postgres` when we are root, fsync off), so that the figures are measured on exactly
the cluster the tests run on, and what they measure is the server, not this machine's disk.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def throwaway_postgres() -> Iterator[str]:
    """The SQLAlchemy URL of an empty database on a fresh cluster, for the block's life."""
    from tests.conftest import PG_BIN, PostgresCluster  # pytest too: only for --postgres

    if not (PG_BIN / "initdb").exists():
        raise SystemExit(f"--postgres needs the PostgreSQL 15 binaries in {PG_BIN}")
    cluster = PostgresCluster()
    try:
        cluster.start()
        yield cluster.url("postgres")
    finally:
        cluster.stop()
