"""The window's dialogs, shown without a nested event loop.

Under qasync, `QDialog.exec()` inside a coroutine starves every other task (PITFALLS §4), so
each dialog is opened with `open()` and awaited through a future that its `finished` signal
resolves (`run_dialog`). The `build_*` functions only construct a dialog (the screenshot
script grabs them); `Prompts` shows them and is the one seam the controller calls, so tests
can click the real buttons of `Prompts.current` (or replace a method).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QLocale, QObject, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QDialog,
    QLabel,
    QMessageBox,
    QPushButton,
    QWidget,
)

from sync import wording
from ui.dialogs.settings import ConnectionSettings, SettingsDialog
from ui.text.plain import isolate, neutral, plain_tooltip
from ui.theme.theme import Appearance
from ui.window import delete_words

DELETE_EVERYWHERE = delete_words.DELETE_EVERYWHERE
CANCEL = delete_words.CANCEL
# Source strings; shown through `_tr()` (context "Dialogs"), so a translation changes them.
STOP_RUN_AND_DELETE = str(QT_TRANSLATE_NOOP("Dialogs", "Stop Run and Delete"))
RETRY = str(QT_TRANSLATE_NOOP("Dialogs", "Retry"))
EXPORT = str(QT_TRANSLATE_NOOP("Dialogs", "Export…"))
UNREACHABLE = str(QT_TRANSLATE_NOOP("Dialogs", "Couldn't reach the server. Nothing was deleted."))
NOT_CONFIRMED = str(QT_TRANSLATE_NOOP("Dialogs", "The server didn't confirm the delete."))
LIST_LIMIT = 6
RESULT_LINES = 12
# QMessageBox's own labels: a bold question, a readable width for the explanation. The
# question has no minimum width: QMessageBox wraps it only when the box would grow past half
# the screen, and a minimum let a wide screen keep it on one line, cut at the label's edge.
BOX_STYLE = """
QLabel#qt_msgbox_label { font-weight: 600; max-width: 460px; }
QLabel#qt_msgbox_informativelabel { min-width: 360px; max-width: 460px; }
QPushButton[destructive="true"] {
    color: white;
    background: #c4314b;
    border: 1px solid #a3283e;
    border-radius: 5px;
    padding: 5px 14px;
}
QPushButton[destructive="true"]:hover { background: #b02a42; }
QPushButton[destructive="true"]:focus { border: 2px solid palette(highlight); }
"""
DELETE_MANY_TITLE = str(QT_TRANSLATE_NOOP("Dialogs", "Delete conversations?"))


def _tr(text: str) -> str:
    """A known sentence in the user's language (unknown ones, e.g. with a title, as is)."""
    return QCoreApplication.translate("Dialogs", text)


async def run_dialog(dialog: QDialog, on_open: Callable[[QDialog], None] | None = None) -> int:
    """Show `dialog` window-modally with `open()` and wait for it to finish."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[int] = loop.create_future()

    def finished(result: int) -> None:
        if not future.done():
            future.set_result(result)

    dialog.finished.connect(finished)
    focus = QApplication.focusWidget()  # where the keyboard was: it goes back there after
    dialog.open()
    if on_open is not None:
        on_open(dialog)
    try:
        return await future
    finally:
        dialog.finished.disconnect(finished)
        if dialog.isVisible():
            dialog.reject()
        _restore_focus(focus)


def _restore_focus(widget: QWidget | None) -> None:
    """Give the keyboard back to `widget` when it can still take it (it may have been
    hidden or deleted while the dialog was open)."""
    if widget is None:
        return
    try:
        usable = widget.isVisible() and widget.isEnabled()
    except RuntimeError:  # deleted meanwhile
        return
    if usable:
        if QApplication.activeWindow() is not widget.window():
            widget.window().activateWindow()  # not every platform gives it back by itself
        widget.setFocus(Qt.FocusReason.OtherFocusReason)


#: A word longer than this gets break opportunities (a zero-width space every so often).
LONG_WORD = 24
_ZWSP = "\u200b"


def breakable(text: str, limit: int = LONG_WORD) -> str:
    """`text` with a zero-width space inside every run of more than `limit` characters
    without a space, so that a word-wrapped label wraps a 200-character token (a hash, a
    URL, a title without spaces) instead of growing wider than the screen or clipping it.
    Words of normal length are left alone, so they still wrap only between words."""
    out: list[str] = []
    run = 0
    for char in text:
        if char.isspace():
            run = 0
        elif run >= limit:
            out.append(_ZWSP)
            run = 0
        else:
            run += 1
        out.append(char)
    return "".join(out)


def _quote(title: str) -> str:
    """A title inside our sentence: isolated, so it cannot reorder the words around it."""
    return f"“{isolate(title)}”"


def _names(titles: Sequence[str]) -> str:
    shown = [f"•  {isolate(title)}" for title in titles[:LIST_LIMIT]]
    if len(titles) > LIST_LIMIT:
        shown.append(f"…and {len(titles) - LIST_LIMIT} more")
    return "\n".join(shown)


def _message_box(
    parent: QWidget | None, icon: QMessageBox.Icon, title: str, text: str, info: str
) -> QMessageBox:
    box = QMessageBox(parent)
    box.setIcon(icon)
    box.setWindowTitle(_tr(title))
    box.setText(breakable(_tr(text)))
    box.setInformativeText(breakable(_tr(info)))
    # Plain text, both labels (Qt sets the informative one too, since it exists by now):
    # the titles and reasons are the server's, never markup (CONTRACT §10.1).
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setWindowModality(Qt.WindowModality.WindowModal)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)
    box.setStyleSheet(BOX_STYLE)
    # Both labels wrap (a long title, a long error text) instead of being cut at the
    # dialog's edge; `breakable` lets a long unbroken word wrap anywhere too.
    for name in ("qt_msgbox_label", "qt_msgbox_informativelabel"):
        label = box.findChild(QLabel, name)
        if label is not None:
            label.setWordWrap(True)
    box.setAccessibleName(box.windowTitle())  # translated above
    box.setAccessibleDescription(text)
    return box


def _add_button(box: QMessageBox, text: str, role: QMessageBox.ButtonRole) -> QPushButton:
    """A button shown translated; its object name keeps the source text, which is what
    `Prompts` compares (so a translation never changes what a click means)."""
    button = box.addButton(_tr(text), role)
    button.setObjectName(text)
    return button


def _destructive(button: QAbstractButton) -> QAbstractButton:
    """Styled as destructive (red), like the platform's destructive buttons."""
    button.setProperty("destructive", True)
    # The box polished its buttons while laying them out: re-polish for the new property.
    button.style().unpolish(button)
    button.style().polish(button)
    return button


def _accessible(button: QAbstractButton, description: str) -> QAbstractButton:
    button.setAccessibleName(button.text())
    button.setAccessibleDescription(_tr(description))
    return button


def build_delete_box(
    parent: QWidget | None, titles: Sequence[str], *, export: bool = False
) -> QMessageBox:
    """The confirmation before a delete. Cancel is the default; Escape cancels. With
    `export`, an "Export…" button keeps a copy first (the dialog comes back afterwards)."""
    if len(titles) == 1:
        text = delete_words.question(isolate(titles[0]))
        info = delete_words.consequences(1)
    else:
        text = delete_words.question(None, len(titles))
        info = f"{_names(titles)}\n\n{delete_words.consequences(len(titles))}"
    heading = delete_words.CONFIRM_TITLE if len(titles) == 1 else DELETE_MANY_TITLE
    box = _message_box(parent, QMessageBox.Icon.Warning, heading, text, info)
    delete = _add_button(box, DELETE_EVERYWHERE, QMessageBox.ButtonRole.DestructiveRole)
    cancel = _add_button(box, CANCEL, QMessageBox.ButtonRole.RejectRole)
    _destructive(delete)
    _accessible(delete, "Delete the conversation from the server and every device")
    _accessible(cancel, "Keep the conversation")
    if export:
        keep = _add_button(box, EXPORT, QMessageBox.ButtonRole.ActionRole)
        _accessible(keep, "Save a copy of the conversation and its files first")
    box.setDefaultButton(cancel)
    box.setEscapeButton(cancel)
    cancel.setFocus()
    box.setObjectName("deleteConfirmation")
    return box


def build_delete_running_box(
    parent: QWidget | None, title: str, active_run_id: str | None
) -> QMessageBox:
    """The confirmation for a conversation known to be running: the one choice that can
    work is offered at once (a plain delete would only meet the server's 409)."""
    info = f"{delete_words.running_info()}\n\n{delete_words.consequences(1)}"
    box = _message_box(
        parent,
        QMessageBox.Icon.Warning,
        delete_words.CONFIRM_TITLE,
        delete_words.question(isolate(title)),
        info,
    )
    _offer_stop_run(box, active_run_id).setFocus()
    box.setObjectName("deleteConfirmation")
    return box


def _offer_stop_run(box: QMessageBox, active_run_id: str | None) -> QPushButton:
    """Stop Run and Delete (destructive) beside Cancel (the default); returns Cancel."""
    if active_run_id:
        box.setToolTip(plain_tooltip(f"Active run: {isolate(active_run_id)}"))
    stop = _add_button(box, STOP_RUN_AND_DELETE, QMessageBox.ButtonRole.DestructiveRole)
    cancel = _add_button(box, CANCEL, QMessageBox.ButtonRole.RejectRole)
    _destructive(stop)
    _accessible(stop, "Stop the run, wait for it to end, then delete the conversation everywhere")
    _accessible(cancel, "Keep the conversation and let the run continue")
    box.setDefaultButton(cancel)
    box.setEscapeButton(cancel)
    return cancel


def build_run_in_progress_box(
    parent: QWidget | None, title: str, active_run_id: str | None
) -> QMessageBox:
    """Shown on 409: the delete did nothing; stopping the run is a separate, explicit step."""
    box = _message_box(
        parent,
        QMessageBox.Icon.Information,
        delete_words.RUN_IN_PROGRESS,
        delete_words.still_running(_quote(title)),
        delete_words.RUN_IN_PROGRESS_INFO,
    )
    _offer_stop_run(box, active_run_id)
    box.setObjectName("runInProgress")
    return box


def build_unreachable_box(
    parent: QWidget | None, titles: Sequence[str], reason: str, *, unconfirmed: bool = False
) -> QMessageBox:
    """Shown when the delete did not happen (no connection, a 5xx), or, `unconfirmed`, when
    it was sent but its answer was lost (CONTRACT §9.2: it may have happened). Either way the
    row is kept and retrying is safe."""
    reason = neutral(reason)  # the server's words inside our sentence
    detail = f"{reason.rstrip('.')}." if reason else ""
    if unconfirmed:
        headline = NOT_CONFIRMED
        info = wording.delete_not_confirmed(detail or "the answer was lost.")
    else:
        headline = UNREACHABLE
        quoted = _quote(titles[0]) if len(titles) == 1 else None
        info = delete_words.kept(detail, quoted, len(titles))
    box = _message_box(
        parent,
        QMessageBox.Icon.Warning,
        delete_words.NOT_CONFIRMED_TITLE if unconfirmed else delete_words.FAILED_TITLE,
        headline,
        info.strip(),
    )
    retry = _add_button(box, RETRY, QMessageBox.ButtonRole.AcceptRole)
    cancel = _add_button(box, CANCEL, QMessageBox.ButtonRole.RejectRole)
    _accessible(retry, "Try the delete again")
    _accessible(cancel, "Keep the conversation")
    box.setDefaultButton(retry)
    box.setEscapeButton(cancel)
    box.setObjectName("deleteUnreachable")
    return box


def results_summary(lines: Sequence[tuple[str, bool, str]]) -> tuple[str, str]:
    """A bulk delete's result, (headline, details), for the status line and its "Details":
    one line per conversation (title, removed?, what happened), or for many the failures by
    name and the successes counted."""
    deleted = sum(1 for _, ok, _ in lines if ok)
    if deleted == len(lines):
        text = QCoreApplication.translate(
            "Dialogs", "Deleted %n conversations everywhere.", None, len(lines)
        )
    else:
        text = QCoreApplication.translate(
            "Dialogs", "{0} of %n conversations deleted. The others are kept.", None, len(lines)
        ).format(QLocale().toString(deleted))
    if len(lines) <= RESULT_LINES:
        body = "\n".join(
            f"{'✓' if ok else '✗'}  {isolate(title)} — {neutral(result)}"
            for title, ok, result in lines
        )
    else:
        failures = [
            f"✗  {isolate(title)} — {neutral(result)}" for title, ok, result in lines if not ok
        ]
        shown = failures[:RESULT_LINES]
        if len(failures) > RESULT_LINES:
            more = len(failures) - RESULT_LINES
            shown.append(
                QCoreApplication.translate("Dialogs", "…and %n more not deleted", None, more)
            )
        done = QCoreApplication.translate("Dialogs", "%n deleted", None, deleted)
        body = "\n".join([f"✓  {done}", *shown])
    return text, body


def build_details_box(parent: QWidget | None, title: str, text: str, details: str) -> QMessageBox:
    """What "Details" shows next to a status or banner: the technical words, non-modal
    (the server's words, so without bidi controls of their own)."""
    box = _message_box(parent, QMessageBox.Icon.Information, title, neutral(text), neutral(details))
    box.setWindowModality(Qt.WindowModality.NonModal)
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    box.addButton(QMessageBox.StandardButton.Close)
    box.setObjectName("details")
    return box


def build_error_box(parent: QWidget | None, title: str, text: str, info: str = "") -> QMessageBox:
    """A plain error in words (never a traceback); they may quote the server."""
    box = _message_box(parent, QMessageBox.Icon.Warning, title, neutral(text), neutral(info))
    box.addButton(QMessageBox.StandardButton.Ok)
    box.setObjectName("errorMessage")
    return box


class Prompts(QObject):
    """The dialogs the controller awaits; `current` is the one on screen."""

    shown = Signal(QDialog)

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self._parent = parent
        self.current: QDialog | None = None

    async def _show(self, dialog: QDialog) -> int:
        self.current = dialog
        try:
            return await run_dialog(dialog, self.shown.emit)
        finally:
            self.current = None
            dialog.deleteLater()

    async def _choice(self, box: QMessageBox, accept_text: str) -> bool:
        await self._show(box)
        clicked = box.clickedButton()
        return clicked is not None and clicked.objectName() == accept_text

    async def confirm_delete(self, titles: Sequence[str]) -> bool:
        """True only when the user chose "Delete Everywhere"."""
        return await self._choice(build_delete_box(self._parent, titles), DELETE_EVERYWHERE)

    async def choose_delete(self, titles: Sequence[str], *, export: bool) -> str:
        """ "delete", "export" (keep a copy first, then ask again) or "cancel"."""
        box = build_delete_box(self._parent, titles, export=export)
        await self._show(box)
        clicked = box.clickedButton()
        text = clicked.objectName() if clicked is not None else ""
        return {DELETE_EVERYWHERE: "delete", EXPORT: "export"}.get(text, "cancel")

    async def confirm_delete_running(self, title: str, active_run_id: str | None) -> bool:
        """For a row known to be running: True only for "Stop Run and Delete"."""
        box = build_delete_running_box(self._parent, title, active_run_id)
        return await self._choice(box, STOP_RUN_AND_DELETE)

    async def offer_stop_and_delete(self, title: str, active_run_id: str | None) -> bool:
        box = build_run_in_progress_box(self._parent, title, active_run_id)
        return await self._choice(box, STOP_RUN_AND_DELETE)

    async def offer_retry(
        self, titles: Sequence[str], reason: str, *, unconfirmed: bool = False
    ) -> bool:
        box = build_unreachable_box(self._parent, titles, reason, unconfirmed=unconfirmed)
        return await self._choice(box, RETRY)

    async def show_error(self, title: str, text: str, info: str = "") -> None:
        await self._show(build_error_box(self._parent, title, text, info))

    async def edit_settings(
        self,
        current: ConnectionSettings,
        in_use: str = "",
        *,
        enter_sends: bool = True,
        token_storage: str = "",
        demo_token: str = "",
        language: str = "",
        token_override: str = "",
    ) -> tuple[ConnectionSettings, bool, Appearance, str] | None:
        """(connection settings, Enter sends?, appearance, language) when saved, None when
        cancelled."""
        dialog = SettingsDialog(
            self._parent,
            current,
            in_use,
            enter_sends=enter_sends,
            token_storage=token_storage,
            demo_token=demo_token,
            language=language,
            token_override=token_override,
        )
        result = await self._show(dialog)
        if result != QDialog.DialogCode.Accepted:
            return None
        return (
            dialog.values(),
            dialog.enter_sends.isChecked(),
            dialog.appearance.chosen(),
            dialog.language.code(),
        )
