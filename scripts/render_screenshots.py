"""Render the window and its dialogs to docs/screenshots/*.png (offscreen, real data),
once in the Light and once in the Dark theme (`*_dark.png`, `ui.theme.theme`).

Starts the stub server with the demo seed in a temporary folder, opens a real engine and
the real window, runs a showcase conversation (a tool approval, an artifact, a memory, a
run left waiting), adds titles that are long, right-to-left, CJK and emoji, and grabs every
state the README shows: the main window (date sections, running reply), a narrow window
with a long title, the row's hover "⋯" menu, the delete confirmations (plain, running,
bulk), the 409 and unreachable dialogs, a bulk result in the status line, the offline
banner, Settings (with the appearance rows), the keyboard shortcuts, a conversation
deleted on another device, and the first launch.

CJK and emoji titles need fonts (`apt-get install fonts-noto-cjk fonts-noto-color-emoji`
on Debian); without them those glyphs render as boxes. Tests never depend on them.

    .venv/bin/python scripts/render_screenshots.py [OUTPUT_DIR]
"""

from __future__ import annotations

import asyncio
import os
import secrets
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
import render_pane_states  # this folder, beside this script
from PySide6.QtCore import QEvent, QItemSelectionModel, QPointF, Qt
from PySide6.QtGui import QCursor, QFont, QHoverEvent, QPainter
from PySide6.QtWidgets import QApplication, QWidget

from app.loop import ConvergeEventLoop
from server_stub.config import ServerSettings
from server_stub.runner import ServerThread
from sync.engine import SyncEngine
from sync.profile.profile import Profile
from sync.profile.token_store import TokenLocation
from sync.wire.models import Event
from ui.dialogs.dialogs import (
    build_delete_box,
    build_delete_running_box,
    build_run_in_progress_box,
    build_unreachable_box,
    results_summary,
)
from ui.dialogs.settings import ConnectionSettings, SettingsDialog, connection_in_use
from ui.dialogs.shortcuts import ShortcutsDialog
from ui.dialogs.trust_rows import token_storage_words
from ui.pane.pane import ConversationPane
from ui.sidebar.delegate import more_rect
from ui.text.code_highlight import warm_up
from ui.theme.stylesheet import stylesheet
from ui.theme.theme import Appearance, Theme, apply_appearance
from ui.window.controller import WindowController
from ui.window.main_window import MainWindow

TOKEN = "dev-alice"
ITINERARY = "Day 1: Alfama. Day 2: Belém. Day 3: Sintra."
EXTRA_TITLES = [
    (
        "Draft the migration plan for moving the billing service to the new cluster "
        "before the end of the quarter",
        0.2,
    ),
    ("تلخيص اجتماع الفريق حول خطة الإصدار القادم والمهام المتبقية", 30),
    ("週末の京都旅行の計画を立てる 🍵⛩️", 52),
    ("🎉 Plan Sam's surprise party 🎂", 200),
    ("Notes from the Q3 architecture review", 24 * 45),
    ("Tax documents checklist", 24 * 80),
]
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


#: A word of the demo's message text, for the search screenshot.
SEARCH_QUERY = "lisbon"


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
    now = time.time()
    for title, hours in EXTRA_TITLES:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(now - 3600 * hours))
        body = {"token": TOKEN, "messages": [message(title)], "updated_at": stamp}
        control.post("/_stub/sessions", json=body).raise_for_status()
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
    memory = client.post(
        f"/v1/sessions/{sid}/runs",
        json={"input": message("/remember Prefers a window seat")},
    ).json()
    wait_run(client, memory["id"], ("completed",))
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


def save_with_popup(window: QWidget, popup: QWidget, path: Path) -> None:
    """The window with a popup (a menu) painted where it opened."""
    pixmap = window.grab()
    painter = QPainter(pixmap)
    painter.drawPixmap(window.mapFromGlobal(popup.pos()), popup.grab())
    painter.end()
    if not pixmap.save(str(path)):
        raise RuntimeError(f"could not write {path}")
    print(f"wrote {path} ({pixmap.width()}×{pixmap.height()})")


async def show_box(app: QApplication, box: QWidget, path: Path) -> None:
    box.show()
    await settle(app)
    save(box, path)
    box.close()


