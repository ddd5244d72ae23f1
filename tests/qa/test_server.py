"""`ServerProcess`, the harness's stub server child: a real restart keeps database and port,
a child that dies on its own is noticed, and closing always stops it."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import httpx
import psutil
import pytest

from qa.server import ControlPlane, QaSetupError, ServerProcess
from tests.sync.helpers import run


def test_a_restart_keeps_the_port_and_the_database(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with ServerProcess(tmp_path / "server") as server:
            url = await server.start()
            control = ControlPlane(url)
            try:
                sid = await control.create_history("dev-alice", "before the restart")
                first_pid = server._proc.pid if server._proc else None
                assert await server.restart() == url
                assert server.starts == 2
                assert first_pid is not None and not psutil.pid_exists(first_pid)
                async with httpx.AsyncClient(base_url=url) as http:
                    response = await http.get(
                        f"/v1/sessions/{sid}", headers={"Authorization": "Bearer dev-alice"}
                    )
                assert response.status_code == 200
                assert response.json()["title"] == "before the restart"
            finally:
                await control.aclose()
            pid = server._proc.pid if server._proc else None
        assert pid is not None and not psutil.pid_exists(pid)  # closed: child gone

    run(scenario())


def test_a_child_that_dies_on_its_own_is_reported(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with ServerProcess(tmp_path / "server") as server:
            await server.start()
            assert server._proc is not None
            os.kill(server._proc.pid, signal.SIGKILL)
            await server._proc.wait()
            with pytest.raises(QaSetupError, match="exited unexpectedly"):
                server.check_alive()

    run(scenario())


def test_an_unreachable_server_is_a_setup_error() -> None:
    async def scenario() -> None:
        control = ControlPlane("http://127.0.0.1:9")  # nothing listens on the discard port
        try:
            with pytest.raises(QaSetupError, match="cannot reach"):
                await control.require()
        finally:
            await control.aclose()

    run(asyncio.wait_for(scenario(), 20))
