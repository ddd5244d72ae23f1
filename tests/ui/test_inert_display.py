"""The window shows server text inert (CONTRACT §10.1): never as markup, and a title's
bidirectional controls cannot reorder the row or the sentence around it."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6 import QtGui
from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, Qt
from PySide6.QtGui import QAccessible, QImage, QPainter, QTextDocument
from PySide6.QtWidgets import QApplication, QLabel, QMainWindow, QStyleOptionViewItem, QWidget

from app.loop import ConvergeEventLoop
from sync import ArtifactCreated, ToolInvocation
from tests.ui.conftest import row, run
from ui.dialogs.dialogs import (
    build_delete_box,
    build_delete_running_box,
    build_run_in_progress_box,
    build_unreachable_box,
    results_summary,
)
from ui.dialogs.settings import ConnectionSettings, SettingsDialog
from ui.pane.items import artifact_item, tool_item
from ui.pane.pane import ConversationPane
from ui.pane.transcript_delegate import DocumentCache
from ui.sidebar.delegate import SessionDelegate
from ui.sidebar.model import SessionListModel
from ui.text.plain import EXPLICIT_BIDI, FSI, PDI, isolate, neutral, plain_tooltip
from ui.window.elided_label import ElidedLabel
from ui.window.main_window import MainWindow
from ui.window.status_line import StatusLine

MARKUP = '<img src="/etc/passwd"> <b>x</b> <a href="file:///etc">y</a> &amp;'
SHORT = '<img src="/etc/passwd"> <b>x</b>'  # a title (the server cuts them at 64)
OVERRIDE = "abc\u202edef"  # RIGHT-TO-LEFT OVERRIDE: would draw "fed" and reverse what follows
SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def rendered(tooltip: str) -> str:
    """What Qt shows for a tooltip: rich text when it looks like it, else the text."""
    document = QTextDocument()
    if QtGui.Qt.mightBeRichText(tooltip):
        document.setHtml(tooltip)
    else:
        document.setPlainText(tooltip)
    return document.toPlainText()


def no_explicit_bidi(text: str) -> bool:
    """No override/embedding/isolate of the server's own (ours are the FSI … PDI pairs)."""
    inner = text.replace(FSI, "").replace(PDI, "")
    return not any(c in EXPLICIT_BIDI for c in inner)


# --- the helpers --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", [MARKUP, "<b>x</b>", "a\nb <i>c</i>", "  two  spaces", "x < y > z", "<qt>hi</qt>"]
)
def test_plain_tooltip_renders_to_the_literal_text(qapp: QApplication, text: str) -> None:
    assert rendered(plain_tooltip(text)) == text


def test_isolate_neutralises_the_title_and_wraps_it_in_an_isolate() -> None:
    hostile = "a\u202eb\u2066c\u2069\u2069d\u202a\u202c"
    assert neutral(hostile) == "abcd"
    assert isolate(hostile) == f"{FSI}abcd{PDI}"
    assert isolate("") == ""
    assert neutral("\u200fשלום\u200e") == "\u200fשלום\u200e"  # marks are kept


# --- tooltips -----------------------------------------------------------------------------


def test_the_elided_title_label_shows_markup_literally_and_neutralised(
    qapp: QApplication,
) -> None:
    label = ElidedLabel(f"{MARKUP} {OVERRIDE}")
    assert rendered(label.toolTip()) == f"{MARKUP} abcdef"
    assert label.text() == f"{MARKUP} abcdef"


def test_the_sidebar_tooltip_shows_a_markup_title_literally(qapp: QApplication) -> None:
    model = SessionListModel()
    model.replace_now([row("ses_1", f"{SHORT} {OVERRIDE}")])
    tip = model.data(model.index(0, 0), Qt.ItemDataRole.ToolTipRole)
    first, second = rendered(tip).split("\n")
    assert first == f"{FSI}{SHORT} abcdef{PDI}"
    assert second.startswith("Last activity: ")
    assert model.data(model.index(0, 0), Qt.ItemDataRole.DisplayRole) == f"{SHORT} abcdef"


