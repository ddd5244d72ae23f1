"""The notice at the top of the conversation pane: one plain sentence ("Loading…", "Offline –
showing the copy saved on this device"), or a failed request named with the buttons that fix
it ([Open Settings] [Retry] [Save…]), its Details and a way to dismiss it.

A failure stays until the user dismisses it or the next action succeeds (`ui.window.action`
clears it): the status line below is rewritten by every sync pass, so the cause of a failed
send must not live only there. The words come from `ui.window.failure_words`; this is only the view.
Strings use the pane's translation context ("ConversationPane").
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QMessageBox,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ui.pane.items import text_label
from ui.text.plain import neutral
from ui.window.failure_words import Failure, Fix


def _tr(text: str) -> str:
    return QCoreApplication.translate("ConversationPane", text)


class PaneNotice(QWidget):
    """A sentence (`label`), and for a failure its fix buttons, Details and Dismiss."""

    dismissed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("bannerBox")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)  # its style's background
        self.failure: Failure | None = None
        self.owner = ""  # the action whose failure it is (its own success clears it)
        self.details_box: QMessageBox | None = None
        self.label = text_label("", "banner")
        self.label.setAccessibleName(QCoreApplication.translate("ConversationPane", "Notice"))
        self.buttons: dict[Fix, QPushButton] = {}
        self._actions: dict[Fix, Callable[[], object]] = {}
        self.details_button = QPushButton(QCoreApplication.translate("ConversationPane", "Details"))
        self.details_button.setObjectName("noticeDetails")
        self.details_button.setAccessibleName(
            QCoreApplication.translate("ConversationPane", "Show the details of the failure")
        )
        self.details_button.clicked.connect(self._show_details)
        self.dismiss_button = QToolButton()
        self.dismiss_button.setObjectName("noticeDismiss")
        self.dismiss_button.setText("✕")
        self.dismiss_button.setAutoRaise(True)
        self.dismiss_button.setAccessibleName(
            QCoreApplication.translate("ConversationPane", "Dismiss the notice")
        )
        self.dismiss_button.setToolTip(QCoreApplication.translate("ConversationPane", "Dismiss"))
        self.dismiss_button.clicked.connect(self._dismiss)

        self._row = QHBoxLayout()
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.setSpacing(8)
        for fix in Fix:
            button = QPushButton(_tr(fix.value))
            button.setObjectName(f"notice{fix.name.title()}")
            button.clicked.connect(lambda _=False, f=fix: self._choose(f))
            button.hide()
            self.buttons[fix] = button
            self._row.addWidget(button)
        self._row.addWidget(self.details_button)
        self._row.addStretch(1)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.label, 1)
        top.addWidget(self.dismiss_button, 0, Qt.AlignmentFlag.AlignTop)
        column = QVBoxLayout(self)
        column.setContentsMargins(24, 10, 24, 4)
        column.setSpacing(6)
        column.addLayout(top)
        column.addLayout(self._row)
        self.show_text("")

    def show_text(self, text: str) -> None:
        """One sentence and nothing to do about it ("" hides the notice)."""
        self.failure = None
        self.owner = ""
        self._actions = {}
        self._set(text, ())
        self.dismiss_button.hide()
        self.details_button.hide()

    def show_failure(
        self,
        failure: Failure,
        actions: Mapping[Fix, Callable[[], object]] | None = None,
        owner: str = "",
    ) -> None:
        """A failed request: its words, a button per fix that has an action here, Details
        and Dismiss. It stays until dismissed or replaced."""
        self.failure = failure
        self.owner = owner
        self._actions = dict(actions or {})
        self._set(failure.words, [fix for fix in failure.fixes if fix in self._actions])
        self.dismiss_button.show()
        self.details_button.setVisible(bool(failure.details))

    def offered(self) -> list[Fix]:
        """The fix buttons shown now, in order (tests and screen readers)."""
        return [fix for fix, button in self.buttons.items() if not button.isHidden()]

    def _set(self, text: str, fixes: Collection[Fix]) -> None:
        self.label.setText(neutral(text))  # the words may quote the server
        for fix, button in self.buttons.items():
            button.setVisible(fix in fixes)
        self.setVisible(bool(text))
        self.label.setVisible(bool(text))

    def _choose(self, fix: Fix) -> None:
        action = self._actions.get(fix)
        if action is not None:
            action()

    def _dismiss(self) -> None:
        self.show_text("")
        self.dismissed.emit()

    def _show_details(self) -> None:
        from ui.dialogs.dialogs import build_details_box

        if self.failure is None:
            return
        box = build_details_box(
            self,
            QCoreApplication.translate("ConversationPane", "Details"),
            self.failure.words,
            self.failure.details,
        )
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        box.show()  # non-modal: no nested event loop (PITFALLS §4)
        self.details_box = box
