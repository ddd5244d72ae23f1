"""The delete dialogs: wording, buttons, default button, Escape; shown without exec()."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QDialog, QMessageBox, QWidget

from app.loop import ConvergeEventLoop
from tests.ui.conftest import run
from ui.dialogs.dialogs import (
    CANCEL,
    DELETE_EVERYWHERE,
    NOT_CONFIRMED,
    RETRY,
    STOP_RUN_AND_DELETE,
    UNREACHABLE,
    Prompts,
    build_delete_box,
    build_run_in_progress_box,
    build_unreachable_box,
)
from ui.text.plain import isolate


def buttons(box: QMessageBox) -> dict[str, QMessageBox.ButtonRole]:
    return {b.text(): box.buttonRole(b) for b in box.buttons()}


def test_delete_confirmation_names_the_conversation_and_what_is_lost(qapp: object) -> None:
    box = build_delete_box(None, ["Trip to Lisbon"])
    assert f"“{isolate('Trip to Lisbon')}”" in box.text()
    info = box.informativeText()
    for phrase in (
        "messages",
        "files",
        "memories",
        "knowledge",
        "from the server",
        "associated data",
        "every synchronized client",
        "cannot be undone",
    ):
        assert phrase in info
    assert buttons(box) == {
        DELETE_EVERYWHERE: QMessageBox.ButtonRole.DestructiveRole,
        CANCEL: QMessageBox.ButtonRole.RejectRole,
    }
    assert box.defaultButton().text() == CANCEL
    assert box.escapeButton().text() == CANCEL
    assert DELETE_EVERYWHERE == "Delete Everywhere"


def test_bulk_confirmation_lists_the_conversations(qapp: object) -> None:
    titles = [f"Conversation {i}" for i in range(9)]
    box = build_delete_box(None, titles)
    assert box.text() == "Delete 9 conversations?"
    assert "Conversation 0" in box.informativeText()
    assert "…and 3 more" in box.informativeText()
    assert box.defaultButton().text() == CANCEL


def test_run_in_progress_offers_stop_run_and_delete(qapp: object) -> None:
    box = build_run_in_progress_box(None, "Long job", "run_123")
    assert "Nothing was deleted" in box.text()
    assert "Stop Run and Delete stops the run first" in box.informativeText()
    assert "run_123" in box.toolTip()
    assert STOP_RUN_AND_DELETE in buttons(box)
    assert box.defaultButton().text() == CANCEL


def test_unreachable_says_nothing_was_deleted_and_offers_retry(qapp: object) -> None:
    box = build_unreachable_box(None, ["Long job"], "Connection refused")
    assert box.text() == UNREACHABLE == "Couldn't reach the server. Nothing was deleted."
    assert "Retry" in buttons(box)


def test_a_lost_answer_says_not_confirmed_never_nothing_deleted(qapp: object) -> None:
    box = build_unreachable_box(
        None,
        ["Long job"],
        "Cannot reach the server at http://x (the connection was lost).",
        unconfirmed=True,
    )
    assert box.text() == NOT_CONFIRMED
    assert "Nothing was deleted" not in box.text() + box.informativeText()
    assert "may or may not have deleted" in box.informativeText()
    assert box.defaultButton().text() == RETRY


def test_escape_cancels_and_the_loop_keeps_running(loop: ConvergeEventLoop) -> None:
    parent = QWidget()
    parent.show()
    prompts = Prompts(parent)
    ticks: list[int] = []

    async def ticker() -> None:
        for i in range(1000):
            ticks.append(i)
            await asyncio.sleep(0.005)

    def press_escape(dialog: QDialog) -> None:
        def later() -> None:
            assert ticks, "other tasks must run while the dialog is open"
            QTest.keyClick(dialog, Qt.Key.Key_Escape)

        QTimer.singleShot(50, later)

    prompts.shown.connect(press_escape)

    async def scenario() -> bool:
        task = asyncio.ensure_future(ticker())
        try:
            return await prompts.confirm_delete(["Trip"])
        finally:
            task.cancel()

    assert run(loop, scenario()) is False
    assert prompts.current is None


def test_clicking_delete_everywhere_confirms(loop: ConvergeEventLoop) -> None:
    parent = QWidget()
    parent.show()
    prompts = Prompts(parent)

    def click(dialog: QDialog) -> None:
        assert isinstance(dialog, QMessageBox)
        button = next(b for b in dialog.buttons() if b.text() == DELETE_EVERYWHERE)
        QTimer.singleShot(0, button.click)

    prompts.shown.connect(click)
    assert run(loop, prompts.confirm_delete(["Trip"])) is True


def test_results_of_a_large_bulk_delete_name_failures_and_count_successes(qapp: object) -> None:
    from ui.dialogs.dialogs import results_summary

    lines = [(f"Chat {i}", i % 50 != 0, "Deleted" if i % 50 else "Not deleted") for i in range(200)]
    text, body = results_summary(lines)
    assert text == "196 of 200 conversations deleted. The others are kept."
    assert body.startswith("✓  196 deleted")
    assert f"✗  {isolate('Chat 0')} — Not deleted" in body
    assert f"✗  {isolate('Chat 150')} — Not deleted" in body
    assert "Chat 1 —" not in body


def test_bulk_confirmation_has_a_plural_title_and_a_destructive_button(qapp: object) -> None:
    box = build_delete_box(None, ["One", "Two"])
    assert box.windowTitle() == "Delete conversations?"
    assert build_delete_box(None, ["One"]).windowTitle() == "Delete conversation?"
    delete = next(b for b in box.buttons() if b.text() == DELETE_EVERYWHERE)
    assert delete.property("destructive") is True
    assert box.defaultButton().text() == CANCEL
    box.show()
    fill = delete.grab().toImage().pixelColor(8, delete.height() // 2)
    assert fill.red() > fill.green() + 60, fill.name()  # drawn red, not like Cancel
    box.close()


def test_dialogs_have_accessible_names_and_the_dialog_role(qapp: object) -> None:
    from PySide6.QtGui import QAccessible

    box = build_delete_box(None, ["Trip"])
    box.show()
    iface = QAccessible.queryAccessibleInterface(box)
    assert iface is not None
    assert iface.role() in (QAccessible.Role.Dialog, QAccessible.Role.AlertMessage)
    assert iface.text(QAccessible.Text.Name) == "Delete conversation?"
    names = {
        QAccessible.queryAccessibleInterface(b).text(QAccessible.Text.Name) for b in box.buttons()
    }
    assert names == {DELETE_EVERYWHERE, CANCEL}
    box.close()
