"""Every outcome is readable and stays (issue "Nothing a conversation holds can freeze, hide
or garble the pane", item 5): a refused delete is named in the pane like a refused send,
headlines wrap, a delete's success is not replaced at once by "Synced just now", a search
without hits says so offline too, Settings says when the environment overrides its token,
and a code block's Copy says "Copied"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from sync.events import TriggerReason
from tests.ui.conftest import Harness, run, until
from ui.dialogs.dialogs import DELETE_EVERYWHERE
from ui.dialogs.settings import ConnectionSettings, SettingsDialog
from ui.pane.pane import ConversationPane
from ui.text.plain import isolate
from ui.window.failure_words import Fix

ROOT = Path(__file__).resolve().parents[2]


def ts(hour: int, minute: int = 0) -> str:
    return f"2026-11-29T{hour:02d}:{minute:02d}:00.000000Z"


def test_a_refused_delete_names_its_cause_in_the_pane_with_open_settings_and_details(
    harness: Harness,
) -> None:
    sid = harness.create("Read-only here", ts(9))
    run(harness.loop, harness.sync())
    harness.select(sid)
    harness.faults.add(
        "DELETE",
        rf"/v1/sessions/{sid}",
        "status",
        status=403,
        code="forbidden",
        details={"required_scope": "sessions:delete"},
    )
    harness.answers["deleteConfirmation"] = DELETE_EVERYWHERE
    run(harness.loop, harness.controller.delete_selected())

    assert [name for name, _ in harness.dialogs] == ["deleteConfirmation"]  # no modal box
    notice = harness.window.pane.notice
    assert notice.failure is not None
    assert notice.label.text().startswith("Couldn't delete the conversation. ")
    assert "read-only" in notice.label.text()
    assert notice.offered() == [Fix.SETTINGS]
    assert notice.details_button.isVisibleTo(harness.window)
    assert "HTTP 403" in notice.failure.details
    assert harness.ids() == [sid]


_WIDE_SCREEN_CHECK = """
import sys
from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QApplication, QLabel
application = QApplication([])
from ui.dialogs.dialogs import build_delete_box
clipped = []
for length in range(20, 90, 3):
    title = ("Quarterly planning notes for the northern region " * 3)[:length]
    box = build_delete_box(None, [title])
    box.show()
    application.processEvents()
    label = box.findChild(QLabel, "qt_msgbox_label")
    room = QRect(0, 0, label.width(), 100_000)
    flags = int(Qt.TextFlag.TextWordWrap) if label.wordWrap() else 0
    needed = label.fontMetrics().boundingRect(room, flags, label.text())
    if needed.width() > label.width() or needed.height() > label.height():
        clipped.append(length)
    box.close()
print(clipped)
"""


def test_confirmation_headlines_wrap_instead_of_being_cut_on_a_wide_screen(
    tmp_path: Path,
) -> None:
    """QMessageBox decides from the screen's width whether its headline wraps: on a wide
    screen a 50-character title did not wrap and lost its "?". Checked in a process whose
    offscreen screen is 1920 px wide (the tests' own screen is narrow)."""
    config = tmp_path / "screen.json"
    screen = {"name": "wide", "x": 0, "y": 0, "width": 1920, "height": 1080}
    config.write_text(json.dumps({"screens": [{**screen, "logicalDpi": 96, "dpr": 1}]}))
    env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={config}"}
    done = subprocess.run(
        [sys.executable, "-c", _WIDE_SCREEN_CHECK],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.strip() == "[]", "these title lengths were cut: " + done.stdout


def test_a_delete_success_stays_on_the_status_line_before_synced_words_replace_it(
    harness: Harness,
) -> None:
    first = harness.create("First", ts(9))
    second = harness.create("Second", ts(8))
    run(harness.loop, harness.sync())
    harness.select(first, second)
    harness.answers["deleteConfirmation"] = DELETE_EVERYWHERE
    run(harness.loop, harness.controller.delete_selected())
    window = harness.window
    assert window.status.text() == "Deleted 2 conversations everywhere."

    run(harness.loop, harness.engine.reconcile(TriggerReason.MANUAL))  # "Synced just now"
    assert window.status.text() == "Deleted 2 conversations everywhere."
    from ui.window.status_line import HOLD_MS

    hold = window.status_line.hold_timer
    assert hold.isActive() and hold.interval() >= HOLD_MS >= 5_000
    hold.timeout.emit()  # the time to read it is over
    assert window.status.text() == "Synced just now"


def test_a_search_without_hits_says_no_match_while_the_server_cannot_be_reached(
    harness: Harness,
) -> None:
    harness.create("Trip to Lisbon", ts(9))
    run(harness.loop, harness.sync())
    harness.server.stop()
    run(harness.loop, harness.engine.reconcile(TriggerReason.MANUAL))
    assert harness.window.offline_banner.isVisible()

    async def typed() -> None:
        harness.window.filter.setText("zanzibar")
        await until(lambda: harness.controller.search.shown_for == "zanzibar", what="the search")
        await until(lambda: not harness.ids(), what="no hits")
        await harness.controller.wait_idle()

    run(harness.loop, typed())
    expected = f"No conversations match “{isolate('zanzibar')}”."
    assert harness.window.sidebar_empty.text() == expected
    assert harness.window.offline_banner.isVisible()  # the offline state is still said


def test_settings_says_when_an_environment_variable_overrides_the_token_it_saves(
    qapp: QApplication,
) -> None:
    plain = SettingsDialog(None, ConnectionSettings("http://h:1", "tok"))
    assert plain.token_override.isHidden()
    dialog = SettingsDialog(
        None, ConnectionSettings("http://h:1", "tok"), token_override="CONVERGE_TOKEN"
    )
    words = dialog.token_override.text()
    assert "CONVERGE_TOKEN" in words
    assert not dialog.token_override.isHidden()
    for widget in (plain, dialog):
        widget.deleteLater()


def test_the_desktop_names_the_variable_or_option_a_token_came_from() -> None:
    from app.desktop import token_override

    assert token_override(None, {"CONVERGE_TOKEN": "t"}) == "CONVERGE_TOKEN"
    assert token_override(None, {}) == ""
    assert token_override("given", {"CONVERGE_TOKEN": "t"}) == "--token"


def test_a_code_block_copy_says_copied_then_goes_back(pane: ConversationPane, qtbot: QtBot) -> None:
    from sync import Event

    data = {"role": "assistant", "content": [{"type": "text", "text": "Run:\n\n```\nmake\n```\n"}]}
    pane.set_events([Event("ses_1", "run_1", 1, "message.assistant", ts(9), data)])
    view = pane.transcript
    index = pane.model.index(0, 0)
    qtbot.waitUntil(lambda: view.visualRect(index).height() > 0)
    rect = view.visualRect(index)
    spots = (
        QPoint(x, y) for y in range(rect.top(), rect.bottom(), 3) for x in range(0, rect.right(), 6)
    )
    where = next(p for p in spots if view.anchor_at(p) == "converge-copy:0")
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=where)
    assert QApplication.clipboard().text() == "make"
    flash = pane.copied
    assert flash.isVisible() and flash.text() == "Copied"
    assert flash.timer.isActive()
    flash.timer.timeout.emit()  # the moment to read it is over
    assert not flash.isVisible()
