"""The main window's actions and toolbar: New, Refresh, Delete, Settings, Keyboard
Shortcuts, Search and Quit, their shortcuts and their tinted Lucide icons (`ui.theme.icons`).

Next and Previous conversation (Ctrl+Page Down / Up, Alt+Down / Up) walk the list from
anywhere in the window. Quit (Ctrl+Q, the platform's Quit key where it has one) closes the
window, the same orderly shutdown as the title bar's close button (`MainWindow.closed`); F1
or Ctrl+/ lists every shortcut the window's actions have (`ui.dialogs.shortcuts`).
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QSize, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QSizePolicy, QToolBar, QToolButton, QWidget

from ui.theme.icons import TOOLBAR_SIZE, ActionIcons

_CHORD = (
    Qt.KeyboardModifier.ControlModifier
    | Qt.KeyboardModifier.MetaModifier
    | Qt.KeyboardModifier.AltModifier
)


def _is_chord(key: QKeySequence) -> bool:
    """A key pressed with Ctrl, Meta or Alt (not a key of its own, such as Exit)."""
    if key.isEmpty():
        return False
    first = key[0]  # type: ignore[index]  # PySide6's stubs lack QKeySequence.__getitem__
    return bool(first.keyboardModifiers() & _CHORD)


def quit_keys(platform: list[QKeySequence] | None = None) -> list[QKeySequence]:
    """The platform's Quit keys that a keyboard types (a chord: X11 also binds the Exit
    key, which keyboards lack and the shortcuts list would name), and Ctrl+Q where the
    platform has none. `platform`: the platform's bindings (the tests give their own)."""
    if platform is None:
        platform = QKeySequence.keyBindings(QKeySequence.StandardKey.Quit)
    keys = [key for key in platform if _is_chord(key)]
    ctrl_q = QKeySequence("Ctrl+Q")
    if not any(key.matches(ctrl_q) == QKeySequence.SequenceMatch.ExactMatch for key in keys):
        keys = [*keys, ctrl_q]
    return keys


class WindowActions:
    """The actions of `window` (a `MainWindow`), its toolbar, and the icons they wear."""

    def __init__(self, window: QMainWindow, delete_scope: QWidget) -> None:
        self.icons = ActionIcons()
        self.new = QAction(QCoreApplication.translate("MainWindow", "New Conversation"), window)
        self.new.setShortcut(QKeySequence(QKeySequence.StandardKey.New))
        self.new.setToolTip(
            QCoreApplication.translate("MainWindow", "Start a new conversation (Ctrl+N)")
        )
        self.icons.add(self.new, "square-pen")

        self.refresh = QAction(QCoreApplication.translate("MainWindow", "Refresh"), window)
        self.refresh.setShortcuts([QKeySequence("F5"), QKeySequence("Ctrl+R")])
        self.refresh.setToolTip(
            QCoreApplication.translate("MainWindow", "Sync with the server now (F5)")
        )
        self.icons.add(self.refresh, "refresh-cw")

        self.delete = QAction(QCoreApplication.translate("MainWindow", "Delete"), window)
        self.delete.setShortcuts(
            [QKeySequence(QKeySequence.StandardKey.Delete), QKeySequence("Ctrl+Backspace")]
        )
        # Only from the list: in the filter or the composer, Delete edits text.
        self.delete.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        delete_scope.addAction(self.delete)
        self.icons.add(self.delete, "trash-2")

        self.settings = QAction(QCoreApplication.translate("MainWindow", "Settings…"), window)
        self.settings.setShortcuts(
            [QKeySequence(QKeySequence.StandardKey.Preferences), QKeySequence("Ctrl+,")]
        )
        self.settings.setToolTip(
            QCoreApplication.translate("MainWindow", "Connection, appearance and sending (Ctrl+,)")
        )
        self.icons.add(self.settings, "settings")

        self.shortcuts = QAction(
            QCoreApplication.translate("MainWindow", "Keyboard Shortcuts"), window
        )
        self.shortcuts.setShortcuts([QKeySequence("F1"), QKeySequence("Ctrl+/")])
        self.shortcuts.setToolTip(
            QCoreApplication.translate("MainWindow", "Keyboard shortcuts (F1)")
        )
        self.icons.add(self.shortcuts, "keyboard")

        self.find = QAction(QCoreApplication.translate("MainWindow", "Search"), window)
        self.find.setShortcut(QKeySequence(QKeySequence.StandardKey.Find))
        window.addAction(self.find)

        self.quit = QAction(QCoreApplication.translate("MainWindow", "Quit"), window)
        self.quit.setShortcuts(quit_keys())
        self.quit.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
        self.quit.triggered.connect(window.close)  # the close button's orderly shutdown
        window.addAction(self.quit)
        self.icons.add(self.quit, "log-out")

        # Through the conversations from anywhere, as tabs go in a browser.
        self.next = QAction(QCoreApplication.translate("MainWindow", "Next conversation"), window)
        self.next.setShortcuts([QKeySequence("Ctrl+PgDown"), QKeySequence("Alt+Down")])
        window.addAction(self.next)
        self.previous = QAction(
            QCoreApplication.translate("MainWindow", "Previous conversation"), window
        )
        self.previous.setShortcuts([QKeySequence("Ctrl+PgUp"), QKeySequence("Alt+Up")])
        window.addAction(self.previous)

        for action, _name in self.icons.named():
            action.setIconVisibleInMenu(True)  # the app turns menu icons off by default

        toolbar = QToolBar(QCoreApplication.translate("MainWindow", "Main"))
        toolbar.setObjectName("toolbar")
        toolbar.setMovable(False)
        toolbar.setFloatable(False)
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        toolbar.setIconSize(QSize(TOOLBAR_SIZE, TOOLBAR_SIZE))
        toolbar.setAccessibleName(QCoreApplication.translate("MainWindow", "Main toolbar"))
        toolbar.addAction(self.new)
        toolbar.addAction(self.refresh)
        toolbar.addAction(self.delete)
        spacer = QWidget()
        spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        toolbar.addWidget(spacer)
        toolbar.addAction(self.settings)
        toolbar.addAction(self.shortcuts)
        # "Keyboard Shortcuts" in words would crowd the right end: its icon and a tooltip.
        button = toolbar.widgetForAction(self.shortcuts)
        if isinstance(button, QToolButton):
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
            button.setAccessibleName(QCoreApplication.translate("MainWindow", "Keyboard Shortcuts"))
        window.addToolBar(Qt.ToolBarArea.TopToolBarArea, toolbar)
        self.toolbar = toolbar

    def toolbar_buttons(self) -> list[QWidget]:
        """The toolbar's buttons, left to right."""
        actions = (self.new, self.refresh, self.delete, self.settings, self.shortcuts)
        buttons = [self.toolbar.widgetForAction(action) for action in actions]
        return [button for button in buttons if button is not None]