async def render(
    app: QApplication,
    url: str,
    folder: Path,
    out: Path,
    suffix: str,
    stop_server: Callable[[], None],
) -> None:
    showcase = await asyncio.to_thread(prepare, url)
    window = MainWindow()
    window.resize(1180, 760)
    controller = WindowController(window, sync_interval=0, watch=False)
    profile = Profile(folder / "laptop", server=url, token=TOKEN)
    host = url.removeprefix("http://")

    def shot(name: str) -> Path:
        return out / f"{name}{suffix}.png"

    empty = MainWindow()
    empty.resize(1180, 760)
    empty.set_status("Starting the built-in demo server…")
    empty.show()
    await settle(app)
    save(empty, shot("first_launch_empty"))
    empty.close()

    engine = await SyncEngine.open(profile)
    try:
        window.set_where("alice", host, str(profile.root))
        window.show()
        controller.in_use = connection_in_use(url, "alice", str(profile.root), bundled=False)
        controller.settings = ConnectionSettings(url, TOKEN)
        controller.attach(engine, connect=False)
        await engine.reconcile()
        await engine.content.wait_idle()  # transcripts mirrored: search and offline reading
        await controller.refresh_now()
        index = window.model.index_of(showcase)
        window.list.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect
        )
        await controller.wait_idle()
        await settle(app, 1.2)
        save(window, shot("main_window"))
        if not suffix:  # keyboard focus, light: a current row's ring, then Send's
            quiet = window.model.index(index.row() + 1, 0)  # no reply running: Send shows
            window.list.selectionModel().setCurrentIndex(
                quiet, QItemSelectionModel.SelectionFlag.ClearAndSelect
            )
            await controller.wait_idle()
            window.activateWindow()
            while not window.isActiveWindow():
                await asyncio.sleep(0.02)
            window.list.setFocus(Qt.FocusReason.TabFocusReason)
            await settle(app, 0.6)
            save(window, shot("focus_sidebar_row"))
            window.pane.send_button.setFocus(Qt.FocusReason.TabFocusReason)
            await settle(app)
            save(window, shot("focus_send_button"))
            window.list.selectionModel().setCurrentIndex(
                index, QItemSelectionModel.SelectionFlag.ClearAndSelect
            )
            await controller.wait_idle()
            window.list.clearFocus()
            await settle(app, 0.6)

        # Search as you type: titles and message text, the matched words highlighted.
        for query in (SEARCH_QUERY, ""):
            window.filter.setText(query)
            while controller.search.shown_for != query:
                await asyncio.sleep(0.02)
            await controller.wait_idle()
            await settle(app, 0.5)
            if query:
                save(window, shot("search_results"))

        # The row's hover "⋯" and its menu, on another row.
        other_index = window.model.index(index.row() + 2, 0)
        rect = window.list.visualRect(other_index)
        # Offscreen has no pointer: tell the view the pointer is over the row (hover).
        viewport = window.list.viewport()
        viewport.setAttribute(Qt.WidgetAttribute.WA_Hover, True)
        where = QPointF(rect.center())
        for kind in (QEvent.Type.HoverEnter, QEvent.Type.HoverMove):
            QApplication.sendEvent(viewport, QHoverEvent(kind, where, where, QPointF(-1, -1)))
        menu = window.row_menu(other_index)
        menu.popup(window.list.viewport().mapToGlobal(more_rect(rect).bottomLeft()))
        await settle(app, 0.5)
        save_with_popup(window, menu, shot("row_menu"))
        menu.close()
        away = QPointF(-1, -1)
        QApplication.sendEvent(
            viewport, QHoverEvent(QEvent.Type.HoverLeave, away, where, QPointF(-1, -1))
        )
        QCursor.setPos(5000, 5000)
        window.list.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect
        )
        await controller.wait_idle()

        title = window.model.index(index.row(), 0).data()
        await show_box(app, build_delete_box(window, [title], export=True), shot("delete_dialog"))
        row = window.model.find(showcase)
        run_id = row.active_run_id if row else None
        await show_box(
            app, build_delete_running_box(window, title, run_id), shot("delete_running_dialog")
        )
        await show_box(
            app, build_run_in_progress_box(window, title, run_id), shot("run_in_progress_dialog")
        )
        await show_box(
            app,
            build_unreachable_box(window, [title], "Connection refused"),
            shot("unreachable_dialog"),
        )
        titles = [r.title or "Untitled conversation" for r in window.model.sessions()[1:4]]
        await show_box(app, build_delete_box(window, titles), shot("bulk_delete_dialog"))
        # The sentence a desktop with a keychain shows (these machines have none).
        stored = token_storage_words(TokenLocation("keychain"))
        settings = SettingsDialog(
            window, controller.settings, controller.in_use, token_storage=stored
        )
        await show_box(app, settings, shot("settings_dialog"))
        # The built-in demo server in use: its token, masked, with Show and Copy.
        demo = SettingsDialog(
            window,
            ConnectionSettings("", ""),
            connection_in_use("http://127.0.0.1:8799", "alice", "/tmp/device1", bundled=True),
            demo_token=secrets.token_urlsafe(32),
        )
        await show_box(app, demo, shot("settings_demo_token"))
        # F1: every shortcut of the window's actions.
        await show_box(app, ShortcutsDialog(window), shot("shortcuts_dialog"))

        # A bulk result in the status line (the words the delete flow writes there).
        headline, details = results_summary(
            [
                (titles[0], True, "Deleted"),
                (titles[1], False, "Not deleted: a run is in progress (stop it first)"),
                (titles[2], True, "Deleted"),
            ]
        )
        window.set_status(headline, error=True, details=details)
        await settle(app)
        save(window, shot("bulk_result"))

        # Offline: the banner, Send and Delete disabled (the controller's own calls), on a
        # conversation with no reply running (so Send, not Stop, is shown).
        window.list.selectionModel().setCurrentIndex(
            other_index, QItemSelectionModel.SelectionFlag.ClearAndSelect
        )
        await controller.wait_idle()
        await settle(app, 0.5)
        window.set_offline(True, f"Cannot reach the server at {url}.")
        window.set_status(
            "Offline – showing saved history", details=f"Cannot reach the server at {url}."
        )
        await settle(app)
        save(window, shot("offline"))
        window.set_offline(False)
        window.set_status("Synced just now")

        # A narrow window (two side by side on a small screen) with a long title open.
        long_id = next(
            r.id
            for r in window.model.sessions()
            if (r.title or "").startswith("Draft the migration")
        )
        window.resize(690, 640)
        window.list.selectionModel().setCurrentIndex(
            window.model.index_of(long_id), QItemSelectionModel.SelectionFlag.ClearAndSelect
        )
        await controller.wait_idle()
        await settle(app, 0.8)
        save(window, shot("narrow_long_title"))
        window.resize(1180, 760)
        window.list.selectionModel().setCurrentIndex(
            window.model.index_of(showcase), QItemSelectionModel.SelectionFlag.ClearAndSelect
        )
        await controller.wait_idle()

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
        save(window, shot("deleted_elsewhere"))

        # The server gone: a conversation opens from the copy saved on this device.
        stop_server()
        await engine.reconcile()
        saved = next(r.id for r in window.model.sessions() if r.id != showcase)
        window.list.selectionModel().setCurrentIndex(
            window.model.index_of(saved), QItemSelectionModel.SelectionFlag.ClearAndSelect
        )
        await controller.wait_idle()
        await settle(app, 0.8)
        save(window, shot("offline_saved_copy"))
    finally:
        await controller.shutdown()
        await engine.close()
        window.close()