def test_the_offline_banner_tooltip_shows_a_server_reason_literally(
    qapp: QApplication,
) -> None:
    window = MainWindow()
    window.set_offline(True, f"The server said {MARKUP}")
    assert rendered(window.offline_banner.toolTip()) == f"The server said {MARKUP}"
    for label in (window.offline_banner, window.sidebar_empty):
        assert label.textFormat() == Qt.TextFormat.PlainText
    window.close()


def test_the_running_box_tooltip_shows_a_run_id_literally(qapp: QApplication) -> None:
    box = build_run_in_progress_box(None, "t", f"run_{MARKUP}")
    assert MARKUP in rendered(box.toolTip())


# --- labels -------------------------------------------------------------------------------


def assert_plain_labels(widget: QWidget) -> None:
    """Every label showing hostile text (markup, the override's letters) is plain text."""
    shown = [
        label
        for label in widget.findChildren(QLabel)
        if "<b>" in label.text() or "abc" in label.text()
    ]
    assert shown, "no label shows the server's text"
    for label in shown:
        assert label.textFormat() == Qt.TextFormat.PlainText, label.objectName()


def test_every_label_of_the_dialogs_with_server_text_is_plain_text(qapp: QApplication) -> None:
    boxes = [
        build_delete_box(None, [MARKUP]),
        build_delete_box(None, [MARKUP, OVERRIDE]),
        build_delete_running_box(None, MARKUP, f"run_{MARKUP}"),
        build_run_in_progress_box(None, MARKUP, None),
        build_unreachable_box(None, [MARKUP], f"reason {MARKUP}"),
        SettingsDialog(None, ConnectionSettings("", ""), in_use=f"http://h/{MARKUP}"),
    ]
    for box in boxes:
        assert_plain_labels(box)
        box.deleteLater()


def test_the_status_bar_shows_server_words_as_plain_text(qapp: QApplication) -> None:
    window = QMainWindow()
    line = StatusLine(window)
    line.set_where(MARKUP, f"https://{OVERRIDE}.example", "/home/me/p")
    line.set_status(f"Failed: {OVERRIDE} (503).")
    assert line.where.textFormat() == Qt.TextFormat.PlainText
    assert rendered(line.where.toolTip()).startswith(f"Signed in as {FSI}{MARKUP}{PDI} on ")
    # The server's override cannot turn "(503)." around, in the line or the window title.
    assert line.status.text() == "Failed: abcdef (503)."
    assert window.windowTitle() == (
        f"Converge — {FSI}{MARKUP}{PDI} on {FSI}https://abcdef.example{PDI} · profile {FSI}p{PDI}"
    )
    window.close()


def _description(widget: QWidget) -> str:
    """What a screen reader is given as the widget's description."""
    interface = QAccessible.queryAccessibleInterface(widget)
    assert interface is not None
    return interface.text(QAccessible.Text.Description)


def test_the_pane_title_and_the_account_label_describe_themselves_in_plain_words(
    qapp: QApplication,
) -> None:
    pane = ConversationPane()
    pane.show_session("ses_1", f"Trip {MARKUP}", "2026-11-30T05:00:00.000000Z")
    assert _description(pane.title) == f"Trip {MARKUP}"
    window = QMainWindow()
    line = StatusLine(window)
    line.set_where("alice", "https://example.org", "/home/me/p")
    assert _description(line.where) == (
        f"Signed in as {FSI}alice{PDI} on {FSI}https://example.org{PDI}\n"
        f"Profile: {FSI}/home/me/p{PDI}"
    )
    main = MainWindow()
    main.set_offline(True, "No route to host")
    assert _description(main.offline_banner) == "No route to host"
    for widget in (pane, window, main):
        widget.close()


def test_the_conversation_pane_shows_server_names_isolated_in_plain_labels(
    qapp: QApplication,
) -> None:
    pane = ConversationPane()
    pane.show_session("ses_1", f"{MARKUP} {OVERRIDE}", "2026-11-30T05:00:00.000000Z")
    card = artifact_item(ArtifactCreated(artifact_id="art_1", name=MARKUP + OVERRIDE))
    tool = tool_item(ToolInvocation(tool=OVERRIDE, status="done", output=MARKUP))
    for item in (card, tool):  # painted from an inert document that shows the words literally
        shown = DocumentCache().get(item, 600, False, QtGui.QFont()).toPlainText()
        assert MARKUP in shown
    pane.show_banner(f"The server said {MARKUP}")
    for label in (pane.subtitle, pane.banner):
        assert label.textFormat() == Qt.TextFormat.PlainText
    assert card.text == f"File: {FSI}{MARKUP}abcdef{PDI}"
    assert tool.text.startswith(f"Tool: {FSI}abcdef{PDI} — ")
    assert pane.title.text() == f"{MARKUP} abcdef"
    pane.deleteLater()


