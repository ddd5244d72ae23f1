"""The transcript as a list model: one row per thing the pane shows.

A row is a `TranscriptItem`: a message (the user's or the assistant's), a card (a tool that
ran, an approval, a file) or a quiet note (a memory, "Stopped.", a run that failed). Items
are plain data, built from the events' typed payloads (`ui/pane/transcript_events.py`); the
delegate paints them (`ui/pane/transcript_delegate.py`), the view scrolls and copies them
(`ui/pane/transcript_view.py`). Nothing here is a widget, so a conversation of 20,000 messages
costs 20,000 small objects, not 60,000 widgets.

Changes are row-level, the way a view can follow them cheaply: new events are row inserts
(`append`), a streamed delta changes only its own row (`append_text`, one `dataChanged`),
a whole transcript is a reset to its newest rows (`reset`) and inserts of its older rows
above them (`prepend`).

Every row answers the accessibility roles with its words ("You: …", "Assistant: …"), so
a screen reader reads the message itself, not a name for it: a reply's words as rendered
(`ui.text.spoken`, no Markdown marks), your own as you typed them, which is how they show.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QT_TRANSLATE_NOOP,
    QAbstractListModel,
    QCoreApplication,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSize,
    Qt,
)

from ui.sidebar.relative_time import full_time
from ui.text.rich_text import RenderedText, render_message, render_typed

if TYPE_CHECKING:
    from ui.text.streamed_text import StreamedRender

type AnyIndex = QModelIndex | QPersistentModelIndex

_serials = itertools.count(1)


class Kind(StrEnum):
    """What a row is; the delegate draws each kind its own way."""

    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    APPROVAL = "approval"
    ARTIFACT = "artifact"
    NOTE = "note"
    ERROR = "error"
    MEMORY = "memory"


MESSAGES = frozenset({Kind.USER, Kind.ASSISTANT})
CARDS = frozenset({Kind.TOOL, Kind.APPROVAL, Kind.ARTIFACT})

# Who says a row, for assistive technology (context "ConversationPane").
_SPEAKERS = {
    Kind.USER: str(QT_TRANSLATE_NOOP("ConversationPane", "You")),
    Kind.ASSISTANT: str(QT_TRANSLATE_NOOP("ConversationPane", "Assistant")),
    Kind.TOOL: str(QT_TRANSLATE_NOOP("ConversationPane", "Tool")),
    Kind.APPROVAL: str(QT_TRANSLATE_NOOP("ConversationPane", "Approval")),
    Kind.ARTIFACT: str(QT_TRANSLATE_NOOP("ConversationPane", "File")),
    Kind.NOTE: str(QT_TRANSLATE_NOOP("ConversationPane", "Note")),
    Kind.ERROR: str(QT_TRANSLATE_NOOP("ConversationPane", "Note")),
    Kind.MEMORY: str(QT_TRANSLATE_NOOP("ConversationPane", "Memory")),
}
_DESCRIPTIONS = {
    Kind.USER: str(QT_TRANSLATE_NOOP("ConversationPane", "Your message")),
    Kind.ASSISTANT: str(QT_TRANSLATE_NOOP("ConversationPane", "Assistant's reply")),
}


def tr(text: str) -> str:
    return QCoreApplication.translate("ConversationPane", text)


@dataclass(eq=False, slots=True)
class TranscriptItem:
    """One row. `text` is a message's text, or a card's heading, or a note's words;
    `detail` is a card's second line (a tool's output, a decision). `key` is what the row's
    buttons act on (an approval or artifact id); `buttons` says whether it offers them."""

    kind: Kind
    text: str
    detail: str = ""
    created_at: str = ""
    run_id: str | None = None
    key: str | None = None
    name: str = ""
    buttons: bool = False
    rendered: RenderedText | None = None  # given: a fixed rendering (a test's anchors)
    streaming: bool = False  # a reply still growing: rendered piece by piece
    truncated: bool = False  # a streamed reply cut at `MAX_STREAMED_CHARS`: says so
    uncoloured: bool = False  # rendered with a code block whose lexer was still loading
    serial: int = field(default_factory=lambda: next(_serials))
    version: int = 0  # bumped on every change of the words: the delegate's cache key
    #: The delegate's measure: (epoch, version, height, ideal width, exact).
    size: tuple[int, int, int, int, bool] | None = None
    hint: QSize | None = None  # the size hint made from `size`, handed out again
    _rendered_for: tuple[int, bool] | None = None
    _spoken: tuple[int, str] | None = None  # (version, words)
    _fixed: bool = False
    _streamed: StreamedRender | None = None

    def __post_init__(self) -> None:
        self._fixed = self.rendered is not None

    def render(self, dark: bool) -> RenderedText:
        """The message's rich text (cached until its words or the colour scheme change):
        your own message as you typed it, a reply's Markdown rendered.

        While a reply streams, only its growing tail is rendered again per piece
        (`ui.text.streamed_text`); once it has ended, the whole reply is rendered once."""
        if self._fixed and self.rendered is not None:
            return self.rendered
        if self.rendered is None or self._rendered_for != (self.version, dark):
            rendered = render_typed(self.text) if self.kind == Kind.USER else self._reply(dark)
            if self.truncated:
                rendered = replace(rendered, html=rendered.html + _too_long_html(dark))
            self.rendered = rendered
            self._rendered_for = (self.version, dark)
        return self.rendered

    def _reply(self, dark: bool) -> RenderedText:
        if self.streaming:
            if self._streamed is None:
                from ui.text.streamed_text import StreamedRender  # loads Markdown: 0216

                self._streamed = StreamedRender()
            render = self._streamed.render
        else:
            self._streamed = None
            render = render_message
        from ui.text import code_highlight  # loaded with the Markdown renderer

        misses = code_highlight.misses
        rendered = render(self.text, dark=dark)
        self.uncoloured |= code_highlight.misses != misses
        return rendered

    def recolour(self) -> None:
        """Render the words again (a lexer its code waited for is loaded): a new version is
        a new document and a new height, and a streamed reply's settled pieces go too."""
        self.uncoloured = False
        self._streamed = None
        self.version += 1

    @property
    def plain(self) -> str:
        """What copying gives and a screen reader says."""
        if self.kind in MESSAGES:
            current = self._fixed or (
                self._rendered_for is not None and self._rendered_for[0] == self.version
            )
            return self.rendered.plain if current and self.rendered is not None else self.text
        return f"{self.text}\n{self.detail}" if self.detail else self.text

    @property
    def spoken(self) -> str:
        """What a screen reader says: a reply's rendered words, anything else its plain
        text (which is what it shows)."""
        if self.kind != Kind.ASSISTANT:
            return self.plain
        if self._spoken is None or self._spoken[0] != self.version:
            # Imported here: the Markdown parser loads after the first paint (decision 0216).
            from ui.text.spoken import spoken

            self._spoken = (self.version, spoken(self.text))
        return self._spoken[1]


