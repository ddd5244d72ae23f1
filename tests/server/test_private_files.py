"""The server's files are 0600 and its folders 0700 whatever the umask."""

from __future__ import annotations

import argparse
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from server_stub import cli
from server_stub.storage.singleprocess import sqlite_path
from tests.conftest import LiveServer
from tests.server.conftest import new_session, run_to_end


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The common desktop umask, under which default files are world-readable."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_database_wal_and_objects_are_private_under_umask_022(
    umask_022: None, start_server: Callable[..., LiveServer]
) -> None:
    server = start_server()
    alice = server.client("dev-alice")
    sid = new_session(alice)
    run_to_end(alice, sid, "/artifact notes.txt private words")
    store = server.settings.resolved_artifacts_dir()
    assert _mode(store) == 0o700
    objects = [p for p in store.rglob("*")]
    assert any(p.is_file() for p in objects)
    for path in objects:
        assert _mode(path) == (0o700 if path.is_dir() else 0o600), path
    database = sqlite_path(server.settings.database_url)
    if database is None:
        return  # PostgreSQL keeps its own files (0600 under its data directory)
    companions = [database.with_name(database.name + s) for s in ("-wal", "-shm", ".lock")]
    for path in [database, *companions]:
        assert path.exists(), path
        assert _mode(path) == 0o600, path


def test_the_default_data_directory_is_private_under_umask_022(
    umask_022: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    args: argparse.Namespace = cli.build_parser().parse_args([])
    settings = cli.settings_from_args(args)
    data_dir = tmp_path / "share" / "converge-server"
    assert settings.database_url.startswith(f"sqlite:///{data_dir}")
    assert _mode(data_dir) == 0o700
