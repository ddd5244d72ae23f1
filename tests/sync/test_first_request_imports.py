"""The engine's first request imports nothing: httpcore reached anyio's asyncio backend at
the first request and anyio imported it then, about thirty modules (25-40 ms) on the event
loop's thread, which in the window is the UI thread. A fresh interpreter, so that nothing
the test process imported before hides it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import LiveServer

CHILD = """
import asyncio, json, sys
from pathlib import Path
from sync.engine import SyncEngine
from sync.profile.profile import Profile

async def main(url, folder):
    engine = await SyncEngine.open(Profile(Path(folder), server=url, token="dev-alice"))
    before = set(sys.modules)
    report = await engine.reconcile()
    await engine.close()
    print(json.dumps({"ok": report.ok, "imported": sorted(set(sys.modules) - before)}))

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def test_the_engines_first_request_imports_no_module_on_the_event_loop(
    live_server: LiveServer, tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, live_server.url, str(tmp_path / "profile")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["ok"]
    assert seen["imported"] == []
