"""The window against a real stub server and a real engine (no mocks): sidebar order,
reconcile diffs, triggers, the delete flows, and the deleted-elsewhere pane."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QGuiApplication

from sync import Event
from sync.events import TriggerReason
from tests.ui.conftest import DEADLINE, Harness, run, until
from ui.dialogs.dialogs import CANCEL, DELETE_EVERYWHERE, RETRY, STOP_RUN_AND_DELETE, UNREACHABLE
from ui.pane.pane import DELETED_ELSEWHERE
from ui.pane.transcript_model import Kind
from ui.sidebar.model import SessionListModel
from ui.text.plain import isolate

COLOURED = '<span style="color:'


def ts(hour: int, minute: int = 0) -> str:
    return f"2026-11-29T{hour:02d}:{minute:02d}:00.000000Z"


def test_sidebar_shows_the_mirror_in_activity_order(harness: Harness) -> None:
    old = harness.create("Oldest plan", ts(8))
    new = harness.create("Newest plan", ts(11))
    mid = harness.create("Middle plan", ts(9))
    run(harness.loop, harness.sync())
    assert harness.ids() == [new, mid, old]
    model = harness.window.model
    assert [model.index(i, 0).data() for i in range(3)] == [
        "Newest plan",
        "Middle plan",
        "Oldest plan",
    ]


def test_reconcile_inserts_moves_and_removes_rows_while_the_selection_stays(
    harness: Harness,
) -> None:
    a = harness.create("Alpha", ts(8))
    b = harness.create("Bravo", ts(9))
    c = harness.create("Charlie", ts(10))
    d = harness.create("Delta", ts(11))
    run(harness.loop, harness.sync())
    assert harness.ids() == [d, c, b, a]
    harness.select(c)
    model = harness.window.model
    resets: list[None] = []
    model.modelReset.connect(lambda: resets.append(None))
    moves: list[None] = []
    model.rowsMoved.connect(lambda *_: moves.append(None))

    other = harness.api()  # another device
    assert other.delete(f"/v1/sessions/{b}").status_code == 204
    e = harness.create("Echo", ts(7))
    run_view = other.post(f"/v1/sessions/{a}/runs", json={"input": _msg("again")}).json()
    _wait_run_done(harness, run_view["id"])
    run(harness.loop, harness.sync())

    assert harness.ids() == [a, d, c, e]
    assert harness.window.selected_ids() == [c]
    assert harness.window.current_id() == c
    assert resets == []
    assert moves, "Alpha moved to the top as a move, not a remove and insert"


def test_returning_to_the_foreground_triggers_a_reconcile(harness: Harness) -> None:
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    assert app is not None
    harness.create("Made while away", ts(9))
    before = harness.engine.passes_started

    async def scenario() -> None:
        gui = QGuiApplication.instance()
        assert isinstance(gui, QGuiApplication)
        # Active first: whatever state earlier tests left the application in, the watcher
        # has then seen it active, so the return below is one return (ui.window.foreground).
        for state in ("ApplicationActive", "ApplicationInactive", "ApplicationActive"):
            gui.applicationStateChanged.emit(getattr(Qt.ApplicationState, state))
        await until(lambda: harness.window.model.rowCount() == 1, what="the new row")
        # Rows arrive as each page commits (sync.reconcile.walk); the pass ends after them.
        await until(lambda: harness.window.status.text() == "Synced just now", what="its end")

    run(harness.loop, scenario())
    assert harness.engine.passes_started == before + 1


def test_the_timer_reconciles_periodically(harness: Harness) -> None:
    first = harness.engine.passes_started

    async def scenario() -> None:
        harness.controller.sync_interval = 0.1
        harness.controller.attach(harness.engine, connect=False)  # starts the engine's timer
        await until(lambda: harness.engine.passes_started >= first + 2, what="two timer passes")
        harness.create("Arrived later", ts(9))
        await until(lambda: harness.window.model.rowCount() == 1, what="the row from the timer")

    run(harness.loop, scenario())


def test_cancel_leaves_everything(harness: Harness) -> None:
    sid = harness.create("Keep me", ts(9))
    run(harness.loop, harness.sync())
    harness.select(sid)
    harness.answers["deleteConfirmation"] = CANCEL
    run(harness.loop, harness.controller.delete_selected())
    assert harness.dialogs == [("deleteConfirmation", f"Delete “{isolate('Keep me')}”?")]
    assert harness.ids() == [sid]
    assert harness.api().get(f"/v1/sessions/{sid}").status_code == 200
    assert not harness.window.model.is_pending_delete(sid)


def test_confirmed_delete_is_server_first_and_shows_a_pending_row(harness: Harness) -> None:
    sid = harness.create("Delete me", ts(9))
    keep = harness.create("Stay", ts(8))
    run(harness.loop, harness.sync())
    harness.select(sid)
    model = harness.window.model
    seen_pending: list[bool] = []

    def on_change(*_: object) -> None:
        if model.is_pending_delete(sid):
            seen_pending.append(sid in harness.ids())

    model.dataChanged.connect(on_change)
    harness.answers["deleteConfirmation"] = DELETE_EVERYWHERE
    run(harness.loop, harness.controller.delete_selected())
    run(harness.loop, harness.controller.refresh_now())

    assert seen_pending == [True], "the row showed a pending state while the request was out"
    response = harness.api().get(f"/v1/sessions/{sid}")
    assert response.status_code == 404
    assert response.json()["error"]["details"]["reason"] == "deleted"
    assert harness.ids() == [keep]
    mirror_ids = [r.id for r in run(harness.loop, harness.engine.rows())]
    assert mirror_ids == [keep]


def test_delete_key_opens_the_confirmation(harness: Harness) -> None:
    from PySide6.QtTest import QTest

    sid = harness.create("By keyboard", ts(9))
    run(harness.loop, harness.sync())
    harness.select(sid)
    harness.window.list.setFocus()
    harness.answers["deleteConfirmation"] = CANCEL

    async def scenario() -> None:
        # A key press comes from the event loop, not from inside a task step.
        QTimer.singleShot(0, lambda: QTest.keyClick(harness.window.list, Qt.Key.Key_Delete))
        await until(lambda: bool(harness.dialogs), what="the confirmation")
        await harness.controller.wait_idle()

    run(harness.loop, scenario())
    assert harness.dialogs[0][0] == "deleteConfirmation"
    assert harness.ids() == [sid]


def test_a_row_known_running_offers_stop_run_and_delete_in_the_first_dialog(
    harness: Harness,
) -> None:
    sid = harness.create("Busy", ts(9))
    other = harness.api()
    started = other.post(f"/v1/sessions/{sid}/runs", json={"input": _msg("/wait 30")})
    assert started.status_code == 202
    run_id = started.json()["id"]
    run(harness.loop, harness.sync())  # the mirror knows the run
    harness.select(sid)

    # Cancel: nothing is deleted and the run keeps going.
    harness.answers["deleteConfirmation"] = CANCEL
    run(harness.loop, harness.controller.delete_selected())
    assert [name for name, _ in harness.dialogs] == ["deleteConfirmation"]
    assert harness.ids() == [sid]
    assert other.get(f"/v1/runs/{run_id}").json()["status"] == "running"

    # One dialog, one choice: the run is stopped, then the conversation deleted.
    harness.dialogs.clear()
    harness.answers["deleteConfirmation"] = STOP_RUN_AND_DELETE
    run(harness.loop, harness.controller.delete_selected())
    run(harness.loop, harness.controller.refresh_now())
    assert [name for name, _ in harness.dialogs] == ["deleteConfirmation"]
    assert harness.ids() == []
    assert other.get(f"/v1/sessions/{sid}").status_code == 404


def test_a_run_the_mirror_does_not_know_yet_meets_the_409_dialog(harness: Harness) -> None:
    sid = harness.create("Busy", ts(9))
    run(harness.loop, harness.sync())  # not running yet when the mirror last looked
    other = harness.api()
    started = other.post(f"/v1/sessions/{sid}/runs", json={"input": _msg("/wait 30")})
    run_id = started.json()["id"]
    harness.select(sid)

    harness.answers.update({"deleteConfirmation": DELETE_EVERYWHERE, "runInProgress": CANCEL})
    run(harness.loop, harness.controller.delete_selected())
    assert [name for name, _ in harness.dialogs] == ["deleteConfirmation", "runInProgress"]
    assert "Nothing was deleted" in harness.dialogs[1][1]
    # Cancel left the run alone: still active (a loaded machine may not have started it yet).
    assert other.get(f"/v1/runs/{run_id}").json()["status"] in ("queued", "running")

    # The 409 taught the mirror about the run: the next try offers it in one dialog.
    run(harness.loop, harness.controller.refresh_now())
    assert harness.window.model.find(sid).active_run_id == run_id  # type: ignore[union-attr]
    harness.dialogs.clear()
    harness.answers["deleteConfirmation"] = STOP_RUN_AND_DELETE
    run(harness.loop, harness.controller.delete_selected())
    run(harness.loop, harness.controller.refresh_now())
    assert [name for name, _ in harness.dialogs] == ["deleteConfirmation"]
    assert harness.ids() == []
    assert other.get(f"/v1/sessions/{sid}").status_code == 404


def test_offline_delete_says_nothing_was_deleted_and_keeps_the_row(harness: Harness) -> None:
    sid = harness.create("Offline", ts(9))
    run(harness.loop, harness.sync())
    harness.select(sid)
    harness.server.stop()

    # Not known to be offline yet: the delete is tried and fails in words; Retry tries it
    # again (and fails again in the same words), Cancel keeps the row.
    harness.answers.update(
        {"deleteConfirmation": DELETE_EVERYWHERE, "deleteUnreachable": [RETRY, CANCEL]}
    )
    run(harness.loop, harness.controller.delete_selected())
    assert [name for name, _ in harness.dialogs] == [
        "deleteConfirmation",
        "deleteUnreachable",
        "deleteUnreachable",
    ]
    assert harness.dialogs[1][1] == harness.dialogs[2][1] == UNREACHABLE
    assert harness.faults.count("DELETE", rf"/v1/sessions/{sid}") == 2  # Retry sent it again
    assert harness.ids() == [sid]
    assert not harness.window.model.is_pending_delete(sid)

    # Known to be unreachable: no dialog at all, the status line says why (a refused
    # connection is the server, not this device's network: "Can't reach", not "Offline").
    report = run(harness.loop, harness.engine.reconcile(TriggerReason.MANUAL))
    assert report.error is not None
    assert harness.window.status.text().startswith("Can't reach 127.0.0.1:")
    assert harness.window.status.text().endswith(" – showing saved history")
    harness.dialogs.clear()
    run(harness.loop, harness.controller.delete_selected())
    assert harness.dialogs == []
    assert "offline" in harness.window.status.text()
    assert harness.ids() == [sid]


def test_filter_searches_titles_in_the_mirror(harness: Harness) -> None:
    lisbon = harness.create("Trip to Lisbon", ts(9))
    harness.create("Tax return", ts(10))
    run(harness.loop, harness.sync())
    harness.server.stop()  # offline too

    async def scenario() -> None:
        harness.window.filter.setText("lisb")
        await until(lambda: harness.ids() == [lisbon], what="the filtered list")

    run(harness.loop, scenario())


def test_open_conversation_deleted_elsewhere_says_so(harness: Harness) -> None:
    sid = harness.create("Shared", ts(9))
    keep = harness.create("Other", ts(8))
    run(harness.loop, harness.sync())

    async def scenario() -> None:
        await harness.select_async(sid)
        assert harness.window.pane.session_id == sid
        assert harness.api().delete(f"/v1/sessions/{sid}").status_code == 204
        await harness.sync()

    run(harness.loop, scenario())
    pane = harness.window.pane
    assert pane.banner.isVisible() or not pane.banner.isHidden()
    assert pane.banner.text() == DELETED_ELSEWHERE
    assert not pane.composer.isEnabled()
    assert pane.session_id == sid
    assert harness.ids() == [keep]


def test_sending_a_message_streams_the_reply_into_a_new_conversation(harness: Harness) -> None:
    pane = harness.window.pane

    async def scenario() -> None:
        harness.controller.new_conversation()
        pane.composer.setPlainText("Hello there")
        pane.send_button.click()
        await until(lambda: pane.session_id is not None, what="the new conversation")
        await until(
            lambda: any("Echo: Hello there" in text for text in _bubbles(harness)),
            what="the streamed reply",
        )
        await until(lambda: harness.window.current_id() == pane.session_id, what="selection")

    run(harness.loop, scenario())
    assert harness.window.model.index(0, 0).data() == "Hello there"
    assert pane.composer.toPlainText() == ""


def test_approval_buttons_decide(harness: Harness) -> None:
    pane = harness.window.pane

    async def scenario() -> None:
        harness.controller.new_conversation()
        pane.composer.setPlainText("/approve search")
        pane.send_button.click()
        await until(lambda: bool(pane._approvals), what="the approval card")
        card = next(iter(pane._approvals.values()))
        approve = next(
            b for b in pane.transcript.findChildren(type(pane.send_button)) if b.text() == "Approve"
        )
        approve.click()
        await until(lambda: "Approved" in card.detail, what="the resolution")
        await until(lambda: not pane.stop_button.isVisible(), what="the end of the run")

    run(harness.loop, scenario())


def test_bulk_delete_reports_each_conversation(harness: Harness) -> None:
    a = harness.create("First", ts(9))
    b = harness.create("Second", ts(8))
    busy = harness.create("Busy one", ts(7))
    harness.api().post(f"/v1/sessions/{busy}/runs", json={"input": _msg("/wait 30")})
    run(harness.loop, harness.sync())
    harness.select(a, b, busy)
    assert harness.window.selected_ids() == [busy, a, b]  # sidebar order: busy is active
    harness.answers["deleteConfirmation"] = DELETE_EVERYWHERE
    run(harness.loop, harness.controller.delete_selected())
    run(harness.loop, harness.controller.refresh_now())
    # The result is in the status line, the lines behind "Details": no modal with one OK.
    assert [name for name, _ in harness.dialogs] == ["deleteConfirmation"]
    window = harness.window
    assert window.status.text() == "2 of 3 conversations deleted. The others are kept."
    assert window.status_details.isVisibleTo(window)
    assert window.status_line.details[1].splitlines() == [
        "✗  Busy one — Not deleted: a run is in progress (stop it first)",
        "✓  First — Deleted",
        "✓  Second — Deleted",
    ]
    assert harness.ids() == [busy]
    assert harness.window.model.index(0, 0).data(SessionListModel.ActiveRunRole)


# --- helpers --------------------------------------------------------------------------------


def _msg(text: str) -> dict[str, object]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def _wait_run_done(harness: Harness, run_id: str) -> None:
    client = harness.api()

    async def poll() -> None:
        await until(
            lambda: (
                client.get(f"/v1/runs/{run_id}").json()["status"]
                in ("completed", "failed", "cancelled")
            ),
            what="the run to finish",
        )

    run(harness.loop, poll())


def _bubbles(harness: Harness) -> list[str]:
    return [text for _kind, text in harness.window.pane.messages()]


__all__ = ["asyncio"]


def test_f5_reconciles_now(harness: Harness) -> None:
    from PySide6.QtTest import QTest

    harness.create("Fresh", ts(9))
    before = harness.engine.passes_started

    async def scenario() -> None:
        QTimer.singleShot(0, lambda: QTest.keyClick(harness.window, Qt.Key.Key_F5))
        await until(lambda: harness.window.model.rowCount() == 1, what="the refreshed list")
        # Rows arrive as each page commits (sync.reconcile.walk); the pass ends after them.
        await until(lambda: harness.window.status.text() == "Synced just now", what="its end")

    run(harness.loop, scenario())
    assert harness.engine.passes_started == before + 1


def test_turns_taken_on_another_device_appear_in_the_open_conversation(harness: Harness) -> None:
    sid = harness.create("Shared plan", ts(9))
    run(harness.loop, harness.sync())
    harness.select(sid)
    other = harness.api()
    started = other.post(f"/v1/sessions/{sid}/runs", json={"input": _msg("from the laptop")})
    _wait_run_done(harness, started.json()["id"])

    async def scenario() -> None:
        await harness.sync()
        await until(
            lambda: "Echo: from the laptop" in " ".join(_bubbles(harness)), what="the new turn"
        )

    run(harness.loop, scenario())
    bubbles = _bubbles(harness)
    assert bubbles.count("from the laptop") == 1
    assert sum("Echo: from the laptop" in b for b in bubbles) == 1


def test_when_the_server_is_reachable_again_the_window_reconciles_on_its_own(
    harness: Harness,
) -> None:
    harness.controller.presenter.offline_retry_ms = (50,)
    harness.faults.add("GET", r"/v1/sessions", "refuse", times=None)

    async def scenario() -> None:
        report = await harness.engine.reconcile()
        assert report.error is not None
        assert harness.window.status.text().startswith("Can't reach 127.0.0.1:")
        harness.create("Written while we were offline", ts(9))
        harness.faults.clear()  # the server is reachable again
        await until(lambda: harness.window.model.rowCount() == 1, what="the reconnect pass")
        await until(lambda: harness.window.status.text() == "Synced just now", what="status")

    run(harness.loop, scenario())


def test_a_5xx_on_delete_offers_retry_and_the_retry_deletes(harness: Harness) -> None:
    sid = harness.create("Flaky", ts(9))
    run(harness.loop, harness.sync())
    harness.select(sid)
    harness.faults.add("DELETE", rf"/v1/sessions/{sid}", "status", status=500, code="internal")
    harness.answers.update({"deleteConfirmation": DELETE_EVERYWHERE, "deleteUnreachable": RETRY})
    run(harness.loop, harness.controller.delete_selected())
    run(harness.loop, harness.controller.refresh_now())
    assert [name for name, _ in harness.dialogs] == ["deleteConfirmation", "deleteUnreachable"]
    assert harness.ids() == []
    assert harness.api().get(f"/v1/sessions/{sid}").status_code == 404
    assert harness.faults.count("DELETE", rf"/v1/sessions/{sid}") == 2


def test_a_refused_token_is_shown_as_an_error_in_words(harness: Harness, tmp_path: Path) -> None:
    from sync.engine import SyncEngine
    from sync.profile.profile import Profile

    async def scenario() -> None:
        profile = Profile(tmp_path / "bad", server=harness.server.url, token="not-a-token")
        engine = await SyncEngine.open(profile, retry_attempts=1)
        try:
            harness.controller.attach(engine, connect=False)
            report = await engine.reconcile()
            assert report.error is not None
            status = harness.window.status
            assert status.text() and "Traceback" not in status.text()
            assert status.property("error") is True
            assert "showing saved history" not in status.text()  # not offline, not unreachable
        finally:
            harness.controller.detach()
            await engine.close()

    run(harness.loop, scenario())


def test_offline_shows_a_banner_and_disables_send_and_delete_with_reasons(
    harness: Harness,
) -> None:
    sid = harness.create("Saved", ts(9))
    run(harness.loop, harness.sync())
    harness.select(sid)
    window = harness.window
    assert window.delete_action.isEnabled() and not window.offline_banner.isVisible()
    harness.faults.add("GET", r".*", "refuse", times=None)

    run(harness.loop, harness.engine.reconcile(TriggerReason.MANUAL))
    assert window.offline_banner.isVisible()
    # A refused connection: the server can't be reached (the network is up).
    assert window.offline_banner.text().startswith("Can't reach 127.0.0.1:")
    assert not window.delete_action.isEnabled()
    assert "offline" in window.delete_action.toolTip()
    assert not window.pane.send_button.isEnabled()
    assert "offline" in window.pane.send_button.toolTip()
    assert window.pane.composer.isEnabled()  # a draft can still be written

    harness.faults.clear()
    run(harness.loop, harness.engine.reconcile(TriggerReason.CONNECT))
    assert not window.offline_banner.isVisible()
    assert window.delete_action.isEnabled() and window.pane.send_button.isEnabled()


def test_a_conversation_opened_offline_shows_its_saved_copy_and_catches_up_on_reconnect(
    harness: Harness,
) -> None:
    sid = harness.create("Notes for the trip", ts(9))
    run(harness.loop, harness.sync())
    harness.faults.add("GET", r".*", "refuse", times=None)
    run(harness.loop, harness.engine.reconcile(TriggerReason.MANUAL))
    harness.select(sid)
    pane = harness.window.pane
    texts = [text for _kind, text in pane.messages()]
    assert texts == ["Notes for the trip"], "the mirrored transcript, at once"
    assert pane.banner.text().startswith("Offline – showing the copy saved on this device")
    assert "http://" not in pane.banner.text() and "/v1/" not in pane.banner.text()

    harness.faults.clear()

    async def reconnect() -> None:
        await harness.engine.reconcile(TriggerReason.CONNECT)
        await until(lambda: not pane.banner.isVisibleTo(pane), what="the banner gone")
        await harness.controller.wait_idle()

    run(harness.loop, reconnect())
    texts = [text for _kind, text in pane.messages()]
    assert texts == ["Notes for the trip"]


def test_a_memory_is_shown_once_with_what_was_remembered(harness: Harness) -> None:
    pane = harness.window.pane

    async def scenario() -> None:
        harness.controller.new_conversation()
        pane.composer.setPlainText("/remember prefers green tea")
        pane.send_button.click()
        await until(lambda: bool(pane._memories), what="the memory note")
        await until(lambda: not pane.stop_button.isVisible(), what="the end of the run")
        note = next(iter(pane._memories.values()))
        await until(lambda: "green tea" in note.text, what="the memory's text")
        # Opening the conversation again replays its events: still one note.
        sid = pane.session_id
        assert sid is not None
        await harness.sync()
        pane.session_id = None
        await harness.controller.open_session(sid)
        await harness.controller.wait_idle()

    run(harness.loop, scenario())
    notes = [item.text for item in pane.model.items() if item.kind == "memory"]
    memory_notes = [text for text in notes if "emember" in text or "Memory" in text]
    assert memory_notes == [f"Remembered: “{isolate('prefers green tea')}”"]


def test_a_waiting_reply_shows_an_indicator_not_a_bubble_of_dots(harness: Harness) -> None:
    pane = harness.window.pane

    async def scenario() -> None:
        harness.controller.new_conversation()
        pane.composer.setPlainText("/wait 2")
        pane.send_button.click()
        await until(lambda: pane.indicator.isVisible(), what="the indicator")
        assert pane.indicator.text().startswith("●  Replying…")
        await until(lambda: not pane.stop_button.isVisible(), what="the end of the run")

    run(harness.loop, scenario())
    assert not pane.indicator.isVisible()
    bubbles = [text for _kind, text in pane.messages()]
    assert not any(text.strip(". ") == "" for text in bubbles), bubbles


def test_after_a_delete_the_neighbouring_row_is_selected_and_open(harness: Harness) -> None:
    top = harness.create("Top", ts(11))
    middle = harness.create("Middle", ts(10))
    bottom = harness.create("Bottom", ts(9))
    run(harness.loop, harness.sync())
    harness.select(middle)
    harness.answers["deleteConfirmation"] = DELETE_EVERYWHERE
    run(harness.loop, harness.controller.delete_selected())
    run(harness.loop, harness.controller.refresh_now())
    run(harness.loop, harness.controller.wait_idle())
    assert harness.ids() == [top, bottom]
    assert harness.window.selected_ids() == [bottom]
    assert harness.window.pane.session_id == bottom

    # The last row: the one above it.
    harness.dialogs.clear()
    run(harness.loop, harness.controller.delete_selected())
    run(harness.loop, harness.controller.refresh_now())
    run(harness.loop, harness.controller.wait_idle())
    assert harness.window.selected_ids() == [top]


def test_a_request_failing_on_the_network_shows_offline_at_once_not_at_the_next_tick(
    harness: Harness,
) -> None:
    sid = harness.create("Opened while the server is gone", ts(9))
    harness.faults.add("GET", r".*/events", "refuse", times=None)  # rows only: opening asks
    run(harness.loop, harness.engine.reconcile())
    run(harness.loop, harness.engine.content.wait_idle())
    run(harness.loop, harness.controller.refresh_now())
    harness.faults.add("GET", r".*", "refuse", times=None)
    window = harness.window
    assert not window.offline_banner.isVisibleTo(window)
    # Only the failed request may start a pass: the offline retry's timer (2 s after the
    # banner) must not add one if the loop stalls before the count is read.
    harness.controller.presenter.offline_retry_ms = (600_000,)
    passes = harness.engine.passes_started

    async def scenario() -> None:
        await harness.select_async(sid)  # the transcript's GET fails: no timer runs here
        await until(lambda: window.offline_banner.isVisibleTo(window), what="the banner")

    run(harness.loop, scenario())
    assert harness.engine.passes_started == passes + 1
    assert not window.delete_action.isEnabled()


def test_a_failed_send_says_why_in_words_and_keeps_the_text(harness: Harness) -> None:
    sid = harness.create("Ask again", ts(9))
    run(harness.loop, harness.sync())
    harness.select(sid)
    harness.faults.add("POST", r"/v1/sessions/.*/runs", "refuse", times=None)
    pane = harness.window.pane

    async def scenario() -> None:
        pane.composer.setPlainText("Are you there?")
        pane.send_button.click()
        await until(lambda: "Couldn't send" in pane.banner.text(), what="the words")
        await harness.controller.wait_idle()

    run(harness.loop, scenario())
    assert "Can't reach" in pane.banner.text()  # a refused connection: the host, not "offline"
    assert "http://" not in pane.banner.text()
    assert pane.composer.toPlainText() == "Are you there?"


def test_the_code_lexers_load_when_the_first_conversation_opens(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not when the engine attaches (a window used to browse never needs them): on a worker
    thread once a conversation is opened, and once only. A reply's code block shown before
    its lexer is in waits uncoloured, and is coloured once it is."""
    from ui.text import code_highlight

    monkeypatch.setattr(code_highlight, "_ready", {})
    monkeypatch.setattr(code_highlight, "_waited", set())
    gate = threading.Event()  # the lexers wait until the reply is shown
    load = code_highlight.load

    def gated(name: str) -> None:
        assert threading.current_thread() is not threading.main_thread()
        gate.wait(DEADLINE)
        load(name)

    monkeypatch.setattr(code_highlight, "load", gated)
    sid = harness.create("Code", ts(9))
    other = harness.create("More code", ts(8))
    run(harness.loop, harness.sync())
    assert code_highlight._ready == {}
    pane = harness.controller.pane
    data = {"role": "assistant", "content": [{"type": "text", "text": "```python\nx = 1\n```"}]}

    async def scenario() -> None:
        opening = asyncio.ensure_future(harness.select_async(sid))  # waits for the lexers
        await until(lambda: ("user", "Code") in pane.messages(), what="the transcript")
        warming = harness.controller._lexers
        assert warming is not None
        pane.append_event(Event(sid, "run_1", 10_000, "message.assistant", ts(9), data))
        pane.transcript.executeDelayedItemsLayout()
        reply = pane.model.rows[-1]
        assert reply.kind == Kind.ASSISTANT
        assert COLOURED not in reply.render(pane.transcript.delegate.dark).html
        assert reply.uncoloured
        gate.set()
        await opening
        assert warming.done()
        assert set(code_highlight._ready) == code_highlight.ALLOWED_LEXERS
        assert reply in pane.model.rows
        assert not reply.uncoloured
        assert COLOURED in reply.render(pane.transcript.delegate.dark).html
        await harness.select_async(other)
        assert harness.controller._lexers is warming

    run(harness.loop, scenario())
