"""The virtualised transcript: rows, not widgets; streaming touches one row;
following the bottom and "Jump to latest"; copying; links only through `link_target`;
long words wrap inside the reading column; a row's accessible text is its message, a reply's
as the words its rendering shows."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QModelIndex, QObject, QPoint, Qt, QUrl, Slot
from PySide6.QtGui import QAccessible, QDesktopServices, QGuiApplication, QHelpEvent, QTextDocument
from PySide6.QtWidgets import QApplication, QTextEdit, QToolTip
from pytestqt.qtbot import QtBot

from sync import Event
from ui.pane.pane import ConversationPane
from ui.pane.transcript_delegate import MAX_COLUMN, TranscriptDelegate
from ui.pane.transcript_model import Kind, TranscriptItem, TranscriptModel
from ui.text.rich_text import RenderedText

#: How long a test waits for an open of thousands of rows to finish: it is sliced over the
#: event loop, so a loaded machine (or tracemalloc) stretches it well past pytest-qt's 5 s.
LOAD_TIMEOUT_MS = 60_000

_sequence = iter(range(1, 10_000_000))
AT = "2026-11-30T05:14:13.123456Z"


def event(type_: str, data: Any = None, run_id: str | None = "run_1") -> Event:
    return Event("ses_1", run_id, next(_sequence), type_, AT, data or {})


def user(text: str) -> Event:
    return event("message.user", {"role": "user", "content": [{"type": "text", "text": text}]})


def reply(text: str) -> Event:
    data = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    return event("message.assistant", data)


def delta(text: str) -> Event:
    return event("message.assistant.delta", {"text": text})


def long_transcript(count: int) -> list[Event]:
    events: list[Event] = []
    for n in range(count // 2):
        events.append(user(f"Question {n}: what about the trams in Porto, and the boats?"))
        events.append(reply(f"Answer {n}: the trams run every twelve minutes. " * 3))
    return events


def code_and_tables(count: int) -> list[Event]:
    """Replies whose height no estimate from the font gets right: code blocks and tables."""
    code = "```python\n" + "\n".join(f"x{n} = {n}" for n in range(12)) + "\n```"
    table = "| a | b |\n|---|---|\n" + "| 1 | 2 |\n" * 8
    events: list[Event] = []
    for n in range(count // 2):
        events.append(user(f"Question {n}"))
        events.append(reply(f"Answer {n}.\n\n" + (code if n % 2 else table)))
    return events


def settle(qtbot: QtBot, pane: ConversationPane) -> None:
    """Let the open bring in all its rows, the view's delayed layout and the first paint run."""
    view = pane.transcript
    if pane.loading:
        with qtbot.waitSignal(pane.transcript_loaded, timeout=LOAD_TIMEOUT_MS):
            pass
    qtbot.waitUntil(lambda: view.verticalScrollBar().maximum() > 0)
    qtbot.wait(0)
    view.viewport().repaint()


def test_the_model_is_a_well_behaved_list_model(qtmodeltester: Any, pane: ConversationPane) -> None:
    pane.set_events(long_transcript(20))
    pane.append_event(delta("more"))
    qtmodeltester.check(pane.model)


def test_a_long_transcript_creates_no_widget_per_message(
    qtbot: QtBot, pane: ConversationPane
) -> None:
    pane.set_events(long_transcript(5_000))
    settle(qtbot, pane)
    assert pane.model.rowCount() == 5_000
    assert len(pane.transcript.viewport().findChildren(QObject)) < 10
    assert pane.transcript.at_bottom(), "it opens at the latest message"


def test_a_streamed_delta_changes_only_the_last_row(qtbot: QtBot, pane: ConversationPane) -> None:
    pane.set_events(long_transcript(200))
    pane.append_event(user("And the boats?"))
    pane.append_event(delta("The boats"))
    settle(qtbot, pane)
    changed: list[tuple[int, int]] = []
    pane.model.dataChanged.connect(lambda a, b, *_: changed.append((a.row(), b.row())))
    inserted: list[int] = []
    pane.model.rowsInserted.connect(lambda _p, first, _l: inserted.append(first))
    layouts = pane.transcript.delegate.cache.layouts
    for piece in (" leave", " from the", " river."):
        pane.append_event(delta(piece))
    last = pane.model.rowCount() - 1
    assert changed == [(last, last)] * 3 and inserted == []
    assert pane.messages()[-1] == ("assistant", "The boats leave from the river.")
    pane.transcript.viewport().repaint()
    assert pane.transcript.delegate.cache.layouts - layouts <= 3, "only the reply is laid out"


