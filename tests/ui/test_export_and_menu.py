"""Export… (Markdown and JSON with the files, through the existing routes), offered in the
row's menu and in the delete confirmation; the row's "⋯" menu."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from tests.ui.conftest import Harness, run, until
from ui.dialogs.dialogs import CANCEL, EXPORT
from ui.sidebar.delegate import more_rect


def _conversation_with_a_file(harness: Harness) -> str:
    pane = harness.window.pane

    async def scenario() -> str:
        harness.controller.new_conversation()
        pane.composer.setPlainText("/artifact notes.txt Pack the blue bag")
        pane.send_button.click()
        await until(lambda: pane.session_id is not None, what="the new conversation")
        await until(lambda: not pane.stop_button.isVisible(), what="the end of the run")
        await harness.sync()
        assert pane.session_id is not None
        return pane.session_id

    return run(harness.loop, scenario())


def test_export_writes_markdown_with_its_files_and_json_with_their_bytes(
    harness: Harness, tmp_path: Path
) -> None:
    sid = _conversation_with_a_file(harness)
    md = run(
        harness.loop, harness.controller.files.export_to(sid, tmp_path / "trip.md", "markdown")
    )
    text = md.read_text(encoding="utf-8")
    assert text.startswith("# /artifact notes.txt Pack the blue bag")
    assert "**You:**" in text and "**Assistant:**" in text
    assert "📎 [notes.txt](trip%20files/notes.txt)" in text
    assert (tmp_path / "trip files" / "notes.txt").read_text() == "Pack the blue bag"

    js = run(harness.loop, harness.controller.files.export_to(sid, tmp_path / "trip.json", "json"))
    document = json.loads(js.read_text(encoding="utf-8"))
    assert document["session"]["id"] == sid
    assert "message.user" in [e["type"] for e in document["events"]]
    (artifact,) = document["artifacts"]
    assert artifact["name"] == "notes.txt"
    assert base64.b64decode(artifact["content_base64"]) == b"Pack the blue bag"
    assert harness.window.status.text() == f"Exported to {js}"


def test_the_delete_confirmation_offers_export_first_then_asks_again(
    harness: Harness,
) -> None:
    sid = harness.create("Keep a copy", "2026-11-29T09:00:00.000000Z")
    run(harness.loop, harness.sync())
    harness.select(sid)
    exported: list[str] = []

    async def exporter(session_id: str) -> None:
        exported.append(session_id)
        harness.answers["deleteConfirmation"] = CANCEL  # the second time: keep it

    harness.controller.deleter.exporter = exporter
    harness.answers["deleteConfirmation"] = EXPORT
    run(harness.loop, harness.controller.delete_selected())
    assert exported == [sid]
    assert [name for name, _ in harness.dialogs] == ["deleteConfirmation", "deleteConfirmation"]
    assert harness.ids() == [sid]


def test_the_rows_menu_opens_from_its_dots_and_offers_export_copy_and_delete(
    harness: Harness,
) -> None:
    sid = harness.create("Menu", "2026-11-29T09:00:00.000000Z")
    run(harness.loop, harness.sync())
    window = harness.window
    rect = window.list.visualRect(window.model.index_of(sid))
    dots = more_rect(rect).center()
    QTest.mouseMove(window.list.viewport(), dots)
    QTest.mouseClick(window.list.viewport(), Qt.MouseButton.LeftButton, pos=dots)
    QApplication.processEvents()
    menu = window.last_menu
    assert [a.text() for a in menu.actions() if not a.isSeparator()] == [
        "Export…",
        "Copy ID",
        "Delete",
    ]
    assert window.selected_ids() == [sid]
    copy = next(a for a in menu.actions() if a.text() == "Copy ID")
    copy.trigger()
    clipboard = QApplication.clipboard()
    assert clipboard is not None and clipboard.text() == sid
    menu.close()