_QUESTIONS = [
    "Which tram goes from Ribeira to Foz?",
    "And how often does it run in the evening?",
    "Is there a ticket that covers the boats too?",
]
_ANSWERS = [
    "Tram 1 runs along the river from the Infante stop to Foz do Douro; the ride takes about "
    "twenty minutes and the old cars are worth it.",
    "Every twenty minutes until about seven, then every half hour. The last car leaves Foz "
    "at 19:40 in winter.",
    "The Andante Tour card covers the metro, buses and trams, but not the river cruises: "
    "those sell their own tickets at the quay.",
]


def transcript(count: int, running: bool) -> list[Event]:
    """A long synthetic conversation (the pane's own shots need no server)."""
    at = "2026-11-30T09:14:13.000000Z"
    events: list[Event] = []

    def add(kind: str, data: dict[str, Any], run: str) -> None:
        events.append(Event("ses_shot", run, len(events) + 1, kind, at, data))

    for n in range(count):
        run = f"run_{n}"
        add("message.user", message(f"{_QUESTIONS[n % 3]} ({n + 1})"), run)
        reply = {"role": "assistant", "content": [{"type": "text", "text": _ANSWERS[n % 3]}]}
        add("message.assistant", reply, run)
        add("run.completed", {}, run)
    add("message.user", message("Plan the boats for Saturday, and save it as a file."), "run_x")
    departures = {"departures": ["10:00", "11:30", "15:00"]}
    tool = {"tool": "timetable", "status": "succeeded", "output": departures}
    add("tool.invocation", tool, "run_x")
    add("artifact.created", {"artifact_id": "art_shot", "name": "saturday-boats.md"}, "run_x")
    if running:
        add("approval.requested", {"approval_id": "apr_shot", "tool": "calendar"}, "run_x")
        piece = "The six-bridges cruise leaves the Ribeira quay at 10:00 and 15:00; I can add"
        add("message.assistant.delta", {"text": piece}, "run_x")
    else:
        words = (
            "**Saturday**, as planned:\n\n"
            "| Time | What |\n|---|---|\n"
            "| 10:00 | Six-bridges cruise from Ribeira |\n"
            "| 13:00 | Lunch in Gaia |\n"
            "| 15:00 | Tram 1 to *Foz do Douro* |\n\n"
            "For your calendar:\n\n"
            "```python\nfrom datetime import datetime\n\n"
            "cruise = datetime(2026, 12, 5, 10, 0)  # Ribeira quay\n```\n\n"
            "It is all in `saturday-boats.md`."
        )
        final = {"role": "assistant", "content": [{"type": "text", "text": words}]}
        add("message.assistant", final, "run_x")
        add("run.completed", {}, "run_x")
    return events


