"""Render the conversation pane's chat-loop and failure states to docs/screenshots (light):
a bad token named in the pane with Open Settings (`pane_bad_token.png`), and a running reply
that streams only keep-alives, with Stop and "Replying… 12 s" (`pane_running_stop.png`).

Real stub server, real engine, real window, offscreen. The running shot waits 12 s of the
run on purpose (the indicator counts real seconds). `scripts/render_screenshots.py` (`make
screenshots`) calls `render` with a demo server of its own, in its light pass.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from sync.engine import SyncEngine
from sync.profile.profile import Profile
from sync.wire.models import text_message
from ui.window.controller import WindowController
from ui.window.main_window import MainWindow


async def _until(condition: object, seconds: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition():  # type: ignore[operator]
        if loop.time() > deadline:
            raise TimeoutError("the pane never reached the state to render")
        await asyncio.sleep(0.05)


async def _window(
    url: str, folder: Path, token: str
) -> tuple[MainWindow, WindowController, SyncEngine]:
    window = MainWindow()
    window.resize(1180, 720)
    controller = WindowController(window, sync_interval=0, watch=False)
    engine = await SyncEngine.open(Profile(folder, server=url, token=token), retry_attempts=1)
    window.set_where("alice", url.removeprefix("http://"), str(folder))
    window.show()
    controller.attach(engine, connect=False)
    return window, controller, engine


async def render(url: str, folder: Path, out: Path) -> None:
    # A token the server does not know: the sidebar and the pane say so, with Open Settings.
    window, controller, engine = await _window(url, folder / "stranger", "not-a-known-token")
    try:
        await engine.reconcile()
        await _until(lambda: window.pane.notice.failure is not None)
        await asyncio.sleep(0.2)
        window.grab().save(str(out / "pane_bad_token.png"))
    finally:
        await controller.shutdown()
        await engine.close()
        window.close()

    # A reply that streams only keep-alive dots (`/wait 30`): Stop and the counting indicator.
    with httpx.Client(base_url=url, headers={"Authorization": "Bearer dev-alice"}) as api:
        created = api.post("/v1/sessions", json={}).json()
        first = {"input": text_message("Summarise the Lisbon trip notes, take your time.")}
        api.post(f"/v1/sessions/{created['id']}/runs", json=first)
    window, controller, engine = await _window(url, folder / "laptop", "dev-alice")
    try:
        await engine.reconcile()
        await controller.refresh_now()
        await asyncio.sleep(1.0)
        window.select_session(created["id"])
        await controller.wait_idle()
        pane = window.pane
        pane.composer.setPlainText("/wait 30")
        pane.send_button.click()
        await _until(lambda: "12 s" in pane.indicator.text(), 40)
        window.grab().save(str(out / "pane_running_stop.png"))
        pane.stop_button.click()
        await _until(lambda: not pane.stop_button.isVisible())
    finally:
        await controller.shutdown()
        await engine.close()
        window.close()