def test_scrolled_up_a_new_delta_keeps_the_position_and_offers_jump_to_latest(
    qtbot: QtBot, pane: ConversationPane
) -> None:
    pane.set_events(long_transcript(300))
    pane.append_event(delta("Thinking about it"))
    settle(qtbot, pane)
    bar = pane.transcript.verticalScrollBar()
    bar.setValue(bar.maximum() // 2)
    value = bar.value()
    assert not pane.transcript.jump.isVisible()
    for piece in (" some more", " and more.\n" * 5):
        pane.append_event(delta(piece))
    pane.append_event(user("a new message from another device"))
    qtbot.wait(0)
    assert bar.value() == value, "what the user reads stays put"
    assert pane.transcript.jump.isVisible()
    pane.transcript.jump.click()
    qtbot.waitUntil(pane.transcript.at_bottom)
    assert not pane.transcript.jump.isVisible()


def test_sending_scrolls_to_the_bottom(qtbot: QtBot, pane: ConversationPane) -> None:
    pane.set_events(long_transcript(300))
    settle(qtbot, pane)
    bar = pane.transcript.verticalScrollBar()
    bar.setValue(0)
    assert not pane.transcript.at_bottom()
    pane.composer.setPlainText("One more question")
    pane.send_button.click()
    pane.append_event(user("One more question"))
    qtbot.waitUntil(lambda: bar.value() == bar.maximum())
    assert pane.transcript.following


def test_copy_message_puts_the_selected_messages_plain_text_on_the_clipboard(
    qtbot: QtBot, pane: ConversationPane
) -> None:
    pane.set_events([user("first <b>question</b>"), reply("the answer"), user("third")])
    view = pane.transcript
    view.setFocus()
    view.selectionModel().select(pane.model.index(0, 0), view.selectionModel().SelectionFlag.Select)
    view.selectionModel().select(pane.model.index(1, 0), view.selectionModel().SelectionFlag.Select)
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == "first <b>question</b>\n\nthe answer"


class Opened(QObject):
    """Receives what `QDesktopServices.openUrl` would open, per scheme."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    @Slot(QUrl)
    def handle(self, url: QUrl) -> None:
        self.urls.append(url.toString())


@pytest.fixture
def opened() -> Iterator[Opened]:
    receiver = Opened()
    schemes = ("https", "http", "file", "javascript", "mailto")
    for scheme in schemes:
        QDesktopServices.setUrlHandler(scheme, receiver, "handle")  # type: ignore[arg-type]
    try:
        yield receiver
    finally:
        for scheme in schemes:
            QDesktopServices.unsetUrlHandler(scheme)


def anchored(html: str, code: tuple[str, ...] = ()) -> TranscriptItem:
    """A reply whose rendering is given (the renderer's anchors, without the renderer)."""
    return TranscriptItem(
        Kind.ASSISTANT, "x", rendered=RenderedText(html=html, plain="x", code_blocks=code)
    )


def click_first_word(qtbot: QtBot, pane: ConversationPane, row: int) -> None:
    view = pane.transcript
    index = pane.model.index(row, 0)
    view.scrollTo(index)
    qtbot.wait(0)
    item = pane.model.item(row)
    rect = view.visualRect(index)
    frame = view.delegate.frame(item, rect, 200)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=frame.text + QPoint(4, 6))


def test_clicking_a_copy_anchor_copies_its_code_block(qtbot: QtBot, pane: ConversationPane) -> None:
    QGuiApplication.clipboard().setText("before")
    pane.model.append(anchored('<a href="converge-copy:0">Copy code</a>', ("print('hi')\n",)))
    click_first_word(qtbot, pane, 0)
    assert QGuiApplication.clipboard().text() == "print('hi')\n"


@pytest.mark.parametrize(
    ("href", "expected"),
    [
        ("https://example.com/a", ["https://example.com/a"]),
        ("javascript:alert(1)", []),
        ("file:///etc/passwd", []),
    ],
)
def test_a_link_opens_only_through_link_target_on_click(
    qtbot: QtBot, pane: ConversationPane, opened: Opened, href: str, expected: list[str]
) -> None:
    pane.model.append(anchored(f'<a href="{href}">a link here</a>'))
    view = pane.transcript
    item = pane.model.item(0)
    frame = view.delegate.frame(item, view.visualRect(pane.model.index(0, 0)), 200)
    qtbot.mouseMove(view.viewport(), frame.text + QPoint(4, 6))  # hovering opens nothing
    assert opened.urls == []
    assert view.anchor_at(frame.text + QPoint(4, 6)) == href
    click_first_word(qtbot, pane, 0)
    assert opened.urls == expected


def test_a_long_unbroken_word_wraps_inside_the_reading_column(
    qtbot: QtBot, pane: ConversationPane
) -> None:
    pane.resize(2_000, 700)
    pane.set_events([reply("x" * 3_000), user("y" * 3_000)])
    qtbot.waitUntil(lambda: pane.transcript.delegate.width > 1_500)
    view, delegate = pane.transcript, pane.transcript.delegate
    for row in range(2):
        item = pane.model.item(row)
        height, ideal = delegate.measure(item, view.font())
        frame = delegate.frame(item, view.visualRect(pane.model.index(row, 0)), ideal)
        assert ideal <= delegate.text_width(item) and frame.box.width() <= MAX_COLUMN
        assert height > 10 * view.fontMetrics().lineSpacing(), "wrapped onto many lines"
        left, width = delegate.column()
        assert abs((left + width / 2) - view.viewport().width() / 2) <= 1, "a centred column"


def test_a_rows_accessible_text_is_its_message(pane: ConversationPane) -> None:
    pane.set_events([user("Where do the trams stop?"), reply("At Ribeira.")])
    view = QAccessible.queryAccessibleInterface(pane.transcript)
    assert view is not None
    texts = [view.child(n).text(QAccessible.Text.Name) for n in range(view.childCount())]
    assert "You: Where do the trams stop?" in texts
    assert "Assistant: At Ribeira." in texts
    index: QModelIndex = pane.model.index(1, 0)
    assert index.data(TranscriptModel.TimeRole) == AT
    assert index.data(Qt.ItemDataRole.ToolTipRole), "a timestamp on hover"


def _spoken(pane: ConversationPane) -> list[str]:
    view = QAccessible.queryAccessibleInterface(pane.transcript)
    assert view is not None
    return [view.child(n).text(QAccessible.Text.Name) for n in range(view.childCount())]


def test_a_reply_is_read_as_its_rendered_words_not_its_markdown(pane: ConversationPane) -> None:
    pane.set_events(
        [
            reply(
                "# Boats\n\nEcho: **bold** and `code`, *soon*\n\n| day | at |\n|--|--|\n| Mon | 9 |"
            )
        ]
    )
    assert _spoken(pane) == ["Assistant: Boats\nEcho: bold and code, soon\nday, at\nMon, 9"]


def test_a_code_block_is_announced_as_code_in_its_language(pane: ConversationPane) -> None:
    pane.set_events([reply("Try:\n\n```python\nprint(1)\n```\n\n    plain")])
    assert _spoken(pane) == ["Assistant: Try:\nCode, python: print(1)\nCode: plain"]


def test_a_link_is_read_with_the_address_it_really_opens(pane: ConversationPane) -> None:
    pane.set_events(
        [reply("[The timetable](https://example.org/boats?day=mon) and <https://example.org>")]
    )
    assert _spoken(pane) == [
        "Assistant: The timetable (https://example.org/boats?day=mon) and https://example.org"
    ]


def test_your_own_message_is_read_as_you_typed_it(pane: ConversationPane) -> None:
    pane.set_events([user("Is **this** bold?")])
    assert _spoken(pane) == ["You: Is **this** bold?"]


def test_a_double_click_opens_a_selectable_copy_of_the_message_and_escape_closes_it(
    qtbot: QtBot, pane: ConversationPane
) -> None:
    pane.set_events([user("Where do the trams stop?"), reply("At Ribeira, by the river.")])
    view = pane.transcript
    index = pane.model.index(1, 0)
    qtbot.waitUntil(lambda: view.visualRect(index).height() > 0)
    where = view.visualRect(index).center()
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=where)
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=where)
    assert view.isPersistentEditorOpen(index)
    editor = view.indexWidget(index)
    assert isinstance(editor, QTextEdit) and editor.isReadOnly()
    assert editor.toPlainText() == "At Ribeira, by the river."
    assert len(view.viewport().findChildren(QTextEdit)) == 1
    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: view.indexWidget(index) is None)