# --- isolation in sentences and rows ------------------------------------------------------


def test_the_delete_question_keeps_its_order_around_an_override(qapp: QApplication) -> None:
    box = build_delete_box(None, [OVERRIDE])
    assert box.text() == f"Delete “{FSI}abcdef{PDI}”?"
    many = build_delete_box(None, [OVERRIDE, "x\u202b"])
    assert f"•  {FSI}abcdef{PDI}" in many.informativeText()
    assert no_explicit_bidi(many.informativeText())
    unreachable = build_unreachable_box(None, [OVERRIDE], f"the server said {OVERRIDE}.")
    assert no_explicit_bidi(unreachable.informativeText())
    assert f"“{FSI}abcdef{PDI}” is kept" in unreachable.informativeText()
    _text, body = results_summary([(OVERRIDE, False, "refused")])
    assert body == f"✗  {FSI}abcdef{PDI} — refused"


class RecordingPainter(QPainter):
    """A painter that remembers the strings it is asked to draw."""

    def __init__(self, image: QImage) -> None:
        super().__init__(image)
        self.strings: list[str] = []

    def drawText(self, *args: object) -> None:  # type: ignore[override]
        self.strings.extend(a for a in args if isinstance(a, str))
        super().drawText(*args)  # type: ignore[call-overload]


def test_a_sidebar_row_paints_an_overridden_title_neutralised(qapp: QApplication) -> None:
    model = SessionListModel()
    model.replace_now([row("ses_1", f"{OVERRIDE} then the rest")])
    delegate = SessionDelegate()
    image = QImage(300, 60, QImage.Format.Format_ARGB32)
    painter = RecordingPainter(image)
    option = QStyleOptionViewItem()
    option.rect = QRect(0, 0, 300, 60)
    index: QModelIndex | QPersistentModelIndex = model.index(0, 0)
    delegate.paint(painter, option, index)
    painter.end()
    title = painter.strings[0]
    assert title == "abcdef then the rest"
    assert no_explicit_bidi("".join(painter.strings))


def test_render_the_sidebar_with_hostile_titles(loop: ConvergeEventLoop, tmp_path: Path) -> None:
    """For a person to look at (saved next to the test's folder): overrides neutralised,
    markup literal, an Arabic title still right to left."""
    window = MainWindow()
    window.resize(760, 420)
    window.show()
    rows = [
        row("ses_3", f"{OVERRIDE} then the rest", updated_at="2026-11-30T05:00:03.000000Z"),
        row("ses_2", SHORT, updated_at="2026-11-30T05:00:02.000000Z"),
        row("ses_1", "مرحبا \u202eبالعالم", updated_at="2026-11-30T05:00:01.000000Z"),
    ]
    run(loop, window.model.update(rows))
    window.list.doItemsLayout()
    path = tmp_path / "sidebar-hostile.png"
    assert window.list.grab().save(str(path))
    assert path.stat().st_size > 0
    window.close()


def test_the_windows_console_log_is_inert(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The window started from a terminal logs warnings there: a server's words in one
    cannot drive the terminal."""
    import logging

    from app.desktop import configure_logging
    from tests.hostile_content import HOSTILE, unsafe_chars

    root = logging.getLogger()
    before = list(root.handlers)
    try:
        configure_logging(tmp_path / "profile")
        logging.getLogger("sync.engine").warning("the server said %s", HOSTILE)
    finally:
        for handler in root.handlers[len(before) :]:
            root.removeHandler(handler)
            handler.close()
    err = capsys.readouterr().err
    assert unsafe_chars(err) == [] and "the server said \\u001b]0;pwned" in err
    logged = (tmp_path / "profile" / "converge.log").read_text(encoding="utf-8")
    assert unsafe_chars(logged) == [] and "the server said \\u001b]0;pwned" in logged
