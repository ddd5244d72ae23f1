"""The main window's widgets and actions: sidebar, filter, conversation pane, status line
(`ui.window.status_line`).

Only layout and user intents live here: each intent is a signal (`refresh_requested`,
`delete_requested`, …) that `ui.window.controller.WindowController` turns into engine calls. The
sidebar's keyboard and "⋯" button are `ui.sidebar.keys`; its scroll position across updates
is `ui.sidebar.scroll_anchor`. The actions, their shortcuts, icons and the toolbar are
`ui.window.actions`; the size that fits the screen is `ui.window.screen_fit`.
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING

from PySide6.QtCore import (
    QT_TRANSLATE_NOOP,
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QPoint,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QCloseEvent, QGuiApplication, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QLineEdit,
    QListView,
    QMainWindow,
    QMenu,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from ui.sidebar.delegate import SessionDelegate
from ui.sidebar.keys import SidebarKeys
from ui.sidebar.model import SessionListModel
from ui.sidebar.scroll_anchor import ScrollAnchor
from ui.text.plain import set_plain_tip
from ui.theme.style import is_dark
from ui.theme.stylesheet import stylesheet
from ui.window.actions import WindowActions
from ui.window.damage_banner import DamageBanner
from ui.window.screen_fit import DEFAULT_SIZE, fit_to_screen, initial_size
from ui.window.status_line import StatusLine

if TYPE_CHECKING:
    from ui.dialogs.shortcuts import ShortcutsDialog
    from ui.pane.pane import ConversationPane

FILTER_DEBOUNCE_MS = 250
# Source strings; shown through `self.tr()` (context "MainWindow"), so a translation
# (a .qm file in ui/translations/) changes them without code changes.
LOADING = str(QT_TRANSLATE_NOOP("MainWindow", "Loading conversations…"))
EMPTY = str(
    QT_TRANSLATE_NOOP("MainWindow", "No conversations yet.\nStart one with “New Conversation”.")
)
DAMAGED_STATUS = str(
    QT_TRANSLATE_NOOP("MainWindow", "The saved conversations are damaged: press Rebuild.")
)
DELETE_TIP = str(
    QT_TRANSLATE_NOOP("MainWindow", "Delete the selected conversations everywhere (Delete)")
)
OFFLINE_DELETE_TIP = str(
    QT_TRANSLATE_NOOP("MainWindow", "Can't delete while offline: the server must confirm a delete.")
)
OFFLINE_BANNER = str(
    QT_TRANSLATE_NOOP(
        "MainWindow",
        "You're offline. Showing the history saved on this device; sending and deleting come "
        "back when the server can be reached.",
    )
)
UNREACHED_BANNER = str(
    QT_TRANSLATE_NOOP(
        "MainWindow",
        "Can't reach {host}. Showing the history saved on this device; sending and deleting "
        "come back when the server can be reached.",
    )
)


class MainWindow(QMainWindow):
    """Sidebar on the left, the open conversation on the right, sync status at the bottom."""

    new_requested = Signal()
    refresh_requested = Signal()
    delete_requested = Signal()
    settings_requested = Signal()
    filter_changed = Signal(str)  # debounced
    export_requested = Signal(str)  # session id
    copy_id_requested = Signal(str)  # session id
    current_changed = Signal(object)  # session id or None
    closed = Signal()

    def __init__(self, model: SessionListModel | None = None, *, pane: bool = True) -> None:
        """`pane=False`: the conversation pane's place stays empty until `add_pane` (or the
        first use of `pane`), so that a start paints the sidebar before the pane's modules
        are even imported (`app.desktop`)."""
        super().__init__()
        self.setObjectName("mainWindow")
        self.setWindowTitle(self.tr("Converge"))
        screen = QGuiApplication.primaryScreen()
        self.resize(initial_size(screen.availableGeometry()) if screen else DEFAULT_SIZE)
        self.apply_color_scheme()
        hints = QGuiApplication.styleHints()
        hints.colorSchemeChanged.connect(lambda _scheme: self.apply_color_scheme())
        self.model = model or SessionListModel(self)

        self.filter = QLineEdit()
        self.filter.setObjectName("filter")
        self.filter.setPlaceholderText(self.tr("Search conversations"))
        self.filter.setClearButtonEnabled(True)
        self.filter.setAccessibleName(self.tr("Search conversations"))
        self._filter_timer = QTimer(self)
        self._filter_timer.setSingleShot(True)
        self._filter_timer.setInterval(FILTER_DEBOUNCE_MS)
        self._filter_timer.timeout.connect(lambda: self.filter_changed.emit(self.filter.text()))
        self.filter.textChanged.connect(lambda _text: self._filter_timer.start())

        self.list = QListView()
        self.list.setObjectName("sessionList")
        self.list.setAccessibleName(self.tr("Conversations"))
        self.list.setModel(self.model)
        self.delegate = SessionDelegate(self.list)
        self.list.setItemDelegate(self.delegate)
        self.list.setUniformItemSizes(True)
        # Lay out in batches: every inserted row restarts the layout from row 0, and a full
        # layout of a long list is a long step even with the row count answered in C++
        # (decision 0218); a batch is short, so none stalls a cold pass's UI thread.
        self.list.setLayoutMode(QListView.LayoutMode.Batched)
        self.list.setBatchSize(1000)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.list.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setMouseTracking(True)  # hover highlight and the row's "⋯" button
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._context_menu)
        self.sidebar_keys = SidebarKeys(
            self.filter,
            self.list,
            self.model,
            clear_filter=self.clear_filter,
            open_menu=self._open_row_menu,
        )
        selection = self.list.selectionModel()
        selection.currentChanged.connect(self._on_current)
        selection.selectionChanged.connect(lambda *_: self._update_actions())

        self.sidebar_empty = QLabel(self.tr(LOADING))
        self.sidebar_empty.setObjectName("sidebarEmpty")
        self.sidebar_empty.setTextFormat(
            Qt.TextFormat.PlainText
        )  # it may say why (a server's words)
        self.sidebar_empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.sidebar_empty.setWordWrap(True)
        self.sidebar_stack = QStackedWidget()
        self.sidebar_stack.addWidget(self.list)
        self.sidebar_stack.addWidget(self.sidebar_empty)
        # The list is shown before the first rows arrive, while it is still empty: showing it
        # after inserting the first rows would lay them all out at once.
        # These run in Python for every row of a delta: an insert does something only to an
        # empty list (it cannot change the selection); a removal may change either.
        self.model.rowsAboutToBeInserted.connect(self._show_list)
        self.model.rowsRemoved.connect(self._update_empty)
        self.model.modelReset.connect(self._update_empty)
        self.scroll_anchor = ScrollAnchor(self.list, self.model)

        self._offline = False
        self.offline_banner = QLabel(self.tr(OFFLINE_BANNER))
        self.offline_banner.setObjectName("offlineBanner")
        self.offline_banner.setTextFormat(Qt.TextFormat.PlainText)
        self.offline_banner.setWordWrap(True)
        self.offline_banner.setAccessibleName(self.tr("Offline"))
        self.offline_banner.hide()
        # A plain http:// server off this machine: said for as long as it is in use.
        self.insecure_banner = QLabel()
        self.insecure_banner.setObjectName("insecureBanner")
        self.insecure_banner.setTextFormat(Qt.TextFormat.PlainText)
        self.insecure_banner.setWordWrap(True)
        self.insecure_banner.setAccessibleName(self.tr("Connection not encrypted"))
        self.insecure_banner.hide()
        self.damage_banner = DamageBanner()  # a damaged mirror: its one way forward, Rebuild

        sidebar = QWidget()
        sidebar.setObjectName("sidebar")
        side_layout = QVBoxLayout(sidebar)
        side_layout.setContentsMargins(10, 10, 10, 0)
        side_layout.setSpacing(8)
        side_layout.addWidget(self.filter)
        side_layout.addWidget(self.sidebar_stack, 1)

        self._pane: ConversationPane | None = None
        # Where the pane goes, in the pane's colours meanwhile; built with the window, so that
        # the pane put in it later sits where it always did in the Tab order.
        self._pane_slot = QWidget()
        self._pane_slot.setObjectName("paneSlot")
        slot_layout = QVBoxLayout(self._pane_slot)
        slot_layout.setContentsMargins(0, 0, 0, 0)
        slot_layout.setSpacing(0)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setObjectName("splitter")
        splitter.addWidget(sidebar)
        splitter.addWidget(self._pane_slot)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([320, 780])
        splitter.setChildrenCollapsible(False)
        sidebar.setMinimumWidth(240)
        self.splitter = splitter
        central = QWidget()
        central_layout = QVBoxLayout(central)
        central_layout.setContentsMargins(0, 0, 0, 0)
        central_layout.setSpacing(0)
        central_layout.addWidget(self.insecure_banner)
        central_layout.addWidget(self.offline_banner)
        central_layout.addWidget(self.damage_banner)
        central_layout.addWidget(splitter, 1)
        self.setCentralWidget(central)

        self.status_line = StatusLine(self)
        self.status = self.status_line.status
        self.status_details = self.status_line.details_button
        self.where = self.status_line.where

        self._build_actions()
        self._set_tab_order()
        self._update_empty()
        self._update_actions()
        if pane:
            self.add_pane()

    @property
    def pane(self) -> ConversationPane:
        """The open conversation's pane (built here if `add_pane` has not been called)."""
        return self._pane or self.add_pane()

    @property
    def has_pane(self) -> bool:
        return self._pane is not None

    def add_pane(self) -> ConversationPane:
        """Build the conversation pane in its place (once)."""
        if self._pane is not None:
            return self._pane
        from ui.pane.pane import ConversationPane

        pane = ConversationPane()
        if self._offline:
            pane.set_offline(True)
        # The focus the window gave itself when shown (its first widget), not one moved since.
        focused = self.focusWidget()
        initial = focused is not None and focused is self._first_focus()
        layout = self._pane_slot.layout()
        assert layout is not None
        layout.addWidget(pane)
        pane.show()  # now, not at the layout's next turn: it may take the focus below
        # Qt put the pane at the end of the focus chain, where the widgets a window gains
        # later go; built with the window it came before the status line's button and the
        # toolbar, search box and list (`_set_tab_order`), so those go after it again.
        last = self.previousInFocusChain() or pane
        for widget in [self.status_details, *self._tab_chain()]:
            QWidget.setTabOrder(last, widget)
            last = widget
        if initial and (first := self._first_focus()) is not None:
            first.setFocus(Qt.FocusReason.TabFocusReason)  # the composer, as before
        self._pane = pane
        return pane

    def _first_focus(self) -> QWidget | None:
        """The widget a window shown gives the focus to: the first in its chain that takes it."""
        widget = self.nextInFocusChain()
        while widget is not None and widget is not self:
            policy = widget.focusPolicy()
            if policy & Qt.FocusPolicy.TabFocus and widget.isVisibleTo(self) and widget.isEnabled():
                return widget
            widget = widget.nextInFocusChain()
        return None

    # --- actions ------------------------------------------------------------------------

    def _build_actions(self) -> None:
        actions = WindowActions(self, self.list)
        self.actions_ = actions
        self.new_action, self.refresh_action = actions.new, actions.refresh
        self.delete_action, self.settings_action = actions.delete, actions.settings
        self.shortcuts_action, self.find_action = actions.shortcuts, actions.find
        self.quit_action = actions.quit
        self.toolbar = actions.toolbar
        self.new_action.triggered.connect(self.clear_filter)
        self.new_action.triggered.connect(self.new_requested)
        self.refresh_action.triggered.connect(self.refresh_requested)
        self.delete_action.setToolTip(self.tr(DELETE_TIP))
        self.delete_action.triggered.connect(self.delete_requested)
        self.settings_action.triggered.connect(self.settings_requested)
        self.find_action.triggered.connect(self._focus_filter)
        self.shortcuts_action.triggered.connect(self.show_shortcuts)
        actions.next.triggered.connect(lambda: self.sidebar_keys.step(forward=True))
        actions.previous.triggered.connect(lambda: self.sidebar_keys.step(forward=False))
        actions.icons.tint(self.palette())

    def toolbar_buttons(self) -> list[QWidget]:
        """The toolbar's buttons, left to right."""
        return self.actions_.toolbar_buttons()

    def show_shortcuts(self) -> ShortcutsDialog:
        """The list of every shortcut the window's actions have (non-modal, F1)."""
        from ui.dialogs.shortcuts import ShortcutsDialog, typing_keys

        dialog = ShortcutsDialog(self, typing_keys(enter_sends=self.pane.enter_sends))
        dialog.show()
        self.shortcuts_dialog = dialog
        return dialog

    def _set_tab_order(self) -> None:
        """Tab walks the toolbar, the search box, the list, then the pane (its buttons,
        the composer, Send). A QToolBar's buttons take no focus by default, which left
        New, Refresh, Delete and Settings out of reach of the keyboard."""
        chain = self._tab_chain()
        for button in self.toolbar_buttons():
            button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        for first, second in pairwise(chain):
            QWidget.setTabOrder(first, second)

    def _tab_chain(self) -> list[QWidget]:
        return [*self.toolbar_buttons(), self.filter, self.list]

    def apply_color_scheme(self) -> None:
        """Follow the theme (the system's light or dark scheme, or the one chosen) and the
        font size, also when they change while open: stylesheet, icons, quiet colours."""
        palette = QGuiApplication.palette()
        sheet = stylesheet(is_dark(palette), palette)  # the focus ring follows the palette
        if sheet != self.styleSheet():  # restyling itself sends a PaletteChange
            self.setStyleSheet(sheet)
        actions = getattr(self, "actions_", None)
        if actions is not None:
            actions.icons.tint(palette)

    def _context_menu(self, pos: QPoint) -> None:
        index = self.list.indexAt(pos)
        if not index.isValid() or not index.flags() & Qt.ItemFlag.ItemIsSelectable:
            return
        self._open_row_menu(index, pos)

    def _open_row_menu(self, index: QModelIndex, pos: QPoint) -> None:
        self.row_menu(index).popup(self.list.viewport().mapToGlobal(pos))

    def row_menu(self, index: QModelIndex) -> QMenu:
        """A row's menu (right click, or its "⋯" button): Delete, Export…, Copy ID."""
        selection = self.list.selectionModel()
        if not selection.isSelected(index):
            selection.setCurrentIndex(index, QItemSelectionModel.SelectionFlag.ClearAndSelect)
        session_id = str(index.data(SessionListModel.IdRole))
        menu = QMenu(self)
        menu.setObjectName("rowMenu")
        menu.setAccessibleName(self.tr("Conversation actions"))
        icons, palette = self.actions_.icons, self.palette()
        export = menu.addAction(icons.icon("download", palette), self.tr("Export…"))
        export.triggered.connect(lambda: self.export_requested.emit(session_id))
        copy = menu.addAction(icons.icon("copy", palette), self.tr("Copy ID"))
        for action in (export, copy):
            action.setIconVisibleInMenu(True)
        copy.triggered.connect(lambda: self.copy_id_requested.emit(session_id))
        menu.addSeparator()
        menu.addAction(self.delete_action)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        self.last_menu = menu
        return menu

    # --- the search box -----------------------------------------------------------------

    def clear_filter(self) -> None:
        """Empty the search box and show every conversation now (no debounce)."""
        if not self.filter.text():
            return
        # Not with its signals blocked: the box hides its ⊗ on its own textChanged.
        self.filter.clear()
        self._filter_timer.stop()  # started by that textChanged: the list comes back now
        self.filter_changed.emit("")

    def _focus_filter(self) -> None:
        self.filter.setFocus()
        self.filter.selectAll()

    # --- state --------------------------------------------------------------------------

    def selected_ids(self) -> list[str]:
        """The selected sessions, in sidebar order."""
        rows = sorted(index.row() for index in self.list.selectionModel().selectedRows())
        ids = [self.model.data(self.model.index(row, 0), SessionListModel.IdRole) for row in rows]
        return [i for i in ids if isinstance(i, str)]

    def current_id(self) -> str | None:
        value = self.list.selectionModel().currentIndex().data(SessionListModel.IdRole)
        return value if isinstance(value, str) else None

    def select_session(self, session_id: str) -> bool:
        """Make a session current and selected (after creating one, for instance)."""
        index = self.model.index_of(session_id)
        if not index.isValid():
            return False
        self.list.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect
        )
        self.list.scrollTo(index)
        return True

    def clear_selection(self) -> None:
        self.list.selectionModel().clearSelection()
        self.list.selectionModel().setCurrentIndex(
            QModelIndex(), QItemSelectionModel.SelectionFlag.NoUpdate
        )

    def set_status(
        self,
        text: str,
        *,
        error: bool = False,
        details: str = "",
        hold: bool = False,
        routine: bool = False,
    ) -> None:
        """The status line; `details` (technical words) sit behind a "Details" button;
        `hold` keeps an outcome readable against `routine` sync words (`StatusLine`)."""
        self.status_line.set_status(text, error=error, details=details, hold=hold, routine=routine)

    def set_offline(self, offline: bool, reason: str = "", unreached: str = "") -> None:
        """The offline banner, and sending and deleting disabled with a tooltip saying why;
        `unreached` names the host when the network is up but the server can't be reached."""
        words = self.tr(UNREACHED_BANNER).format(host=unreached) if unreached else None
        self.offline_banner.setText(words or self.tr(OFFLINE_BANNER))
        self.offline_banner.setVisible(offline)
        set_plain_tip(self.offline_banner, reason)  # the server's words
        self._offline = offline
        if self._pane is not None:  # else `add_pane` says it
            self._pane.set_offline(offline)
        self._update_actions()

    @property
    def offline(self) -> bool:
        return self._offline

    def set_insecure_warning(self, text: str | None) -> None:
        """The banner saying the server is reached unencrypted (`None`: hide it)."""
        self.insecure_banner.setText(text or "")
        self.insecure_banner.setVisible(bool(text))

    def set_where(self, account: str, server: str, profile: str = "") -> None:
        """Name the account, the server and the profile (title bar and status bar)."""
        self.status_line.set_where(account, server, profile)

    def show_damage(self, details: str) -> None:
        """A damaged mirror: the banner with Rebuild, the status line and the sidebar say so
        (never "Loading…" for ever); `details` (the path and SQLite's reason) sit behind
        Details and the banner's tooltip."""
        self.damage_banner.show_damage(details)
        self.set_status(DAMAGED_STATUS, error=True, details=details)
        self.set_placeholder(DAMAGED_STATUS)

    @property
    def damaged(self) -> bool:
        """The damage banner is up (until Rebuild succeeds)."""
        return not self.damage_banner.isHidden()

    def set_placeholder(self, text: str) -> None:
        """What the sidebar says when it has no row."""
        self.sidebar_empty.setText(self.tr(text))

    # --- selection and actions ----------------------------------------------------------

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        value = current.data(SessionListModel.IdRole) if current.isValid() else None
        self.current_changed.emit(value if isinstance(value, str) else None)
        self._update_actions()

    def _update_actions(self) -> None:
        selected = bool(self.list.selectionModel().selectedRows())
        self.delete_action.setEnabled(selected and not self._offline)
        if self._offline:
            self.delete_action.setToolTip(self.tr(OFFLINE_DELETE_TIP))
        else:
            self.delete_action.setToolTip(self.tr(DELETE_TIP))

    def _show_list(self, *_args: object) -> None:
        if self.sidebar_stack.currentWidget() is not self.list:
            self.sidebar_stack.setCurrentWidget(self.list)
            self._update_actions()

    def _update_empty(self, *_args: object) -> None:
        empty = self.model.rowCount() == 0
        self.sidebar_stack.setCurrentWidget(self.sidebar_empty if empty else self.list)
        self._update_actions()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (
            QEvent.Type.ApplicationPaletteChange,
            QEvent.Type.PaletteChange,
            QEvent.Type.ApplicationFontChange,
        ):
            self.apply_color_scheme()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        fit_to_screen(self)  # now with the window manager's frame (`ui.window.screen_fit`)

    def closeEvent(self, event: QCloseEvent) -> None:
        self.closed.emit()
        super().closeEvent(event)
