"""Errors that say what to do, against a real stub server: the pane
names the cause of a failed request with the fix (Open Settings, Retry, Save…), its Details
stay until dismissed or the next success, and every action fails the same way (stop and
decide check for offline too)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QApplication

from app.loop import ConvergeEventLoop
from tests.ui.conftest import Harness, close_harness, open_harness, run, until
from ui.dialogs.dialogs import CANCEL
from ui.pane.transcript_model import TranscriptModel
from ui.window.failure_words import Fix
from ui.window.file_actions import FileActions
from ui.window.main_window import EMPTY

TS = "2026-11-29T09:00:00.000000Z"


@pytest.fixture
def stranger(loop: ConvergeEventLoop, live_server: Any, tmp_path: Path) -> Iterator[Harness]:
    """A window whose token the server does not know."""
    h = open_harness(loop, live_server, tmp_path / "profile", token="not-a-known-token")
    try:
        yield h
    finally:
        close_harness(h)


def _open(harness: Harness, title: str = "Plans") -> str:
    sid = harness.create(title, TS)
    run(harness.loop, harness.sync())
    harness.select(sid)
    return sid


def _send(harness: Harness, text: str) -> None:
    pane = harness.window.pane
    pane.composer.setPlainText(text)
    pane.send_button.click()


def test_a_bad_token_names_the_cause_in_the_sidebar_and_the_pane_with_open_settings(
    stranger: Harness,
) -> None:
    window = stranger.window
    run(stranger.loop, stranger.engine.reconcile())
    notice = window.pane.notice
    run(stranger.loop, until(lambda: notice.failure is not None, what="the pane's notice"))
    placeholder = window.sidebar_empty.text()
    assert "refused this device's token" in placeholder
    assert window.tr(EMPTY) not in placeholder and "No conversations yet" not in placeholder
    assert "refused this device's token" in notice.label.text()
    assert notice.offered() == [Fix.SETTINGS]
    assert notice.failure is not None and "HTTP 401" in notice.failure.details
    assert "Request id: " in notice.failure.details  # the stub's X-Request-ID

    async def open_settings() -> None:
        notice.buttons[Fix.SETTINGS].click()
        await until(lambda: bool(stranger.dialogs), what="the settings dialog")
        await stranger.controller.wait_idle()

    run(stranger.loop, open_settings())
    assert stranger.dialogs and stranger.dialogs[0][0] == "settingsDialog"


def test_a_refused_connection_says_cant_reach_the_host_and_the_cause_stays_past_a_pass(
    harness: Harness,
) -> None:
    _open(harness)
    pane = harness.window.pane
    notice = pane.notice
    harness.faults.add("POST", r"/v1/sessions/.*/runs", "refuse", times=None)
    passes = harness.engine.passes_started

    async def scenario() -> None:
        _send(harness, "Anyone there?")
        await until(lambda: notice.failure is not None, what="the failure")
        # The failure checks for offline at once: a pass runs and rewrites the status line.
        await until(lambda: harness.engine.passes_started > passes, what="a pass")
        await until(lambda: harness.window.status.text() == "Synced just now", what="its end")

    run(harness.loop, scenario())
    host = harness.server.url.split("://", 1)[1].rstrip("/")
    assert "Can't reach" in notice.label.text() and host in notice.label.text()
    assert "offline" not in notice.label.text().lower()
    assert notice.offered() == [Fix.SETTINGS, Fix.RETRY]
    assert notice.details_button.isVisible()  # still there after the pass
    assert pane.composer.toPlainText() == "Anyone there?"

    async def retry() -> None:
        harness.faults.clear()
        notice.buttons[Fix.RETRY].click()
        await until(lambda: notice.failure is None, what="the next success")
        await until(lambda: not pane.stop_button.isVisible(), what="the reply")

    run(harness.loop, retry())
    assert pane.composer.toPlainText() == ""


def test_dismiss_removes_the_failure(harness: Harness) -> None:
    _open(harness)
    notice = harness.window.pane.notice
    harness.faults.add("POST", r"/v1/sessions/.*/runs", "status", status=503, times=None)

    async def scenario() -> None:
        _send(harness, "hello")
        await until(lambda: notice.failure is not None, what="the failure")

    run(harness.loop, scenario())
    assert "having trouble" in notice.label.text()
    notice.dismiss_button.click()
    assert notice.failure is None and not notice.isVisible()


def test_a_read_only_token_says_so_with_open_settings(harness: Harness) -> None:
    _open(harness)
    notice = harness.window.pane.notice
    harness.faults.add(
        "POST",
        r"/v1/sessions/.*/runs",
        "status",
        status=403,
        code="forbidden",
        details={"required_scope": "sessions:write"},
    )

    async def scenario() -> None:
        _send(harness, "hello")
        await until(lambda: notice.failure is not None, what="the failure")

    run(harness.loop, scenario())
    assert "read-only" in notice.label.text() and "sessions:write" in notice.label.text()
    assert notice.offered() == [Fix.SETTINGS]
    assert notice.failure is not None and "HTTP 403 (forbidden)" in notice.failure.details


def test_stop_that_fails_says_why_checks_for_offline_and_can_be_retried(
    harness: Harness,
) -> None:
    _open(harness)
    pane = harness.window.pane
    notice = pane.notice
    harness.faults.add("POST", r"/v1/runs/.*/cancel", "refuse")

    async def scenario() -> None:
        _send(harness, "/wait 30")
        await until(lambda: pane.stop_button.isVisible(), what="Stop")
        passes = harness.engine.passes_started
        pane.stop_button.click()
        await until(lambda: notice.failure is not None, what="the failure")
        assert "Couldn't stop the reply" in notice.label.text()
        await until(lambda: harness.engine.passes_started > passes, what="the offline check")
        assert pane.stop_button.isVisible() and pane.stop_button.isEnabled()
        notice.buttons[Fix.RETRY].click()
        await until(lambda: not pane.stop_button.isVisible(), what="the stopped run")

    run(harness.loop, scenario())
    assert notice.failure is None


def test_a_decision_that_fails_says_why_and_checks_for_offline(harness: Harness) -> None:
    _open(harness)
    pane = harness.window.pane
    notice = pane.notice
    harness.faults.add("POST", r"/v1/approvals/.*/decision", "refuse", times=None)

    async def scenario() -> None:
        _send(harness, "/approve deploy")
        await until(lambda: bool(pane._approvals), what="the approval card")
        passes = harness.engine.passes_started
        pane.approval_decided.emit(next(iter(pane._approvals)), "approve")
        await until(lambda: notice.failure is not None, what="the failure")
        assert "Couldn't send the decision" in notice.label.text()
        assert notice.offered() == [Fix.SETTINGS, Fix.RETRY]
        await until(lambda: harness.engine.passes_started > passes, what="the offline check")
        harness.faults.clear()
        pane.stop_button.click()
        await until(lambda: not pane.stop_button.isVisible(), what="the stopped run")

    run(harness.loop, scenario())


def test_a_second_send_while_a_run_is_active_says_stop_it_and_shows_stop(
    harness: Harness,
) -> None:
    sid = _open(harness)
    pane = harness.window.pane
    other = harness.api()  # another device starts a long run the pane has not heard of
    body = {"input": {"role": "user", "content": [{"type": "text", "text": "/wait 30"}]}}
    assert other.post(f"/v1/sessions/{sid}/runs", json=body).status_code == 202

    async def scenario() -> None:
        _send(harness, "me too")
        await until(lambda: pane.notice.failure is not None, what="the 409")
        await until(lambda: pane.stop_button.isVisible(), what="Stop")
        assert "Stop it" in pane.notice.label.text()
        pane.stop_button.click()
        await until(lambda: not pane.stop_button.isVisible(), what="the stopped run")

    run(harness.loop, scenario())


def test_open_with_no_application_says_so_and_offers_save(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    _open(harness)
    pane = harness.window.pane
    opened: list[QUrl] = []

    def no_application(url: QUrl) -> bool:
        opened.append(url)
        return False  # what QDesktopServices answers when nothing opens the type

    monkeypatch.setattr(FileActions, "open_url", staticmethod(no_application))

    async def scenario() -> None:
        _send(harness, "/artifact notes.txt Pack the blue bag")

        def files() -> list[tuple[str, str]]:
            rows = [pane.model.index(row, 0) for row in range(pane.model.rowCount())]
            return [
                (row.data(TranscriptModel.KeyRole), row.data(TranscriptModel.ItemRole).name)
                for row in rows
                if row.data(TranscriptModel.KindRole) == "artifact"
            ]

        await until(lambda: bool(files()), what="the file")
        pane.artifact_open_requested.emit(*files()[0])
        await until(lambda: pane.notice.failure is not None, what="the notice")

    run(harness.loop, scenario())
    assert opened and opened[0].isLocalFile()
    assert "No application on this device opens" in pane.notice.label.text()
    assert pane.notice.offered() == [Fix.SAVE]


def test_focus_returns_to_the_composer_after_a_dialog(harness: Harness) -> None:
    _open(harness)
    pane = harness.window.pane
    harness.window.activateWindow()
    pane.composer.setFocus()
    run(harness.loop, until(lambda: QApplication.focusWidget() is pane.composer, what="focus"))
    harness.answers["deleteConfirmation"] = CANCEL
    run(harness.loop, harness.controller.delete_selected())
    assert harness.dialogs and harness.dialogs[0][0] == "deleteConfirmation"
    back = until(lambda: QApplication.focusWidget() is pane.composer, what="the focus back")
    run(harness.loop, back)


def test_an_empty_list_never_read_while_offline_is_not_called_empty(
    loop: ConvergeEventLoop, live_server: Any, tmp_path: Path
) -> None:
    h = open_harness(loop, live_server, tmp_path / "profile")
    try:
        h.faults.add("GET", r".*", "lose_response", times=None)  # sent, never answered
        run(h.loop, h.engine.reconcile())
        run(h.loop, until(lambda: "showing saved" in h.window.status.text(), what="offline"))
        placeholder = h.window.sidebar_empty.text()
        assert "No conversations yet" not in placeholder
        assert "can't be listed" in placeholder
    finally:
        h.faults.clear()
        close_harness(h)