async def render_transcripts(app: QApplication, out: Path, suffix: str) -> None:
    """The conversation pane alone: a long conversation (1,500 turns, at its bottom), a
    running reply with Stop, and the same scrolled up with "Jump to latest"."""
    for name, running, scrolled in (
        ("pane_long_conversation", False, False),
        ("pane_running_reply", True, False),
        ("pane_jump_to_latest", True, True),
    ):
        pane = ConversationPane()
        pane.setStyleSheet(stylesheet(suffix == "_dark"))
        pane.resize(1180, 760)
        pane.show_session("ses_shot", "Porto by tram and boat", "2026-11-30T09:14:13.000000Z")
        events = transcript(1_500, running)
        pane.set_events(events)
        pane.set_running(running)
        pane.show()
        await settle(app, 0.5)
        if scrolled:
            bar = pane.transcript.verticalScrollBar()
            bar.setValue(bar.maximum() - 700)
            await settle(app, 0.2)
            more = {"text": " the return by tram 1."}
            kind = "message.assistant.delta"
            pane.append_event(Event("ses_shot", "run_x", len(events) + 1, kind, "", more))
            await settle(app, 0.3)
        save(pane, out / f"{name}{suffix}.png")
        pane.close()
        pane.deleteLater()


@contextmanager
def demo_server() -> Iterator[tuple[ServerThread, Path]]:
    """The stub with the demo seed and the control plane, on a thread, in a folder of its
    own; stopped (and the folder removed) on the way out."""
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
            yield server, folder
        finally:
            server.stop()


def screenshot_app() -> tuple[QApplication, Path]:
    """The application every shot is taken in (10 pt, the pointer out of the way), and the
    output folder (the first argument, else docs/screenshots), created."""
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
    # The window loads the code lexers on a worker thread and shows a block uncoloured
    # until its lexer is in: a shot is taken with all of them loaded.
    warm_up()
    return app, out


def main() -> int:
    app, out = screenshot_app()
    loop = ConvergeEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        # Through the theme setting, as a user's choice of Light or Dark applies.
        for suffix, theme in (("", Theme.LIGHT), ("_dark", Theme.DARK)):
            apply_appearance(app, Appearance(theme))
            with demo_server() as (server, folder):
                loop.run_until_complete(render(app, server.url, folder, out, suffix, server.stop))
                loop.run_until_complete(render_transcripts(app, out, suffix))
            if not suffix:  # the chat loop's states, light only, on a server of their own
                with demo_server() as (server, folder):
                    loop.run_until_complete(render_pane_states.render(server.url, folder, out))
    finally:
        loop.shut_down()
    return 0


if __name__ == "__main__":
    sys.exit(main())