def _too_long_html(dark: bool) -> str:
    from ui.text.streamed_text import note_html

    words = QCoreApplication.translate(
        "ConversationPane", "This reply is too long to show in full here."
    )
    return note_html(words, dark=dark)


class TranscriptModel(QAbstractListModel):
    """The rows of one conversation's transcript."""

    ItemRole = Qt.ItemDataRole.UserRole + 1
    KindRole = Qt.ItemDataRole.UserRole + 2
    DetailRole = Qt.ItemDataRole.UserRole + 3
    KeyRole = Qt.ItemDataRole.UserRole + 4
    TimeRole = Qt.ItemDataRole.UserRole + 5

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._items: list[TranscriptItem] = []
        self._rows: dict[int, int] = {}  # serial -> row

    # --- reading ------------------------------------------------------------------------

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._items)

    @property
    def rows(self) -> list[TranscriptItem]:
        """The rows themselves, in order (read-only: change them through the methods)."""
        return self._items

    def item(self, row: int) -> TranscriptItem:
        return self._items[row]

    def items(self) -> list[TranscriptItem]:
        return list(self._items)

    def row_of(self, item: TranscriptItem) -> int:
        return self._rows.get(item.serial, -1)

    def index_of(self, item: TranscriptItem) -> QModelIndex:
        row = self.row_of(item)
        return self.index(row, 0) if row >= 0 else QModelIndex()

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._items):
            return None
        item = self._items[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return item.plain
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"{tr(_SPEAKERS[item.kind])}: {item.spoken}"
        if role == Qt.ItemDataRole.AccessibleDescriptionRole:
            words = _DESCRIPTIONS.get(item.kind)
            return tr(words) if words else tr(_SPEAKERS[item.kind])
        if role == Qt.ItemDataRole.ToolTipRole:
            return full_time(item.created_at) if item.created_at else None
        if role == self.ItemRole:
            return item
        if role == self.KindRole:
            return str(item.kind)
        if role == self.DetailRole:
            return item.detail
        if role == self.KeyRole:
            return item.key
        if role == self.TimeRole:
            return item.created_at
        return None

    # --- changing -----------------------------------------------------------------------

    def reset(self, items: Iterable[TranscriptItem]) -> None:
        """A whole transcript: one reset, however long."""
        self.beginResetModel()
        self._items = list(items)
        self._rows = {item.serial: row for row, item in enumerate(self._items)}
        self.endResetModel()

    def prepend(self, items: list[TranscriptItem]) -> None:
        """Older rows, above the ones shown (an open bringing in its history)."""
        if not items:
            return
        self.beginInsertRows(QModelIndex(), 0, len(items) - 1)
        self._items[0:0] = items
        self._rows = {item.serial: row for row, item in enumerate(self._items)}
        self.endInsertRows()

    def append(self, item: TranscriptItem) -> None:
        row = len(self._items)
        self.beginInsertRows(QModelIndex(), row, row)
        self._items.append(item)
        self._rows[item.serial] = row
        self.endInsertRows()

    def append_text(self, item: TranscriptItem, text: str) -> None:
        """A streamed piece: only this row changes."""
        self.set_text(item, item.text + text)

    def set_text(self, item: TranscriptItem, text: str, *, truncated: bool | None = None) -> None:
        """New words (and whether they were cut at the streamed bound)."""
        cut = item.truncated if truncated is None else truncated
        if text != item.text or cut != item.truncated:
            item.text, item.truncated = text, cut
            item.version += 1
            self._changed(item)

    def end_stream(self, item: TranscriptItem) -> None:
        """A streamed reply is complete: it is rendered whole from now on."""
        if item.streaming:
            item.streaming = False
            item.version += 1
            self._changed(item)

    def set_detail(self, item: TranscriptItem, detail: str, *, buttons: bool | None = None) -> None:
        """A card's second line (and whether it still offers its buttons)."""
        item.detail = detail
        if buttons is not None:
            item.buttons = buttons
        item.version += 1
        self._changed(item)

    def recolour(self) -> bool:
        """Every row rendered with a code block left uncoloured while its lexer loaded, to
        be rendered again; whether there was any."""
        waiting = [item for item in self._items if item.uncoloured]
        for item in waiting:
            item.recolour()
        return bool(waiting)

    def _changed(self, item: TranscriptItem) -> None:
        index = self.index_of(item)
        if index.isValid():
            self.dataChanged.emit(index, index)
