"""Render the window and its dialogs to docs/screenshots/*.png (offscreen, real data).

Starts the bundled stub server with the demo seed in a temporary folder, opens a real
engine and the real window, runs a showcase conversation (a tool approval, an artifact),
and grabs: the main window with that conversation open, the delete confirmation, the
run-in-progress dialog (409), the "couldn't reach the server" dialog, the pane of a
conversation deleted on another device, and the first-launch empty state.

    .venv/bin/python scripts/render_screenshots.py [OUTPUT_DIR]
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
from PySide6.QtCore import QItemSelectionModel
from PySide6.QtGui import QCursor, QFont
from PySide6.QtWidgets import QApplication, QWidget

from app.loop import ConvergeEventLoop
from server_stub.config import ServerSettings
from server_stub.runner import ServerThread
from sync.engine import SyncEngine
from sync.profile import Profile
from ui.controller import WindowController
from ui.dialogs import (
    build_delete_box,
    build_run_in_progress_box,
    build_unreachable_box,
)
from ui.main_window import MainWindow

TOKEN = "dev-alice"
ITINERARY = "Day 1: Alfama. Day 2: Belém. Day 3: Sintra."
FALLBACK_TITLES = [
    "Quarterly planning notes for the platform team",
    "Draft a reply to the landlord about the heating",
    "Compare three laptops under 1,500 €",
    "Recipe ideas with leftover pumpkin",
    "Summarise the ADR on deletion",
    "Trip to Lisbon: three-day itinerary",
    "Debug the flaky integration test",
    "Birthday gift ideas for Sam",
]


def message(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def wait_run(client: httpx.Client, run_id: str, statuses: tuple[str, ...]) -> None:
    deadline = time.monotonic() + 30
    while client.get(f"/v1/runs/{run_id}").json()["status"] not in statuses:
        if time.monotonic() > deadline:
            raise RuntimeError(f"run {run_id} did not reach {statuses}")
        time.sleep(0.05)


def prepare(url: str) -> str:
    """Ensure a realistic sidebar and build the showcase conversation; return its id."""
    client = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"})
    control = httpx.Client(base_url=url)
    existing = client.get("/v1/sessions", params={"limit": 50}).json()["items"]
    if len(existing) < 6:
        now = time.time()
        for i, title in enumerate(FALLBACK_TITLES):
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(now - 3600 * 7 * i - 90))
            body = {"token": TOKEN, "messages": [message(title)], "updated_at": stamp}
            control.post("/_stub/sessions", json=body).raise_for_status()
        legacy = {"token": TOKEN, "messages": [message("   ")], "legacy": True}
        control.post("/_stub/sessions", json=legacy)
    created = client.post("/v1/sessions", json={}).json()
    sid = created["id"]
    first = client.post(
        f"/v1/sessions/{sid}/runs",
        json={"input": message("Find flights from Berlin to Lisbon for the 12th of December")},
    ).json()
    wait_run(client, first["id"], ("completed",))
    second = client.post(
        f"/v1/sessions/{sid}/runs", json={"input": message("/approve flight_search")}
    ).json()
    wait_run(client, second["id"], ("waiting_for_approval",))
    approval = next(
        e["data"]["approval_id"]
        for e in client.get(f"/v1/runs/{second['id']}/events").json()["items"]
        if e["type"] == "approval.requested"
    )
    client.post(f"/v1/approvals/{approval}/decision", json={"decision": "approve"})
    wait_run(client, second["id"], ("completed",))
    third = client.post(
        f"/v1/sessions/{sid}/runs",
        json={
            "input": message("/artifact itinerary.txt Day 1: Alfama. Day 2: Belém. Day 3: Sintra.")
        },
    ).json()
    wait_run(client, third["id"], ("completed",))
    fourth = client.post(
        f"/v1/sessions/{sid}/runs", json={"input": message("/approve book_hotel")}
    ).json()
    wait_run(client, fourth["id"], ("waiting_for_approval",))
    return str(sid)


def save(widget: QWidget, path: Path) -> None:
    pixmap = widget.grab()
    if not pixmap.save(str(path)):
        raise RuntimeError(f"could not write {path}")
    print(f"wrote {path} ({pixmap.width()}×{pixmap.height()})")


async def settle(app: QApplication, seconds: float = 0.3) -> None:
    """Let layouts, the batched list layout and repaints finish (the loop runs Qt's events;
    never call processEvents inside a coroutine, PITFALLS §4)."""
    await asyncio.sleep(seconds)


async def render(app: QApplication, url: str, folder: Path, out: Path) -> None:
    showcase = await asyncio.to_thread(prepare, url)
    window = MainWindow()
    window.resize(1180, 760)
    controller = WindowController(window, sync_interval=0)
    profile = Profile(folder / "profile", server=url, token=TOKEN)

    empty = MainWindow()
    empty.resize(1180, 760)
    empty.set_status("Starting the built-in demo server…")
    empty.show()
    await settle(app)
    save(empty, out / "first_launch_empty.png")
    empty.close()

    engine = await SyncEngine.open(profile)
    try:
        window.show()
        controller.attach(engine, connect=False)
        await engine.reconcile()
        await controller.refresh_now()
        index = window.model.index_of(showcase)
        window.list.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect
        )
        await controller.wait_idle()
        await settle(app, 0.8)
        save(window, out / "main_window.png")

        title = window.model.index(index.row(), 0).data()
        box = build_delete_box(window, [title])
        box.show()
        await settle(app)
        save(box, out / "delete_dialog.png")
        box.close()

        row = window.model.find(showcase)
        box = build_run_in_progress_box(window, title, row.active_run_id if row else None)
        box.show()
        await settle(app)
        save(box, out / "run_in_progress_dialog.png")
        box.close()

        box = build_unreachable_box(window, [title], "Connection refused")
        box.show()
        await settle(app)
        save(box, out / "unreachable_dialog.png")
        box.close()

        titles = [window.model.index(i, 0).data() for i in range(1, 4)]
        box = build_delete_box(window, titles)
        box.show()
        await settle(app)
        save(box, out / "bulk_delete_dialog.png")
        box.close()

        # Another device deletes the open conversation: cancel its run, then delete.
        other = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"})
        if row and row.active_run_id:
            other.post(f"/v1/runs/{row.active_run_id}/cancel")
            await asyncio.to_thread(wait_run, other, row.active_run_id, ("cancelled",))
        await controller.wait_idle()
        other.delete(f"/v1/sessions/{showcase}").raise_for_status()
        await engine.reconcile()
        await controller.refresh_now()
        await settle(app, 0.5)
        save(window, out / "deleted_elsewhere.png")
    finally:
        await controller.shutdown()
        await engine.close()
        window.close()


def main() -> int:
    out = (
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else Path(__file__).resolve().parent.parent / "docs" / "screenshots"
    )
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([sys.argv[0]])
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    QCursor.setPos(5000, 5000)  # no hover highlight where the pointer would rest
    font = QFont(app.font())
    font.setPointSizeF(10.0)
    app.setFont(font)
    loop = ConvergeEventLoop(app)
    asyncio.set_event_loop(loop)
    with tempfile.TemporaryDirectory(prefix="converge-shots-") as tmp:
        folder = Path(tmp)
        settings = ServerSettings(
            database_url=f"sqlite:///{folder / 'server.sqlite3'}",
            artifacts_dir=folder / "objects",
            seed="demo",
            control=True,
            agent_delay=0.0,
        )
        server = ServerThread(settings).start()
        try:
            loop.run_until_complete(render(app, server.url, folder, out))
        finally:
            server.stop()
            loop.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