def test_hovering_a_link_shows_its_target_and_opens_nothing(
    qtbot: QtBot, pane: ConversationPane, opened: Opened
) -> None:
    pane.model.append(anchored('<a href="https://example.com/a?b=<c>">a link here</a>'))
    view = pane.transcript
    frame = view.delegate.frame(pane.model.item(0), view.visualRect(pane.model.index(0, 0)), 200)
    pos = frame.text + QPoint(4, 6)
    help_event = QHelpEvent(QEvent.Type.ToolTip, pos, view.viewport().mapToGlobal(pos))
    QApplication.sendEvent(view.viewport(), help_event)
    shown = QTextDocument()
    shown.setHtml(QToolTip.text())
    assert shown.toPlainText() == "https://example.com/a?b=<c>", "the target, literally"
    assert opened.urls == []


def test_a_reply_that_grows_new_lines_grows_its_row(qtbot: QtBot, pane: ConversationPane) -> None:
    pane.set_events(long_transcript(100))
    pane.append_event(delta("The boats"))
    settle(qtbot, pane)
    view = pane.transcript
    last = pane.model.index(pane.model.rowCount() - 1, 0)
    before = view.visualRect(last).height()
    pane.append_event(delta("\nleave\nfrom\nRibeira."))
    qtbot.waitUntil(
        lambda: view.visualRect(last).height() > before + 2 * view.fontMetrics().height()
    )
    assert view.at_bottom(), "and the view follows it"


def test_the_renderers_copy_button_on_a_code_block_copies_the_block(
    qtbot: QtBot, pane: ConversationPane
) -> None:
    code = "def boats(day: str) -> list[str]:\n    return TIMETABLE[day]"
    pane.set_events([user("Show me"), reply(f"Here:\n\n```python\n{code}\n```\n")])
    view = pane.transcript
    index = pane.model.index(1, 0)
    qtbot.waitUntil(lambda: view.visualRect(index).height() > 0)
    rect = view.visualRect(index)
    spots = (
        QPoint(x, y) for y in range(rect.top(), rect.bottom(), 3) for x in range(0, rect.right(), 6)
    )
    where = next((p for p in spots if view.anchor_at(p) == "converge-copy:0"), None)
    assert where is not None, "the rendered reply offers a copy anchor"
    QGuiApplication.clipboard().setText("before")
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=where)
    assert QGuiApplication.clipboard().text() == code


def test_scrolling_places_only_the_rows_it_shows(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row laid out for the first time as it comes into view moves the rows after it; it
    does not make the view ask every row of the transcript for its height again, which a
    long conversation of code and tables paid on nearly every step of a scroll."""
    asked = [0]
    size_hint, size = TranscriptDelegate.sizeHint, TranscriptDelegate._size

    def counting_hint(self: TranscriptDelegate, option: Any, index: Any) -> Any:
        asked[0] += 1
        return size_hint(self, option, index)

    def counting_size(self: TranscriptDelegate, item: Any, font: Any, exact: bool) -> Any:
        asked[0] += 1
        return size(self, item, font, exact)

    # Patched before the pane exists: PySide6 looks a virtual's override up per instance.
    monkeypatch.setattr(TranscriptDelegate, "sizeHint", counting_hint)
    monkeypatch.setattr(TranscriptDelegate, "_size", counting_size)
    pane = ConversationPane()
    qtbot.addWidget(pane)
    pane.resize(900, 700)
    pane.show_session("ses_1", "Trip", "")
    pane.show()
    pane.set_events(code_and_tables(3_000))
    settle(qtbot, pane)
    view, bar = pane.transcript, pane.transcript.verticalScrollBar()
    bar.setValue(0)
    QApplication.processEvents()
    most = 0
    for _step in range(40):
        asked[0] = 0
        bar.setValue(bar.value() + view.viewport().height() // 2)
        view.viewport().repaint()
        QApplication.processEvents()
        most = max(most, asked[0])
    assert most < 200, f"a step asked {most} rows of {pane.model.rowCount()} for their height"


def test_scrolling_up_keeps_the_rows_in_view_where_the_scroll_puts_them(
    qtbot: QtBot, pane: ConversationPane
) -> None:
    """A row revealed above the top is laid out as it comes in; when it turns out taller or
    shorter than estimated, the rows being read still move by exactly the scroll."""
    pane.set_events(code_and_tables(2_000))
    settle(qtbot, pane)
    view, bar = pane.transcript, pane.transcript.verticalScrollBar()
    middle = QPoint(1, view.viewport().height() // 2)
    for _step in range(30):
        index = view.indexAt(middle)
        before = view.visualRect(index).top()
        bar.setValue(bar.value() - 100)
        view.viewport().repaint()
        QApplication.processEvents()
        assert view.visualRect(index).top() == before + 100
